#!/bin/sh
# SPDX-License-Identifier: ISC
# Live sessions (issue 17): what the first three tests left open.
#
# - --input on a live call (the issue's own example): the file is under
#   /in for that call, listed in its result and in its START (name, size,
#   SHA-256) as a run's inputs are; the next call's /in holds only its own
#   inputs; inputs past the policy's input_size are refused in one line,
#   exit 77, and audited as a REFUSED record (the request reached the
#   session's policy); the session lives on;
# - each call's END carries that call's resources: cpu (the driver's
#   count), the session's memory peak up to its end, its output bytes;
# - sbx session ls shows a live session's memory (its cgroup's, now and
#   peak) and idle time;
# - another member of group sbx talking to the session's socket is refused
#   AND recorded: one REFUSED record (its uid, refusal policy_denied, the
#   digest of the code it sent), at most 20 a minute per session;
# - the driver is the language's live_driver in sbx.conf: a language
#   without one (sh) refuses session start in one line, exit 2;
# - the first call after sbx session restart says session_state restarted,
#   the next live.
. "$(dirname "$0")/lib.sh"
plan 20
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
DB=$P/var/lib/sbx/audit.db
lrun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	keep_results "$T/out"
}
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2], sys.argv[3:]).fetchone()
print("" if r is None or r[0] is None else r[0])' "$DB" "$@"; }
# rec ID CELL KIND KEY: a field of a session's record (show --json)
rec() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys
r=[x for x in json.load(sys.stdin)["records"] if str(x.get("cell")) == sys.argv[1] and x["kind"] == sys.argv[2]][0]
for k in sys.argv[3].split("."):
    r = r[int(k)] if isinstance(r, list) else r.get(k)
print("null" if r is None else r)' "$2" "$3" "$4"; }
printf 'region,amount\nnorth,3\nsouth,4\nnorth,5\n' >"$T/sales.csv"
chmod 0644 "$T/sales.csv"
SHA=$(sha256sum "$T/sales.csv" | cut -d' ' -f1) SIZE=$(wc -c <"$T/sales.csv")

lrun session start s3
S3=$(cat "$T/out")
lrun run --session s3 --json -c 'import pandas as pd; df = pd.read_csv("/in/sales.csv"); print(len(df))' \
	--input "$T/sales.csv"
check "--input on a live call: the file is at /in/sales.csv for that call (rc $rc)" \
	sh -c "[ $rc = 0 ] && [ \"$(jget stdout)\" = 3 ] && [ \"$(jget cell)\" = 1 ]"
check "its result lists the input: name, size, SHA-256" \
	sh -c "[ \"$(jget inputs.0.name) $(jget inputs.0.size) $(jget inputs.0.sha256)\" = \"sales.csv $SIZE $SHA\" ]"
check "the call's START records it as a run's START does (name, size, SHA-256)" \
	sh -c "[ \"$(rec "$S3" 1 start inputs.0.name) $(rec "$S3" 1 start inputs.0.size) $(rec "$S3" 1 start inputs.0.sha256)\" = \"sales.csv $SIZE $SHA\" ]"
lrun run --session s3 --json -c 'import os; print(os.listdir("/in"), len(df))'
check "the next call's /in holds its own inputs only (none); df stays" [ "$(jget stdout)" = "[] 3" ]
lrun run --session s3 -c 'import os; print(os.stat("/in/sales.csv").st_mode & 0o222)' --input "$T/sales.csv"
check "a call's input file in /in is read-only (no write bit)" [ "$(cat "$T/out")" = 0 ]

# --- input_size -----------------------------------------------------------
truncate -s 65M "$T/big.bin" && chmod 0644 "$T/big.bin"
n0=$(sq "select count(*) from records where kind='refused' and refusal='input_too_large'")
lrun run --session s3 -c 'print("never")' --input "$T/big.bin"
check "inputs past input_size (64M): refused, exit 77, one line naming input_size (rc $rc)" \
	sh -c "[ $rc = 77 ] && [ \$(wc -l <$T/err) = 1 ] && grep -q 'input_size' $T/err && ! grep -q never $T/out"
check "  and audited: one REFUSED record input_too_large" \
	[ "$(sq "select count(*) from records where kind='refused' and refusal='input_too_large'")" = $((n0 + 1)) ]
lrun run --session s3 --json -c 'print(len(df))'
check "  the session lives on; the refused call took no cell" sh -c "[ \"$(jget cell)\" = 4 ] && [ \"$(jget stdout)\" = 3 ]"

# --- resources of each call ---------------------------------------------
lrun run --session s3 --json -c 'x = sum(i * i for i in range(3000000)); print("abcdefghi")'
check "a call's END: its own cpu time, the session's memory peak, its output bytes" \
	sh -c "[ \"$(rec "$S3" 5 end cpu_ms)\" -gt 50 ] && [ \"$(rec "$S3" 5 end memory_peak_bytes)\" -gt 1000000 ] && [ \"$(rec "$S3" 5 end stdout_bytes)\" = 10 ]"
check "  the result says the same" sh -c "[ \"$(jget cpu_ms)\" -gt 50 ] && [ \"$(jget memory_peak_bytes)\" -gt 1000000 ]"

# --- session ls: memory and idle time -------------------------------------
sleep 1
lrun session ls
check "session ls: live, its calls, idle time, memory now and peak" \
	grep -Eq '^s3 .*live: 5 calls, idle [0-9]+s, memory [0-9.]+M \(peak [0-9.]+M\)' "$T/out"
lrun session ls --json
check "session ls --json: memory_bytes, memory_peak_bytes (peak >= now > 1M), idle_ms" python3 -c 'import json,sys
s=[x for x in json.load(open(sys.argv[1])) if x["name"]=="s3"][0]["live"]
sys.exit(not (s["memory_peak_bytes"] >= s["memory_bytes"] > 1 << 20 and s["idle_ms"] >= 1000))' "$T/out"

# --- another user: refused and recorded ------------------------------------
cat >"$T/other.py" <<'PY'
import os, socket, struct, sys, fcntl
uid, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
code = b'print("PWNED")\n'
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0sbx-live/%s/%s" % (uid, name))
    fd = os.memfd_create("c", os.MFD_ALLOW_SEALING)
    os.write(fd, code)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    req = struct.pack("=IHHQQII", 0x5342584C, 2, 1, 0, 0, 0, 0)
    try:
        s.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
    except OSError:
        pass
    data = b""
    s.settimeout(5)
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
    except OSError:
        pass
    os.close(fd)
    print("PWNED" in data.decode("latin-1"), "belongs to another user" in data.decode("latin-1"))
PY
chmod 0644 "$T/other.py"
U1=$(id -u sbxtest) U2=$(id -u sbxtest2)
n0=$(sq "select count(*) from records where kind='refused' and uid=?" "$U2")
run_as sbxtest2 python3 "$T/other.py" "$U1" s3 1 >"$T/other" 2>&1
check "another user's code: refused, told so, never run" grep -qx 'False True' "$T/other"
check "  and recorded: one REFUSED record with their uid, refusal policy_denied" \
	[ "$(sq "select count(*) from records where kind='refused' and uid=? and refusal='policy_denied'" "$U2")" = $((n0 + 1)) ]
RID=$(sq "select run_id from records where kind='refused' and uid=? order by seq desc limit 1" "$U2")
CSHA=$(printf 'print("PWNED")\n' | sha256sum | cut -d' ' -f1)
"$AUDIT" show --json "$RID" >"$T/rshow" 2>&1
check "  naming the session, the policy asked for, and the digest of the code sent" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); r=d["records"][0]
sys.exit(not (r["kind"]=="refused" and "session s3" in r["refusal_message"] and r["requested_policy"] and r["code_sha256"]==sys.argv[2] and r["session"]=="s3"))' "$T/rshow" "$CSHA"
run_as sbxtest2 python3 "$T/other.py" "$U1" s3 24 >"$T/other" 2>&1
# the session's 20 a minute count its owner's refusal above too
got=$(sq "select count(*) from records where kind='refused' and uid=?" "$U2")
check "a flood of 25 refused connections in a minute: all told, at most 20 records ($((got - n0)))" \
	sh -c "[ $got -le $((n0 + 20)) ] && [ $got -ge $((n0 + 19)) ] && [ \$(grep -c 'False True' $T/other) = 24 ]"

# --- live_driver per language, restart -----------------------------------
lrun session start q1 --lang sh
check "a language without live_driver in sbx.conf: session start refused, one line, exit 2" \
	sh -c "[ $rc = 2 ] && [ \$(wc -l <$T/err) = 1 ] && grep -q 'no live_driver' $T/err"
lrun session restart s3
lrun run --session s3 --json -c 'print("df" in globals())'
check "the first call after a restart: session_state restarted, cell 1, a fresh interpreter" \
	sh -c "[ \"$(jget session_state)\" = restarted ] && [ \"$(jget cell)\" = 1 ] && [ \"$(jget stdout)\" = False ]"
lrun run --session s3 --json -c 'print(1)'
check "  the next: live" [ "$(jget session_state)" = live ]
lrun session stop s3
"$AUDIT" verify >"$T/verify" 2>&1
check "the log verifies (REFUSED records included)" [ $? = 0 ]
finish
