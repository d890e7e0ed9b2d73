#!/bin/sh
# SPDX-License-Identifier: ISC
# Live sessions (issue 17, sbx(1) SESSIONS): one interpreter kept between
# calls, every call its own START and END linked to the session.
#
# A session is started; calls keep a variable, an import and a loaded
# pandas DataFrame; a call that times out (--timeout) is interrupted with
# KeyboardInterrupt and leaves the state; a traceback names the call's own
# lines ("<cell N>") and none of the driver's; another member of group
# sbx (sbxtest2), talking to the session's socket directly, is refused
# and its code never runs or enters the log; the audit log shows the
# session's START, then each call's START (its code's digest) before its
# END, cells in order, then the session's END ("stopped"); after
# `sbx session stop` a call says the session ended (exit 69), and no
# cgroup or process of the session is left.
. "$(dirname "$0")/lib.sh"
plan 27
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
lrun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	keep_results "$T/out"
}
printf 'region,amount\nnorth,3\nsouth,4\nnorth,5\n' >"$T/sales.csv"
chmod 0644 "$T/sales.csv"

lrun session start s1
ID=$(cat "$T/out")
check "session start prints the session's id (rc $rc)" sh -c "[ $rc = 0 ] && echo '$ID' | grep -Eq '^[0-9a-f]{32}$'"

lrun run --session s1 -c 'import json, collections
import pandas as pd
x = 41
df = pd.DataFrame({"region": ["north", "south", "north"], "amount": [3, 4, 5]})'
check "call 1: an import, a variable and a DataFrame (rc $rc)" [ "$rc" = 0 ]

lrun run --session s1 --json -c 'print(x + 1, json.dumps(df.groupby("region").amount.sum().to_dict()))'
check "call 2 sees call 1's variable, import and DataFrame" \
	grep -q '"stdout": "42 {\\"north\\": 8, \\"south\\": 4}\\n"' "$T/out"
check "its result: cell 2, session s1, session_state live, the session's id" \
	sh -c "[ \"$(jget cell)\" = 2 ] && [ \"$(jget session)\" = s1 ] && [ \"$(jget session_state)\" = live ] && [ \"$(jget id)\" = $ID ]"
check "its audit key names the call's own START and END (seq, end after start)" \
	sh -c "[ \"$(jget audit.start_seq)\" -gt 1 ] && [ \"$(jget audit.end_seq)\" -gt \"$(jget audit.start_seq)\" ]"

lrun run --session s1 -c 'df2 = df[df.amount > 3]; len(df2)'
check "a last expression's value is printed, as in a notebook" sh -c "[ $rc = 0 ] && [ \"\$(cat $T/out)\" = 2 ]"

lrun run --session s1 --timeout 2s --json -c 'y = 1
while True:
    y += 1'
check "a call past its --timeout: exit 124, outcome timeout (rc $rc)" \
	sh -c "[ $rc = 124 ] && [ \"$(jget outcome)\" = timeout ] && [ \"$(jget limit)\" = wall_time ]"
check "it was interrupted with KeyboardInterrupt in the call's own loop (line 2 or 3)" \
	sh -c "[ \"$(jget traceback.type)\" = KeyboardInterrupt ] && [ \"$(jget traceback.frames.0.file)\" = '<cell 4>' ] && [ \"$(jget traceback.frames.0.line)\" -ge 2 ]"
check "no frame of the driver in its traceback" sh -c "! grep -q sbx_live $T/out"
check "the session stays live after the timeout" [ "$(jget session_state)" = live ]
check "the call's limits say its own wall_time (2 s)" [ "$(jget limits.wall_time_ms)" = 2000 ]

lrun run --session s1 -c 'print(x, len(df), y > 1)'
check "the state survived the interrupted call (x, df and the loop's y)" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat $T/out)\" = '41 3 True' ]"

lrun run --session s1 --json -c 'def f(v):
    return 1 / v
f(0)'
check "an exception: exit 1, outcome error" sh -c "[ $rc = 1 ] && [ \"$(jget outcome)\" = error ]"
check "its traceback maps to the call's lines: <cell 6> line 3, then line 2 in f" \
	sh -c "[ \"$(jget traceback.type)\" = ZeroDivisionError ] && [ \"$(jget traceback.frames.0.file)\" = '<cell 6>' ] && [ \"$(jget traceback.frames.0.line)\" = 3 ] && [ \"$(jget traceback.frames.1.line)\" = 2 ] && [ \"$(jget traceback.frames.1.function)\" = f ]"

lrun run --session s1 -c 'print(x)'
check "an exception does not end the session either" sh -c "[ $rc = 0 ] && [ \"\$(cat $T/out)\" = 41 ]"

# --- another member of group sbx: straight to the session's socket -------
cat >"$T/other.py" <<'EOF'
import os, socket, struct, sys
sys.path.insert(0, os.path.dirname(sys.argv[0]))
import sbxframes
uid, name = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0sbx-live/%s/%s" % (uid, name))
except OSError as e:
    print("no connection:", e); sys.exit(0)
fd = sbxframes.memfd(b'open("/work/pwned", "w").write("x")\nprint("PWNED")\n')
req = struct.pack("=IHHQQ", 0x5342584C, 1, 1, 0, 0)
try:
    s.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
except OSError as e:
    print("send:", e)  # refused at accept: the answer is already here
data = sbxframes.read_all(s, timeout=10)
for m in sbxframes.messages(data):
    print("message:", m)
print("output:", sbxframes.output(data))
EOF
cp "$SBX_SRCDIR/tests/sbxframes.py" "$T/" 2>/dev/null || true
chmod 0644 "$T/other.py" "$T/sbxframes.py"
UID1=$(id -u sbxtest)
run_as sbxtest2 python3 "$T/other.py" "$UID1" s1 >"$T/other" 2>&1
check "another sbx user's code is refused by the session's recorder" \
	sh -c "grep -q 'belongs to another user: refused' $T/other && ! grep -q PWNED $T/other"
run_as sbxtest2 env XDG_DATA_HOME="$T/xdg2" "$SBX" session stop s1 >"$T/other" 2>&1
check "another user cannot stop it (exit 69: none of theirs has that name)" [ $? = 69 ]
lrun run --session s1 --json -c 'import os; print(os.path.exists("/work/pwned"), x)'
check "the session is untouched and the refused code never ran; the next call is cell 8" \
	sh -c "[ \"$(jget stdout)\" = 'False 41' ] && [ \"$(jget cell)\" = 8 ]"

lrun session ls
check "session ls: s1 live with its 8 calls" grep -Eq '^s1 .*live: 8 calls' "$T/out"

lrun session stop s1
check "session stop (rc $rc)" [ "$rc" = 0 ]
lrun run --session s1 -c 'print(x)'
check "a call after the stop: exit 69, one line saying it was stopped" \
	sh -c "[ $rc = 69 ] && [ \$(wc -l <$T/err) = 1 ] && grep -q 'not running: stopped' $T/err"
check "no cgroup of the session is left" no_cgroup_of "$ID"
check "no process of the session is left (supervisor, keeper)" \
	sh -c "! pgrep -f -- '[-]-session s1 --work-fd [0-9]* --live' && ! pgrep -f '[s]bx session start s1'"

# --- the audit log --------------------------------------------------------
"$AUDIT" show --json "$ID" >"$T/show" 2>"$T/show.err"
cat >"$T/order.py" <<'EOF'
import hashlib, json, sys
recs = json.load(open(sys.argv[1]))["records"]
kinds = [(r["kind"], r.get("cell")) for r in recs]
want = [("start", None)]
for c in range(1, 9):
    want += [("start", c), ("end", c)]
want += [("end", None)]
if kinds != want:
    print("order:", kinds); sys.exit(1)
seqs = [r["seq"] for r in recs]
if seqs != sorted(seqs):
    print("seqs:", seqs); sys.exit(1)
code = 'print(x)'
digest = hashlib.sha256(code.encode()).hexdigest()
c7 = [r for r in recs if r["kind"] == "start" and r.get("cell") == 7][0]
if c7["code_sha256"] != digest:
    print("cell 7 digest", c7["code_sha256"], digest); sys.exit(1)
states = [r.get("session_state") for r in recs if r["kind"] == "end"]
print(states)
if states[-1] != "stopped" or any(s != "live" for s in states[:-1]):
    sys.exit(1)
EOF
check "show: the session's START, each call's START before its END, cells 1-8 in order, the session's END" \
	python3 "$T/order.py" "$T/show"
out=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["records"]
print([x.get("outcome") for x in r if x["kind"]=="end"])' "$T/show")
check "each call's outcome is recorded: ok ok ok timeout ok error ok ok, the session ok" \
	[ "$out" = "['ok', 'ok', 'ok', 'timeout', 'ok', 'error', 'ok', 'ok', 'ok']" ]
check "the audit log verifies" "$AUDIT" verify
lrun session start s2
lrun session start s2
check "session start of a name already live is refused (rc $rc), saying so" \
	sh -c "[ $rc != 0 ] && grep -q 'live or ending\|already live' $T/err"
lrun session stop s2
finish
