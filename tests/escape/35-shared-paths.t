#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 35: a policy's ro/rw path in a directory everyone may write
# (/var/tmp, which sbx.policy(5) suggests for shared data), attacked by
# another local user who is not even in group sbx (the review after issue
# 11). Such a user can create the policy's directory before the
# administrator does (a plant: the caller's payload then reads the
# attacker's files and writes its results where the attacker reads them),
# or swap it with a symbolic link to the caller's private directory while
# runs start (a rename race: the bind then follows the link). And a policy
# may spell a path so that the checks against the sandbox's own mounts
# miss it ("/etc/" binds the host's /etc over the generated passwd and
# hosts). Checked:
# - the planted directory is refused with one line naming the path and why
#   (exit 125), and nothing of the run is written into it;
# - a directory of root's or of the caller's own in /var/tmp is bound and
#   works (rw: the payload's file appears on the host);
# - a path through a symbolic link is refused;
# - 20 runs against a racer exchanging a planted directory and a symbolic
#   link to the caller's 0700 directory never bind it (nothing written
#   there), each run either refused or run without it;
# - "/etc/" and "//etc" are refused as not normalised (also in
#   tests/unit/test_policy.c).
#
# Defences checked by removing them:
# - the ownership check of open_source() (helper/mounts.c: in a directory
#   everyone may write, an entry of root's or the caller's only) skipped:
#   the planted directory was bound, the payload wrote into it (tests 1, 2
#   failed) and all 20 raced runs wrote into the planted directory (test 6
#   failed). Test 5 still held: the path is opened once, component by
#   component without following a link, and that object is what is
#   mounted (open_tree(2) by the supervisor, move_mount(2) in the sandbox);
#   with the old lstat() then mount(path) the reviewer saw the victim
#   directory bound in 6 of 30 runs.
# - normalised() (common/policy.c) reduced to the old checks: "/etc/" was
#   accepted and the payload read the host's /etc/passwd (test 7 failed;
#   the unit test policy sandbox_paths_refused fails the same way).
. "$(dirname "$0")/../integration/lib.sh"
plan 7
POL=$P/etc/sbx/policies.d
V=/var/tmp/sbx-esc35.$$
cleanup() {
	[ -n "${racer:-}" ] && kill "$racer" 2>/dev/null
	rm -rf "$V".* "$POL/esc35-"*.policy "$T"
}
trap cleanup EXIT
# policy NAME RO RW: the default policy with these paths added
policy() {
	sed -e "s|^ro *=\(.*\)|ro =\1 $2|" -e "s|^rw *=.*|rw = $3|" "$POL/default.policy" >"$POL/esc35-$1.policy"
	chmod 0644 "$POL/esc35-$1.policy"
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# 1. a plant: nobody makes the directory first
as_nobody mkdir -m 0777 "$V.plant"
echo planted >"$V.plant/config.txt" && chown nobody "$V.plant/config.txt"
policy plant "" "$V.plant"
sbx_run run --policy esc35-plant -c 'print(open("'"$V.plant"'/config.txt").read()); open("'"$V.plant"'/result.txt", "w").write("r")'
diag "plant: rc=$rc $(cat "$T/err")"
check "a directory another user made in /var/tmp: refused (125) in one line naming it and why" \
	sh -c '[ "$1" = 125 ] && [ "$(wc -l <"$2")" = 1 ] && grep -q "policy path $3 is not bound: in a directory everyone may write, it belongs to another user" "$2"' \
	_ "$rc" "$T/err" "$V.plant"
check "... and nothing of the run was written into it" [ ! -e "$V.plant/result.txt" ]

# 2. root's and the caller's own directories are fine
mkdir -m 0755 "$V.root" && echo shared-data >"$V.root/data.txt"
run_as sbxtest mkdir -m 0700 "$V.mine"
policy own "$V.root" "$V.mine"
sbx_run run --policy esc35-own -c 'print(open("'"$V.root"'/data.txt").read().strip()); open("'"$V.mine"'/out.txt", "w").write("mine")'
check "root's directory (ro) and the caller's own (rw) in /var/tmp: bound, the payload reads and writes them" \
	sh -c '[ "$1" = 0 ] && grep -qx shared-data "$2" && [ "$(cat "$3/out.txt")" = mine ]' _ "$rc" "$T/out" "$V.mine"

# 3. a symbolic link on the way
mkdir -m 0755 "$V.real" && mkdir "$V.real/sub" && ln -s "$V.real" "$V.link"
policy link "$V.link/sub" ""
sbx_run run --policy esc35-link -c 'print("RAN")'
check "a path through a symbolic link: refused, naming it" \
	sh -c '[ "$1" = 125 ] && grep -q "not bound: a component is a symbolic link" "$2" && ! grep -q RAN "$3"' _ "$rc" "$T/err" "$T/out"

# 4. the race: nobody exchanges its directory with a link to the caller's
# private directory while the caller's runs start
run_as sbxtest mkdir -m 0700 "$V.victim"
as_nobody mkdir -m 0777 "$V.race"
as_nobody ln -s "$V.victim" "$V.swap"
policy race "" "$V.race"
as_nobody python3 -c '
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
end = time.time() + 60
while time.time() < end:
    libc.renameat2(-100, a, -100, b, 2)   # RENAME_EXCHANGE
' "$V.race" "$V.swap" &
racer=$!
: >"$T/rcs"
for i in $(seq 20); do
	sbx_run run --policy esc35-race -c 'open("'"$V.race"'/written-'"$i"'", "w").write("x")'
	echo "$rc" >>"$T/rcs"
done
kill "$racer" 2>/dev/null; wait "$racer" 2>/dev/null; racer=
diag "race: exit statuses $(sort "$T/rcs" | uniq -c | tr '\n' ' '); victim holds: $(ls -A "$V.victim" | tr '\n' ' ')"
check "20 runs against the racer: the caller's private directory was never bound (nothing written there)" \
	[ -z "$(ls -A "$V.victim")" ]
check "... each run refused (125) or run without the path (1: the write failed)" \
	sh -c '! grep -vxq "125\|1" "$1"' _ "$T/rcs"

# 5. another spelling of a sandbox path
policy spell "/etc/" ""
sbx_run run --policy esc35-spell -c 'print(len(open("/etc/passwd").read().splitlines()))'
check "ro = /etc/ is refused as not normalised (it would bind the host's /etc over the sandbox's own)" \
	sh -c '[ "$1" = 125 ] && grep -q "esc35-spell.policy:[0-9]*: ro: ./etc/. is not a normalised absolute path" "$2"' _ "$rc" "$T/err"
finish
