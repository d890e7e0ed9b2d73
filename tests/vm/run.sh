#!/bin/sh
# SPDX-License-Identifier: ISC
# `make check-vm`: boot Debian's kernel under qemu (TCG: /dev/kvm here
# cannot boot a stock kernel) with cgroup_no_v1=all and print the in-VM
# TAP. Skips (TAP "1..0 # SKIP") without qemu or a kernel image.
set -u
src=${SBX_SRCDIR:?}
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
if ! command -v qemu-system-x86_64 >/dev/null || [ -z "$kernel" ] || [ ! -x /bin/busybox ]; then
	echo "1..0 # SKIP qemu-system-x86_64, a kernel in /boot or busybox-static missing"
	exit 0
fi
img=$(mktemp /tmp/sbx-vm-initrd.XXXXXX)
log=$(mktemp /tmp/sbx-vm-log.XXXXXX)
trap 'rm -f "$img" "$log"' EXIT
sh "$src/tests/vm/build-initramfs.sh" "$src" "$img" || { echo "1..0 # SKIP initramfs build failed"; exit 1; }
timeout 600 qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$img" \
	-append "console=ttyS0 cgroup_no_v1=all panic=-1 quiet loglevel=3 rdinit=/init" > "$log" 2>&1
tr -d '\r' < "$log" | sed -n '/SBX-VM-TAP-BEGIN$/,/^SBX-VM-TAP-END$/p' | sed '1d;$d' > "$log.tap"
if [ ! -s "$log.tap" ]; then
	echo "1..1"; echo "not ok 1 - the VM printed no TAP"; tail -30 "$log" | sed 's/^/# /'
	rm -f "$log.tap"; exit 1
fi
cat "$log.tap"
tr -d '\r' < "$log" | grep '^# root: ' || true
rm -f "$log.tap"
