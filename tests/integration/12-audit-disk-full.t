#!/bin/sh
# SPDX-License-Identifier: ISC
# A full disk under the audit log: the run fails closed (74, nothing
# executed) instead of running unrecorded, and works again once there is
# room. The log directory is swapped for a 1 MiB tmpfs for the test.
. "$(dirname "$0")/lib.sh"
plan 6
D=$P/var/lib/sbx
cp -a "$D/audit.key" "$T/audit.key.saved"
mount -t tmpfs -o size=1m,mode=2750,uid="$(id -u _sbx)",gid="$(getent group sbx-audit | cut -d: -f3)" tmpfs "$D"
trap 'umount "$D" 2>/dev/null; rm -rf "$T"' EXIT
cp -a "$T/audit.key.saved" "$D/audit.key"
# a fresh log on the small disk, then fill the disk
sbx_run run -c 'print("first")'
check "a run works on the small log disk" [ "$rc" = 0 ]
dd if=/dev/zero of="$D/fill" bs=4096 2>/dev/null || true
sbx_run run -c 'print("ran")'
diag "$(cat "$T/err")"
check "disk full: exit 74 (the audit log failed)" [ "$rc" = 74 ]
check "disk full: the payload did not run" [ ! -s "$T/out" ]
check "disk full: one clear error about the audit log" grep -q "audit log unavailable" "$T/err"
sbx_run run --json -c 'print("ran")'
check "disk full, --json: exit 74, code audit_unavailable, one result of the one shape" \
	[ "$rc|$(jget outcome)|$(jget error.code)|$(jget schema_version)" = "74|sandbox_error|audit_unavailable|1.0" ]
rm -f "$D/fill"
sbx_run run -c 'print("again")'
check "room again: runs work" [ "$rc/$(cat "$T/out")" = "0/again" ]
finish
