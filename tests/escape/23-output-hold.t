#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 23: a finished run's END record held back by the caller's
# stdout (issue 11, finding 2). The caller's fd 1 is an open file
# description of a file on its own FUSE mount (made in an unprivileged user
# namespace, tests/escape/bin/fusehold -l) whose position and inode locks a
# write stuck in a page fault holds: every write(2) to it sleeps
# uninterruptibly, whoever makes it, for as long as the caller likes. The
# caller runs sbx with that stdout and a payload that prints. The END
# record must be written all the same, the privileged processes
# (supervisor root, recorder _sbx) must be gone within seconds, and once
# the caller lets its FUSE server go, its own client finishes normally.
#
# Defence checked by removing it: protocol v2 (the recorder sends output as
# frames on the result socket with MSG_DONTWAIT and writes END whatever the
# client does; only the client, as the caller, writes to fd 1). Main before
# it wrote the payload's output to the caller's fd 1 from the recorder
# before END, guarded by a timer that cannot interrupt an uninterruptible
# sleep: the recorder stayed in D state, no END was written and the
# supervisor waited for it: tests 1 and 2 failed.
. "$(dirname "$0")/lib.sh"
plan 4
[ -x "$BIN/fusehold" ] || { echo "Bail out! $BIN/fusehold is not installed"; exit 1; }
sbx_run run -c pass # the audit log exists from here on
ids() { "$AUDIT" list --limit 0 2>/dev/null | awk 'NR > 1 { print $1 }' | sort; }
ids > "$T/before"
# the new run's id, once it has an END record
ended() {
	id=$(ids | comm -13 "$T/before" - | head -1)
	[ -n "$id" ] && "$AUDIT" show "$id" 2>/dev/null | grep -q "^END "
}
run_as sbxtest "$BIN/fusehold" -l 1 -- "$SBX" run -c 'print("x" * 100000); print("done")' \
	2>"$T/hold.err" </dev/null &
client=$!
server=
for _ in $(seq 100); do
	server=$(sed -n 's/^fusehold: server \([0-9][0-9]*\)$/\1/p' "$T/hold.err")
	[ -n "$server" ] && break
	sleep 0.1
done
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$T"' EXIT
# the run's END, whatever the client does: wait for it (30 s at most)
for _ in $(seq 300); do ended && break; sleep 0.1; done
check "the run is in the audit log with its END while the caller's stdout is held" ended
# the client's descendants (other users' runs may be going on): the
# supervisor (root) and the recorder (_sbx) are its helper child's tree; a
# supervisor that has exited stays a zombie until the stuck client reaps
# it, as the child of any setuid program does (it holds nothing)
helpers() {
	ps -eo pid=,ppid=,user=,stat=,wchan:20=,args= | awk -v top="$client" '
		{ pp[$1] = $2; line[$1] = $0 }
		END { for (p in pp) { q = pp[p]; while (q > 1 && q != top) q = pp[q]
			if (q == top && line[p] ~ /sbx-(helper|recorder)/ && split(line[p], f) && f[4] !~ /^Z/) print line[p] } }'
}
for _ in $(seq 100); do [ -z "$(helpers)" ] && break; sleep 0.1; done
diag "$(helpers)"
check "no supervisor or recorder left (none pinned in D state)" [ -z "$(helpers)" ]
check "the FUSE hold is still in place (the attack was real)" kill -0 "$server"
kill "$server"
server=
wait "$client"
rc=$?
check "once the caller lets go, its client ends (exit $rc)" [ "$rc" -lt 126 ]
finish
