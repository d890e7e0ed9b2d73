#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 15 (signals, 15-signals.t) for live sessions (issue 17):
# killing the client, the session's keeper or the session's own processes
# at any point leaves no process, no cgroup and no unrecorded call.
# Scenarios, each its own session:
#   keeper    SIGKILL to the keeper (the `sbx session start` process that
#             holds the helper's result socket) during a call: the call
#             and the session go on, sbx session stop ends it;
#   init      SIGKILL to the sandbox's init (the caller's uid) during a call;
#   driver    SIGKILL to the interpreter between calls;
#   stop      SIGSTOP to the interpreter, then a call: its wall_time passes,
#             it does not yield, the session is killed (LIVE_GRACE_MS);
#   client    SIGKILL to a call's client at once after it started;
#   helpers   TERM and KILL from the caller to the session's supervisor
#             (root) and recorder (_sbx) are refused (EPERM).
# After each: no process of the session on the host, no cgroup, every
# START in the log has its END (the session's and each call's), the
# session's END says how it died, and a next call exits 69 saying so.
#
# The defences these rely on: the recorder's kill of a call that does
# not yield (SBX_REPLY_KILL_CALL, LIVE_GRACE_MS after wall_time: the stop
# scenario), the supervisor's wait on the sandbox init and cgroup removal
# (init, driver), the recorder's END for a call the session died under
# (recorder/live.c live_serve), the supervisor's and recorder's other uids
# (helpers). Not yet checked here by removing each one.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 17
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
m=k$$
lrun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# the session NAME's supervisor (root), its children: recorder, init
sup_of() { pgrep -f -- "[-]-session $1 --work-fd [0-9]* --live" | head -1; }
init_of() { s=$(sup_of "$1"); [ -n "$s" ] && ps -o pid=,user=,args= --ppid "$s" | awk '$2 != "_sbx" && $2 != "root" {print $1}' | head -1; }
driver_of() { i=$(init_of "$1"); [ -n "$i" ] && ps -o pid= --ppid "$i" | head -1 | tr -d ' '; }
recorder_of() { s=$(sup_of "$1"); [ -n "$s" ] && ps -o pid=,user= --ppid "$s" | awk '$2 == "_sbx" {print $1}' | head -1; }
keeper_of() { pgrep -u sbxtest -f -- "[s]bx session start $1\$" | head -1; }
gone() { # NAME ID: nothing of the session left (waits up to 10 s)
	for i in $(seq 100); do
		[ -z "$(sup_of "$1")" ] && [ -z "$(keeper_of "$1")" ] && no_cgroup_of "$2" && return 0
		sleep 0.1
	done
	return 1
}
has() { printf '%s\n' "$1" | grep -q "$2"; }
# every START of session ID has its END; the session's END state
paired() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys
r=json.load(sys.stdin)["records"]
s=[x.get("cell") for x in r if x["kind"]=="start"]; e=[x.get("cell") for x in r if x["kind"]=="end"]
last=[x for x in r if x["kind"]=="end" and x.get("cell") is None]
print("ok" if sorted(s, key=str)==sorted(e, key=str) and last else "unpaired %s %s" % (s, e),
      last[0].get("session_state") if last else "-")'; }

# --- keeper killed mid-call --------------------------------------------
# the keeper only holds the helper's socket: the session goes on without
# it (docs/threat-model.md "Live sessions"); stop still ends it
lrun session start ${m}a
A=$(cat "$T/out")
run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" run --session ${m}a -c 'import time; time.sleep(2); print("done")' \
	>"$T/aout" 2>&1 </dev/null &
cl=$!
sleep 1
kill -KILL "$(keeper_of ${m}a)"
wait $cl; crc=$?
check "keeper killed mid-call: the call runs to its end (rc $crc)" sh -c "[ $crc = 0 ] && grep -qx done $T/aout"
lrun session stop ${m}a
[ $rc = 0 ] && gone ${m}a "$A"
check "  sbx session stop still ends the session; nothing of it left" [ $? = 0 ]
check "  the call and the session recorded, each START with its END ($(paired "$A"))" \
	has "$(paired "$A")" '^ok stopped'

# --- the sandbox's init killed mid-call -----------------------------------
lrun session start ${m}b
B=$(cat "$T/out")
run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" run --session ${m}b --json -c 'import time; time.sleep(60)' >"$T/bout" 2>&1 </dev/null &
cl=$!
sleep 1.5
ip=$(init_of ${m}b)
run_as sbxtest kill -KILL "$ip"; krc=$?
wait $cl
check "the caller may kill the session's init (its own uid): rc $krc" [ "$krc" = 0 ]
check "  nothing of the session left" gone ${m}b "$B"
check "  the call and the session recorded ($(paired "$B"))" has "$(paired "$B")" '^ok died: '
check "  the call's result says the session died" grep -q '"session_state": "died: ' "$T/bout"

# --- the interpreter killed between calls -------------------------------
lrun session start ${m}c
C=$(cat "$T/out")
lrun run --session ${m}c -c 'v = 1'
run_as sbxtest kill -KILL "$(driver_of ${m}c)"
check "interpreter killed between calls: nothing left" gone ${m}c "$C"
lrun run --session ${m}c -c 'print(v)'
check "  the next call: exit 69, one line saying it died" \
	sh -c "[ $rc = 69 ] && [ \$(wc -l <$T/err) = 1 ] && grep -q 'died: ' $T/err"
check "  recorded ($(paired "$C"))" has "$(paired "$C")" '^ok died: '

# --- the interpreter stopped: the call cannot yield ----------------------
lrun session start ${m}d
D=$(cat "$T/out")
run_as sbxtest kill -STOP "$(driver_of ${m}d)"
lrun run --session ${m}d --json --timeout 1s -c 'print(1)'
check "a stopped interpreter: the call times out, the session is killed (rc $rc)" \
	sh -c "[ $rc = 124 ] && grep -q '\"session_state\": \"died: ' $T/out"
check "  nothing left, recorded ($(paired "$D"))" has "$(paired "$D")" '^ok died: '
gone ${m}d "$D"; check "  no process or cgroup of it" [ $? = 0 ]

# --- a client killed at once ----------------------------------------------
lrun session start ${m}e
E=$(cat "$T/out")
for i in 1 2 3 4 5; do
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" run --session ${m}e -c 'import time; time.sleep(5)' >/dev/null 2>&1 </dev/null &
	cl=$!
	sleep 0.0$i
	pkill -KILL -P "$cl" 2>/dev/null; kill -KILL "$cl" 2>/dev/null
	wait $cl 2>/dev/null
done
sleep 1
lrun run --session ${m}e --json -c 'print("alive")'
check "clients killed at once: the session lives on" grep -q '"stdout": "alive\\n"' "$T/out"

# --- the caller signals the session's helpers ------------------------------
sp=$(sup_of ${m}e) rp=$(recorder_of ${m}e)
bad=
for sig in TERM KILL STOP; do
	run_as sbxtest kill -$sig "$sp" 2>/dev/null && bad="$bad sup:$sig"
	run_as sbxtest kill -$sig "$rp" 2>/dev/null && bad="$bad rec:$sig"
done
check "TERM, KILL, STOP from the caller to the supervisor ($sp) and recorder ($rp) refused ($bad)" \
	sh -c "[ -n '$sp' ] && [ -n '$rp' ] && [ -z '$bad' ]"
lrun session stop ${m}e
check "  the session is stopped normally, nothing left" gone ${m}e "$E"
check "  every call of it recorded, the killed ones too ($(paired "$E"))" has "$(paired "$E")" '^ok stopped'
finish
