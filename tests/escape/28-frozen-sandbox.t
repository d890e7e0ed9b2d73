#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 28: privileged processes held by the caller's frozen
# processes. On cgroup v1 an administrator may delegate a freezer cgroup to
# a user (chown); the sandbox init and the payload run as the caller's uid,
# so the caller can move them into it and freeze it, and a frozen task does
# not die of SIGKILL until thawed. The supervisor (root) waited for the
# sandbox init's pidfd with no bound after its SIGKILL, wait_timeout()
# called a blocking waitpid(2) after one, and the recorder (_sbx) waited for
# the payload's pipes without end: all of them stayed past the wall-time
# limit and END waited until the caller thawed. Now every such wait is
# bounded (HELPER_REAP_MS, REC_TAIL_MS): the run ends as sandbox_error with
# an error that says why, END is written, the supervisor, recorder and
# signer exit, and what is left is the caller's own frozen processes, which
# die of their pending SIGKILL when thawed. The test makes its own freezer
# cgroup, chowns it to sbxtest, and removes it at the end (root test).
#
# Defence checked by removing it: the HELPER_REAP_MS bound in supervise()
# (helper/main.c): the supervisor polled the pidfd of the frozen sandbox
# init forever: the client had no result 40 s after the 3 s wall-time
# limit, the supervisor, recorder and signer were still there, no END:
# tests 2-5 failed (test 1, the freeze itself, and 6-7 pass either way).
. "$(dirname "$0")/lib.sh"
plan 7

FZ=/sys/fs/cgroup/freezer/sbx-escape28-$$
if [ ! -d /sys/fs/cgroup/freezer ] || ! mkdir "$FZ"; then
	echo "1..0 # SKIP no cgroup v1 freezer hierarchy"
	exit 0
fi
chown sbxtest:sbxtest "$FZ" "$FZ/tasks" "$FZ/cgroup.procs" "$FZ/freezer.state"
cleanup() {
	echo THAWED > "$FZ/freezer.state" 2>/dev/null
	for i in $(seq 100); do [ -z "$(cat "$FZ/cgroup.procs" 2>/dev/null)" ] && break; sleep 0.1; done
	rmdir "$FZ" 2>/dev/null
}

run_as sbxtest "$SBX" run --json --timeout 3 -c 'import time
print("UP", flush=True)
time.sleep(60)' > "$T/out" 2>"$T/err" </dev/null &
client=$!
# the run's processes: the sandbox init and payload (sbxtest, in their own
# pid namespace) under the client
sup= sandbox=
for i in $(seq 100); do
	sup=$(ps -o pid= --ppid $client | tr -d ' ')
	[ -n "$sup" ] && sandbox=$(python3 - "$sup" <<'PY'
import os, sys
def st(p):
    try: return dict(l.rstrip("\n").split(":\t", 1) for l in open("/proc/%s/status" % p) if ":\t" in l)
    except OSError: return {}
out = []
todo = [sys.argv[1]]
while todo:
    p = todo.pop()
    for q in os.listdir("/proc"):
        if q.isdigit() and st(q).get("PPid") == p:
            todo.append(q)
            s = st(q)
            if len(s.get("NSpid", "").split()) == 2:
                out.append(q)
print(" ".join(out) if len(out) >= 2 else "")
PY
)
	[ -n "$sandbox" ] && break
	sleep 0.1
done
# the supervisor: the sandbox init's parent
for p in $sandbox; do
	pp=$(ps -o ppid= -p $p | tr -d ' ')
	case " $sandbox " in *" $pp "*) ;; *) sup=$pp ;; esac
done
rec=$(ps -o pid=,uid= --ppid "${sup:-1}" | awk -v u="$(id -u _sbx)" '$2 == u { print $1 }')
sig=$(ps -o pid=,uid= --ppid "${rec:-1}" | awk -v u="$(id -u _sbxsign)" '$2 == u { print $1 }')
diag "supervisor $sup, recorder $rec, signer $sig, sandbox $sandbox"
for p in $sandbox; do run_as sbxtest sh -c "echo $p > $FZ/cgroup.procs"; done
run_as sbxtest sh -c "echo FROZEN > $FZ/freezer.state"
sleep 1
diag "freezer $(cat "$FZ/freezer.state"): $(cat "$FZ/cgroup.procs" | tr '\n' ' ')"
# the client's result, 3 s wall time + the bounds; 40 s at most
for i in $(seq 400); do kill -0 $client 2>/dev/null || break; sleep 0.1; done
kill -0 $client 2>/dev/null && { diag "the client still waits"; }
alive() { for p; do [ -d /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status && return 0; done; return 1; }
check "the caller froze the sandbox init and the payload" \
	[ -n "$sandbox" ] && [ "$(sort "$FZ/cgroup.procs" | tr '\n' ' ')" = "$(echo $sandbox | tr ' ' '\n' | sort | tr '\n' ' ')" ]
check "the client got its result within 40 s" sh -c '! kill -0 $1 2>/dev/null' _ $client
diag "$(pj "$T/out" 'd["outcome"], d["error"]')"
says_why() { [ "$(pj "$T/out" 'd["outcome"]')" = sandbox_error ] && grep -q "did not die within" "$T/out"; }
check "outcome sandbox_error, the error says why" says_why
gone() { [ -n "$sup" ] && [ -n "$rec" ] && [ -n "$sig" ] && ! alive $sup $rec $sig; }
check "the supervisor, the recorder and its signer are gone" gone
id=$(jget id)
check "the run is audited with END" audited "$id" sandbox_error
left=
for p in $(cat "$FZ/cgroup.procs"); do [ "$(stat -c %U /proc/$p)" = sbxtest ] || left="$left $p"; done
check "what is left is the caller's own frozen processes ($left)" [ -z "$left" ]
kill $client 2>/dev/null
cleanup
check "thawed, they die of their SIGKILL; the test's freezer cgroup is removed" [ ! -d "$FZ" ]
finish
