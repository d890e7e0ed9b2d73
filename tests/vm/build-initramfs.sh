#!/bin/sh
# SPDX-License-Identifier: ISC
# Build the initramfs for the cgroup v2 VM test: busybox-static, sbx built
# for /usr and /etc, the shared libraries they need, small C payloads, and
# the in-VM test script. Usage: build-initramfs.sh SRCDIR OUT.cpio.gz
set -eu
src=$1 out=$2
work=$(mktemp -d /tmp/sbx-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
b=build-vm

make -C "$src" -s --no-print-directory B=$b PREFIX=/usr SYSCONFDIR=/etc LOCALSTATEDIR=/var \
	LIBEXECDIR=/usr/libexec all >/dev/null
make -C "$src" -s --no-print-directory B=$b PREFIX=/usr SYSCONFDIR=/etc LOCALSTATEDIR=/var \
	LIBEXECDIR=/usr/libexec DESTDIR="$root" install-files >/dev/null

mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/root" \
	"$root/usr/lib/sbx-vm" "$root/etc" "$root/var/lib/sbx" "$root/home/tester" "$root/run"
cp /bin/busybox "$root/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done

# every shared library the programs load, at the same path
for bin in "$root"/usr/bin/sbx "$root"/usr/bin/sbx-audit "$root"/usr/libexec/sbx/sbx-helper "$root"/usr/libexec/sbx/sbx-relay; do
	ldd "$bin" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	[ -n "$lib" ] || continue
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# merged-/usr hosts: the loader's path is under /lib64 -> usr/lib64 or /lib
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$root/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }

for c in "$src"/tests/vm/payloads/*.c; do
	cc -static -O2 -pthread -o "$root/usr/lib/sbx-vm/$(basename "$c" .c)" "$c"
done

cat > "$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
_sbx:x:100:100:sbx audit log:/nonexistent:/bin/false
_sbxnet:x:103:103:sbx network relay:/nonexistent:/bin/false
_sbxsign:x:104:104:sbx audit log signer:/nonexistent:/bin/false
tester:x:1000:101::/home/tester:/bin/sh
P
cat > "$root/etc/group" <<'G'
root:x:0:
_sbx:x:100:
sbx:x:101:tester
sbx-audit:x:102:
_sbxnet:x:103:
_sbxsign:x:104:
G
printf 'passwd: files\ngroup: files\n' > "$root/etc/nsswitch.conf"
cp "$src/tests/vm/policy-vm.policy" "$root/etc/sbx/policies.d/vm.policy"
cp "$src/tests/vm/init" "$root/init"
cp "$src/tests/vm/init2" "$root/init2"
cp "$src/tests/vm/outcomes.t" "$src/tests/vm/delegation.t" "$src/tests/vm/delegation-attack.t" \
	"$src/tests/vm/allocation.t" "$root/usr/lib/sbx-vm/"
chmod 755 "$root/init" "$root/init2" "$root/usr/lib/sbx-vm/"*.t
chown 1000:101 "$root/home/tester"
chown root:101 "$root/usr/libexec/sbx/sbx-helper"
chmod 4754 "$root/usr/libexec/sbx/sbx-helper"
chown 100:102 "$root/var/lib/sbx"
chmod 2750 "$root/var/lib/sbx"
mkdir -p "$root/var/lib/sbx-signer"
chown 104:104 "$root/var/lib/sbx-signer"
chmod 0700 "$root/var/lib/sbx-signer"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
