#!/bin/sh
# SPDX-License-Identifier: ISC
# Live sessions (issue 17): how a session ends, and that each end is
# recorded with why, the call that was running included.
#
# - a call past the memory limit ends the session (memory is the whole
#   session's): that call's result says memory_limit and "died:
#   memory_limit", the next call exits 69 saying so;
# - --idle: no call for that long stops the session ("idle");
# - --lifetime: a call still running at the lifetime is interrupted, the
#   session ends ("lifetime");
# - a client killed during its call: the call still runs to its
#   interruption and is recorded; the session lives on;
# - the payload killing its own interpreter: the call is recorded with
#   "died: signal", no process or cgroup is left;
# - exit() in a call ends the session ("exited");
# - a call's new or changed /out files (a matplotlib figure too) are its
#   artifacts, in its result, its END and the --artifacts directory;
# - sbx session restart gives a fresh interpreter under the same name;
# - the log verifies, every call paired with its END.
. "$(dirname "$0")/lib.sh"
plan 21
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
lrun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	keep_results "$T/out"
}
show_states() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys
r = json.load(sys.stdin)["records"]
print(" ".join("%s:%s:%s" % (x["kind"], x.get("cell") or "-", x.get("session_state") or x.get("outcome") or "-")
               for x in r))'; }

# --- memory ---------------------------------------------------------------
lrun session start m1
M1=$(cat "$T/out")
lrun run --session m1 -c 'a = 1'
lrun run --session m1 --json -c 'b = bytearray(2 << 30)'
check "a call past the memory limit: exit 137, memory_limit, died: memory_limit" \
	sh -c "[ $rc = 137 ] && [ \"$(jget outcome)\" = memory_limit ] && [ \"$(jget session_state)\" = 'died: memory_limit' ] && [ \"$(jget cell)\" = 2 ]"
lrun run --session m1 -c 'print(a)'
check "the next call: exit 69, one line naming the memory limit" \
	sh -c "[ $rc = 69 ] && [ \$(wc -l <$T/err) = 1 ] && grep -q 'died: memory_limit' $T/err"
check "the log: the session, call 1, call 2 recorded as memory_limit, the session's END" \
	[ "$(show_states "$M1")" = "start:-:- start:1:- end:1:live start:2:- end:2:died: memory_limit end:-:died: memory_limit" ]
check "no cgroup of the dead session" no_cgroup_of "$M1"

# --- idle -----------------------------------------------------------------
lrun session start i1 --idle 2s
I1=$(cat "$T/out")
lrun run --session i1 -c 'v = 1'
sleep 4
lrun run --session i1 -c 'print(v)'
check "--idle 2s: after 4 s without a call the session is gone (exit 69, idle)" \
	sh -c "[ $rc = 69 ] && grep -q 'not running: idle' $T/err"
check "its END says idle" sh -c "show_states() { :; }; [ \"\$($AUDIT show --json $I1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"end\"][\"session_state\"])')\" = idle ]"

# --- lifetime -------------------------------------------------------------
lrun session start l1 --lifetime 3s
L1=$(cat "$T/out")
lrun run --session l1 --json -c 'import time
time.sleep(30)'
check "--lifetime 3s: a call running at the lifetime is interrupted, state lifetime" \
	sh -c "[ \"$(jget session_state)\" = lifetime ] && [ \"$(jget traceback.type)\" = KeyboardInterrupt ]"
lrun run --session l1 -c 'print(1)'
check "and the session is gone (exit 69)" [ "$rc" = 69 ]

# --- a client killed during its call --------------------------------------
lrun session start k1
K1=$(cat "$T/out")
run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" run --session k1 -c 'import time
w = 5
time.sleep(60)' >/dev/null 2>&1 </dev/null &
cl=$!
sleep 2
pkill -KILL -P "$cl" 2>/dev/null; kill -KILL "$cl" 2>/dev/null
wait "$cl" 2>/dev/null
sleep 1
lrun run --session k1 -c 'print(w)'
check "a client killed mid-call: the session lives on with the call's state (w)" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat $T/out)\" = 5 ]"
check "the killed client's call was interrupted and recorded (signal), before the next" \
	sh -c "$AUDIT show --json $K1 | python3 -c 'import json,sys
r=[x for x in json.load(sys.stdin)[\"records\"] if x.get(\"cell\")==1]
sys.exit(not (len(r)==2 and r[1][\"kind\"]==\"end\" and r[1][\"outcome\"]==\"signal\"))'"

# --- the interpreter killed from inside ------------------------------------
lrun run --session k1 --json -c 'import os, signal
os.kill(os.getpid(), signal.SIGKILL)'
check "a call killing its interpreter: recorded, died: signal" \
	sh -c "[ \"$(jget session_state)\" = 'died: signal' ] && [ \"$(jget cell)\" = 3 ]"
check "no cgroup and no process of that session left" \
	sh -c "no_cgroup_of() { ! ls -d /sys/fs/cgroup/*/sbx/run-\$1 /sys/fs/cgroup/sbx/run-\$1 2>/dev/null | grep -q .; }; no_cgroup_of $K1 && ! pgrep -f '[-]-session k1 --work-fd'"

# --- exit() and restart -------------------------------------------------
lrun session start e1
E1=$(cat "$T/out")
lrun run --session e1 --json -c 'import sys; sys.exit(0)'
check "exit() in a call ends the session: state exited" [ "$(jget session_state)" = exited ]
lrun session start e1
lrun run --session e1 -c 'z = 3'
lrun session restart e1
E2=$(cat "$T/out")
lrun run --session e1 -c 'print("z" in globals())'
check "session restart: a new session id, a fresh interpreter (z is gone)" \
	sh -c "[ \"\$(cat $T/out)\" = False ] && [ '$E2' != '$E1' ] && echo '$E2' | grep -Eq '^[0-9a-f]{32}$'"
lrun session stop e1
check "stop after restart" [ "$rc" = 0 ]

# --- a call's artifacts -----------------------------------------------------
lrun session start a1
A1=$(cat "$T/out")
mkdir -m 0777 "$T/arts"
lrun run --session a1 --json --artifacts "$T/arts" -c 'open("/out/a.txt", "w").write("hello")
import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
plt.plot([1, 2, 3]); plt.show()'
check "a call's /out files and its figure are its artifacts, written to --artifacts" \
	sh -c "[ \"$(jget artifacts.0.name) $(jget artifacts.1.name) $(jget artifacts.1.media_type)\" = 'a.txt figure-1.png image/png' ] && [ \"\$(cat $T/arts/a.txt)\" = hello ]"
lrun run --session a1 --json -c 'print(open("/out/a.txt").read())'
check "the next call returns only what it wrote (nothing)" sh -c "[ \"$(jget stdout)\" = hello ] && [ \"$(jget artifacts_skipped)\" = 0 ] && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))[\"artifacts\"] != [])' $T/out"
lrun session stop a1
check "the END of cell 1 lists its two artifacts" sh -c "$AUDIT show --json $A1 | python3 -c 'import json,sys
r=[x for x in json.load(sys.stdin)[\"records\"] if x[\"kind\"]==\"end\" and x.get(\"cell\")==1][0]
sys.exit(sorted(a[\"name\"] for a in r[\"artifacts\"]) != [\"a.txt\", \"figure-1.png\"])'"

"$AUDIT" verify >"$T/verify" 2>&1
check "the log verifies (every call's START paired with its END)" [ $? = 0 ]
"$AUDIT" list --limit 200 >"$T/list" 2>&1
check "list pairs the session's START with its own END (outcome of m1: memory_limit)" \
	grep -q "^$M1 .*memory_limit" "$T/list"
"$AUDIT" report --sessions --since today --format json >"$T/rep" 2>&1
check "report --sessions: m1 with its 2 calls, 1 failed, ended memory_limit; k1 died by signal" python3 -c 'import json,sys
rows={r["id"]: r for r in json.load(open(sys.argv[1]))["live_sessions"]}
m=rows[sys.argv[2]]; k=rows[sys.argv[3]]
sys.exit(not (m["calls"]==2 and m["failed_calls"]==1 and m["ended"]=="memory_limit" and m["session"]=="m1" and k["ended"]=="signal"))' "$T/rep" "$M1" "$K1"
finish
