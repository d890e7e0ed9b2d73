#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 19: the caller's own cgroups (issue 11, finding 1). A caller
# whose processes live in a cgroup delegated to it can kill, freeze or
# migrate every process in there whatever its uid: cgroup.kill,
# cgroup.freeze and cgroup.procs on cgroup v2 (no uid check, only write
# access to the files and to the common ancestor), freezer.state on v1.
# The client starts the helper in the caller's cgroup.
#
# Set-up, as systemd and libcgroup make delegations: in the v2 hierarchy
# (this host's /sys/fs/cgroup/unified, or /sys/fs/cgroup on a v2-only
# host), a cgroup chowned to sbxtest with its cgroup.procs,
# cgroup.subtree_control and cgroup.threads (Delegate=yes, systemd's
# docs/CGROUP_DELEGATION.md); in the v1 freezer hierarchy, one chowned
# with every file (cgconfig's "admin" permissions). Root places the client
# in sbxtest's own child cgroups (as systemd places a session), then
# drops to sbxtest and starts `sbx run`. As sbxtest, mid-run:
#   kill    echo 1 > cgroup.kill             (v2)
#   freeze  echo 1 > cgroup.freeze           (v2)
#   migrate the supervisor's pid into a frozen cgroup of its own (v2)
#   v1      echo FROZEN > freezer.state      (v1 freezer)
# No helper process (root or _sbx) may be in a cgroup the caller can write;
# the attacks must fail or reach only the caller's own processes (the
# client); every run ends by its own limits and gets its END record.
# tests/vm/delegation-attack.t does the same on a v2-only kernel, with
# controllers (the issue's "reproduce under the v2 VM").
#
# Defence checked by removing it: leave_caller_cgroups() (helper/main.c)
# not called, which is main before the fix: the supervisor and the
# recorder stayed in the caller's cgroups: test 1 failed; cgroup.kill
# killed both (START without END, the run's v1 cgroups left until the next
# run reaped them): tests 2-3 failed; cgroup.freeze, the migration into a
# frozen cgroup and freezer.state held the supervisor while the payload ran
# past its 3 s wall time: tests 4-7 and 9 failed (test 8 passes either way:
# once thawed, the run ends as a timeout). Test 11 checks that each client
# really ran where the attack was aimed.
. "$(dirname "$0")/lib.sh"
plan 11
uid=$(id -u sbxtest)
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then V2=/sys/fs/cgroup; else V2=/sys/fs/cgroup/unified; fi
if [ ! -e "$V2/cgroup.kill" ] && ! ls "$V2"/*/cgroup.kill >/dev/null 2>&1 && [ ! -d "$V2" ]; then
	echo "1..0 # SKIP no cgroup v2 hierarchy with cgroup.kill"; exit 0
fi
D=$V2/sbx-esc-$$        # delegated to sbxtest, as user@UID.service is
F=/sys/fs/cgroup/freezer/sbx-esc-$$
cleanup() {
	for c in "$D"/* "$F"; do
		[ -d "$c" ] || continue
		echo 0 > "$c/cgroup.freeze" 2>/dev/null; echo THAWED > "$c/freezer.state" 2>/dev/null
	done
	sleep 0.2
	for c in "$D"/* "$D" "$F"; do
		[ -d "$c" ] || continue
		for p in $(cat "$c/cgroup.procs" 2>/dev/null); do echo "$p" > "$(dirname "$c")/cgroup.procs" 2>/dev/null; done
		rmdir "$c" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$D"
chown sbxtest "$D" "$D/cgroup.procs" "$D/cgroup.subtree_control" "$D/cgroup.threads"
as_caller() { run_as sbxtest sh -c "$1"; }
for c in kill freeze migrate jail; do as_caller "mkdir $D/$c"; done
as_caller "echo 1 > $D/jail/cgroup.freeze"
if [ -d /sys/fs/cgroup/freezer ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
	mkdir "$F" && chown -R sbxtest "$F"
fi

# start CG -- ARGS: `sbx run ARGS` as sbxtest, placed by root in CG (any
# name: python writes the pid), as systemd places a session
start() {
	for i in $(seq 100); do no_helpers && break; sleep 0.1; done # the last stage's run has ended
	cg=$1
	shift 2
	/usr/bin/python3 -c 'import os, sys
fd = os.open(os.path.join(sys.argv[1], "cgroup.procs"), os.O_WRONLY)
os.write(fd, str(os.getpid()).encode())
os.close(fd)
os.execvp("setpriv", ["setpriv", "--reuid=sbxtest", "--regid=sbxtest", "--init-groups", "env", "-i",
          "PATH=/usr/bin:/bin"] + sys.argv[2:])' "$cg" "$SBX" run --json "$@" > "$T/out.$cur" 2>"$T/err.$cur" </dev/null &
	echo $! > "$T/pid.$cur"
}
# helpers: the sbx-helper* processes of this prefix: pid uid cgroup-lines
# (one ls for all of /proc: a readlink each is slow on a busy host)
helpers() {
	for p in $(ls -l /proc/[0-9]*/exe 2>/dev/null | awk -v p="$P/libexec/sbx/sbx-" \
		'index($NF, p) == 1 {split($(NF-2), a, "/"); print a[3]}'); do
		echo "$p $(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null) $(tr '\n' ' ' < "/proc/$p/cgroup" 2>/dev/null)"
	done
}
no_helpers() { [ -z "$(helpers)" ]; }
# wait_run CG: the run has started (supervisor, recorder, sandbox init)
# and its client is in CG (else the attack would prove nothing)
wait_run() {
	for i in $(seq 100); do
		[ "$(helpers | awk '$2 == 0' | wc -l)" -ge 1 ] && [ "$(helpers | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	c=$(cat "$T/pid.$cur")
	for i in $(seq 50); do grep -q "/${1##*/}\$" "/proc/$c/cgroup" 2>/dev/null && break; sleep 0.1; done
	grep -q "/${1##*/}\$" "/proc/$c/cgroup" 2>/dev/null || { placed="$placed $cur"; diag "$cur: client $c: $(tr "\n" " " < /proc/$c/cgroup 2>&1) $(cat $T/err.$cur)"; }
}
supervisor() { helpers | awk '$2 == 0 {print $1; exit}'; }
id_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/out.$1" 2>/dev/null ||
	"$AUDIT" list --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])'; }
loop='import time
time.sleep(30)
print("ran out")'

# kill: cgroup.kill on the caller's cgroup mid-run
placed=
cur=kill
start "$D/kill" -- --timeout 6s -c "$loop"
wait_run "$D/kill"
helpers > "$T/where"
diag "$(cat "$T/where")"
check "no helper process in a cgroup the caller owns" sh -c '! grep -q "sbx-esc-" "$1"' _ "$T/where"
as_caller "echo 1 > $D/kill/cgroup.kill"
sleep 0.5
wait "$(cat "$T/pid.kill")" 2>/dev/null
for i in $(seq 80); do [ -z "$(helpers)" ] && break; sleep 0.1; done
id=$("$AUDIT" list --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])')
check "cgroup.kill: only the client died; the supervisor ended the run (END recorded)" audited "$id"
check "cgroup.kill: no run cgroup left" no_cgroup_of "$id"

# freeze: cgroup.freeze on the caller's cgroup mid-run
cur=freeze
start "$D/freeze" -- --timeout 3s -c "$loop"
wait_run "$D/freeze"
as_caller "echo 1 > $D/freeze/cgroup.freeze"
sleep 7
check "cgroup.freeze: the payload did not outlive its wall time" no_helpers
id=$("$AUDIT" list --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])')
check "cgroup.freeze: the run is recorded as a timeout" audited "$id" timeout
echo 0 > "$D/freeze/cgroup.freeze"
wait "$(cat "$T/pid.freeze")" 2>/dev/null

# migrate: the supervisor into a frozen cgroup of the caller's
cur=migrate
start "$D/migrate" -- --timeout 3s -c "$loop"
wait_run "$D/migrate"
sup=$(supervisor)
as_caller "echo $sup > $D/jail/cgroup.procs" 2>"$T/mig.err"; mrc=$?
diag "migration: rc $mrc $(cat "$T/mig.err") sup=$sup" "$(helpers)"
check "migration of the supervisor by the caller refused" [ "$mrc" != 0 ]
sleep 7
check "migration: the payload did not outlive its wall time" no_helpers
echo 0 > "$D/jail/cgroup.freeze"; sleep 0.3
wait "$(cat "$T/pid.migrate")" 2>/dev/null
check "migration: the run is recorded as a timeout" audited "$(id_of migrate)" timeout

# v1: freezer.state of a delegated v1 freezer cgroup
if [ -d "$F" ]; then
	cur=v1
	start "$F" -- --timeout 3s -c "$loop"
	wait_run "$F"
	as_caller "echo FROZEN > $F/freezer.state"
	sleep 7
	check "v1 freezer.state: the payload did not outlive its wall time" no_helpers
	echo THAWED > "$F/freezer.state"
	wait "$(cat "$T/pid.v1")" 2>/dev/null
else
	ok 0 "v1 freezer.state: # SKIP no v1 freezer hierarchy"
fi
for i in $(seq 50); do [ -z "$(helpers)" ] && break; sleep 0.1; done
check "no helper process left" no_helpers
check "every attacked client ran in the caller's cgroup ($placed)" [ -z "$placed" ]
finish
