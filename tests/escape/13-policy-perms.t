#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 13: a policy (or the configuration) that the caller could
# have written is refused: a policy file owned by the caller, writable by
# group or others; the policy directory owned by the caller, writable by
# others, sticky and world-writable (like /tmp: allowed only above the last
# directory), or a symlink; a parent directory with the same faults; a
# policy that is a symlink; sbx.conf writable by others. Each refusal is
# exit 125 with exactly one line on stderr naming the path and the rule,
# nothing runs, and nothing is audited (no policy was accepted).
# (Moved here from tests/integration/06-refusals.t and extended.)
#
# Defence checked by removing it: with dir_ok() in helper/load.c always
# accepting, the caller-owned, world-writable, sticky and group-writable
# policy directory and the three faulty parent directories ran the code
# (tests 5-8, 10-12 and 14 failed; the file checks and the no-symlink walk
# still held).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 14
E=$P/etc/sbx
POL=$E/policies.d
restore() {
	rm -f "$POL/mine.policy" "$POL/link.policy"
	[ -L "$POL" ] && rm -f "$POL" && mv "$E/policies.real" "$POL"
	chown root:root "$P" "$P/etc" "$E" "$POL" "$E/sbx.conf"
	chmod 0755 "$P" "$P/etc" "$E" "$POL"
	chmod 0644 "$E/sbx.conf"
}
trap 'restore; rm -rf "$T"' EXIT
before=$(runs_count)
cp "$POL/default.policy" "$POL/mine.policy"
chmod 0644 "$POL/mine.policy"

# refused CASE WANT: run with policy "mine"; exit 125, one line on stderr
# that contains WANT, and the marker code never ran.
refused() {
	sbx_run run --policy mine -c 'print("RAN")'
	diag "$1: $(cat "$T/err")"
	check "$1: refused in one line naming the fault" \
		sh -c '[ "$1" = 125 ] && [ "$(grep -c . "$2")" = 1 ] && grep -qF -- "$3" "$2" && ! grep -q RAN "$4"' \
		_ "$rc" "$T/err" "$2" "$T/out"
}

chown sbxtest "$POL/mine.policy"
refused "policy owned by the caller" "mine.policy: must be owned by root and not writable by group or others (owner uid $(id -u sbxtest)"
chown root "$POL/mine.policy"; chmod 0664 "$POL/mine.policy"
refused "group-writable policy" "mine.policy: must be owned by root and not writable by group or others (owner uid 0, mode 0664)"
chmod 0646 "$POL/mine.policy"
refused "world-writable policy" "(owner uid 0, mode 0646)"
chmod 0644 "$POL/mine.policy"
ln -s "$POL/default.policy" "$POL/link.policy"
sbx_run run --policy link -c 'print("RAN")'
check "policy that is a symlink (to a good file): refused, symlinks not followed" \
	sh -c '[ "$1" = 125 ] && [ "$(grep -c . "$2")" = 1 ] && grep -q "link.policy: Too many levels of symbolic links" "$2"' _ "$rc" "$T/err"
rm -f "$POL/link.policy"

dirfault="directory must be owned by root and not writable by others"
chown sbxtest "$POL"
refused "policy directory owned by the caller" "$POL: $dirfault"
chown root "$POL"; chmod 0777 "$POL"
refused "world-writable policy directory" "$POL: $dirfault"
chmod 1777 "$POL"
refused "sticky world-writable policy directory (the last one)" "$POL: $dirfault"
chmod 0775 "$POL"; chgrp sbx "$POL"
refused "policy directory writable by group sbx" "$POL: $dirfault"
chmod 0755 "$POL"; chgrp root "$POL"
mv "$POL" "$E/policies.real"; ln -s policies.real "$POL"
refused "policy directory that is a symlink" "policies.d: Not a directory (symlinks are not followed)"
rm -f "$POL"; mv "$E/policies.real" "$POL"
chown sbxtest "$E"
refused "parent directory owned by the caller" "$E: $dirfault"
chown root "$E"; chmod 0777 "$E"
refused "world-writable parent directory" "$E: $dirfault"
chmod 0755 "$E"; chmod 0777 "$P/etc"
refused "world-writable grandparent directory" "$P/etc: $dirfault"
chmod 0755 "$P/etc"
chmod 0666 "$E/sbx.conf"
refused "sbx.conf writable by others" "sbx.conf: must be owned by root and not writable by group or others (owner uid 0, mode 0666)"
chmod 0644 "$E/sbx.conf"
check "none of the refusals was audited or ran (no policy was accepted)" [ "$(runs_count)" = "$before" ]
finish
