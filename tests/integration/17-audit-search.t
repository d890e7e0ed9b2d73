#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx-audit search and export over a hand-counted fixture log (written by
# the real append function through audit-bench): every filter alone and
# combined, every output format parsed, usage errors, the export cursor,
# an old log without the search index, and a log written by the recorder.
. "$(dirname "$0")/lib.sh"
plan 73
BENCH=$SBX_SRCDIR/build-check-$(basename "$P")/audit-bench
DB=$T/fix.db
"$AUDIT" keygen --key "$T/k" --pubkey "$T/k.pub" --user root >/dev/null 2>&1
# USER UID POLICY LANGUAGE OUTCOME SESSION TIME CODE (see bench/audit-bench.c)
cat >"$T/spec" <<'SPEC'
alice 2001 default python ok sA 2026-01-10T10:00:00Z print("alpha")
alice 2001 default python error sA 2026-01-10T11:00:00Z raise ValueError("alpha beta")
alice 2001 strict python timeout - 2026-01-11T09:00:00Z while True: pass
bob 2002 default sh ok sB 2026-01-11T12:00:00Z echo "needle in a haystack"
bob 2002 default sh memory_limit sB 2026-01-12T08:00:00Z x=$(head -c 1G /dev/zero)
bob 2002 strict python ok - 2026-01-12T09:30:00Z print("alpha")
carol 2003 net node ok sC 2026-01-13T00:00:00Z console.log("needle")
carol 2003 net node signal sC 2026-01-13T01:00:00Z process.kill(process.pid)
carol 2003 default python incomplete - 2026-01-14T10:00:00Z import time  # NEEDLE upper
dave 2004 default python ok - 2026-01-14T11:00:00Z print("ünïcødé ☃ snow")
SPEC
"$BENCH" fixture "$DB" "$T/k" <"$T/spec" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "fixture log written" [ "$rc" = 0 ]

S() { "$AUDIT" --db "$DB" search "$@"; }
# count ARGS...: runs found (jsonl lines); exit status in $src
count() { S --format jsonl "$@" >"$T/s" 2>"$T/serr"; src=$?; wc -l <"$T/s" | tr -d ' '; }
expect() { want=$1; shift; got=$(TZ=${TZ_SEARCH:-UTC0} count "$@"); check "search $* -> $want (got $got)" [ "$got" = "$want" ]; }

expect 10
expect 3 --user alice
expect 3 --user bob
expect 1 --user dave
expect 3 --uid 2002
expect 6 --policy default
expect 2 --policy strict
expect 6 --language python
expect 2 --language node
expect 5 --outcome ok
expect 1 --outcome error
expect 1 --outcome memory_limit
expect 1 --outcome signal
expect 1 --outcome incomplete
expect 0 --outcome pids_limit
expect 4 --failed
expect 5 --success
expect 2 --session sA
expect 2 --session sC
expect 2 --code-contains needle
expect 1 --code-contains NEEDLE
expect 3 --code-contains alpha
expect 1 --code-contains 'ValueError("'
expect 1 --code-contains '☃ snow'
expect 1 --code-contains 'x='
expect 0 --code-contains 'no such text anywhere'
sha=$(printf 'print("alpha")' | sha256sum | cut -d' ' -f1)
expect 2 --code-sha256 "$sha"
expect 2 --code-sha256 "$(echo "$sha" | tr a-f A-F)"
expect 6 --since 2026-01-12T00:00Z
expect 4 --until 2026-01-12T00:00Z
# --until is exclusive: the run at exactly 2026-01-13T00:00Z is not before it
expect 4 --since 2026-01-11T00:00Z --until 2026-01-13T00:00Z
expect 10 --since this-year --until now
expect 0 --since today
# local time: 10:00 on the 12th is 10:00Z in UTC, 01:00Z in Japan
expect 4 --since 2026-01-12T10:00
TZ_SEARCH=JST-9 expect 6 --since 2026-01-12T10:00
expect 1 --user bob --failed
expect 2 --user alice --language python --policy default
expect 1 --user carol --outcome signal --session sC
expect 2 --language python --success --code-contains alpha
expect 1 --uid 2001 --code-sha256 "$sha" --since 2026-01-10 --until 2026-01-11 --outcome ok
check "no match: exit 1" sh -c '! "$1" --db "$2" search --user nobody >/dev/null'  _ "$AUDIT" "$DB"

# --limit: the newest N, oldest first
S --limit 2 --format jsonl >"$T/s"
check "--limit 2: the two newest, oldest first" [ "$(python3 -c 'import json,sys
print(" ".join(json.loads(l)["user"] for l in open(sys.argv[1])))' "$T/s")" = "carol dave" ]

# every format parses and holds the same runs
S --failed >"$T/table"
check "table: header and 4 rows" sh -c '[ "$(wc -l <"$1")" = 5 ] && head -1 "$1" | grep -q "^ID  *TIME"' _ "$T/table"
S --failed --format csv >"$T/csv"
check "csv: parses, 4 rows, 24 columns" python3 -c 'import csv,sys
r=list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(r)==4 and len(r[0])==24, r
assert sorted(x["outcome"] for x in r)==["error","memory_limit","signal","timeout"]' "$T/csv"
S --code-contains ValueError --format csv >"$T/csv"
check "csv: quotes and commas survive" python3 -c 'import csv,sys
r=list(csv.DictReader(open(sys.argv[1], newline="")))
assert r[0]["user"]=="alice" and r[0]["artifacts"]=="[]", r' "$T/csv"
S --failed --format json >"$T/json"
check "json: an array of 4 objects" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); assert len(d)==4 and all(x["outcome"]!="ok" for x in d)' "$T/json"
S --failed --format jsonl >"$T/jsonl"
check "jsonl: 4 objects, one a line" python3 -c 'import json,sys
d=[json.loads(l) for l in open(sys.argv[1])]; assert len(d)==4 and d[0]["start_seq"]<d[1]["start_seq"]' "$T/jsonl"
S --user dave --format json >"$T/json"
check "json: UTF-8 kept" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); assert d[0]["user"]=="dave" and d[0]["artifacts"]==[]' "$T/json"

# usage errors: exit 2, one line naming the option
for bad in "--outcome bogus" "--code-sha256 abc" "--failed --success" "--since bogus" \
	   "--until 2026-02-30" "--format xml" "--uid -1" "--limit x" "--user ''"; do
	eval "S $bad" >/dev/null 2>"$T/e"; rc=$?
	check "search $bad: exit 2, one line" [ "$rc.$(wc -l <"$T/e")" = 2.1 ]
done

# export: finished runs only, in END order; the cursor file
E() { "$AUDIT" --db "$DB" export "$@"; }
E --format jsonl --resume "$T/cur" >"$T/e1"; rc=$?
check "export: exit 0, 9 finished runs" [ "$rc.$(wc -l <"$T/e1")" = 0.9 ]
check "export: cursor is the last END seq (19)" [ "$(cat "$T/cur")" = 19 ]
E --format jsonl --resume "$T/cur" >"$T/e2"; rc=$?
check "export again: nothing new, cursor kept" [ "$rc.$(wc -c <"$T/e2").$(cat "$T/cur")" = 0.0.19 ]
printf '%s\n' 'erin 2005 default python ok - 2026-01-15T10:00:00Z print(1)' \
	'erin 2005 default python error - 2026-01-15T11:00:00Z print(2)' | "$BENCH" fixture "$DB" "$T/k"
E --format csv --resume "$T/cur" >"$T/e3"
check "export after two runs: just those, cursor 23" python3 -c 'import csv,sys
r=list(csv.DictReader(open(sys.argv[1], newline="")))
assert [x["user"] for x in r]==["erin","erin"] and [x["end_seq"] for x in r]==["21","23"], r' "$T/e3"
check "export: cursor 23" [ "$(cat "$T/cur")" = 23 ]
check "export --since-seq 19: the same two" [ "$(E --format jsonl --since-seq 19 | wc -l)" = 2 ]
check "export: no --format is a usage error" sh -c '"$1" --db "$2" export >/dev/null 2>&1; [ $? = 2 ]' _ "$AUDIT" "$DB"
check "export: --since-seq with --resume is a usage error" \
	sh -c '"$1" --db "$2" export --format csv --since-seq 1 --resume "$3" >/dev/null 2>&1; [ $? = 2 ]' _ "$AUDIT" "$DB" "$T/cur"
echo garbage >"$T/badcur"
E --format jsonl --resume "$T/badcur" >"$T/e4" 2>"$T/err"; rc=$?
check "export: unreadable cursor: exit 1, nothing written, file kept" \
	[ "$rc.$(wc -c <"$T/e4").$(cat "$T/badcur")" = 1.0.garbage ]

# The search index does not disturb verification.
"$AUDIT" --db "$DB" --pubkey "$T/k.pub" checkpoint --write --key "$T/k" >/dev/null
"$AUDIT" --db "$DB" --pubkey "$T/k.pub" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
# the fixture's START without END is from long ago: incomplete, a warning
check "verify of the indexed log: warnings only (exit 4), the incomplete run" \
	sh -c "[ $rc = 4 ] && grep -q ': incomplete: ' '$T/v' && grep -q '(0 tampering, 1 warning)' '$T/v'"

# A log from before search: no code_fts, no meta "search". Search scans the
# code table; the next writer adds the index.
cp "$DB" "$T/old.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("drop table code_fts")
c.execute("delete from meta where key=\"search\""); c.commit()' "$T/old.db"
check "old log: --code-contains works without the index" \
	[ "$("$AUDIT" --db "$T/old.db" search --code-contains needle --format jsonl | wc -l)" = 2 ]
"$BENCH" fixture "$T/old.db" "$T/k" </dev/null
check "old log: the next writer builds the index" python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); assert c.execute("select count(*) from code_fts where code_fts match ?",("\"needle\"",)).fetchone()[0]==2' "$T/old.db"
check "old log: search finds the same runs through the index" \
	[ "$("$AUDIT" --db "$T/old.db" search --code-contains needle --format jsonl | wc -l)" = 2 ]

# The recorder's own log: a real run is found by its code text.
sbx_run run --json -c 'print("fts-real-run-marker")'
id=$(jget id)
"$AUDIT" search --code-contains fts-real-run-marker --user sbxtest --since today --format jsonl >"$T/r"
check "recorder log: the run is found by its code" grep -q "\"id\":\"$id\"" "$T/r"
run_as sbxtest "$AUDIT" search --user sbxtest >/dev/null 2>&1; rc=$?
check "a user outside sbx-audit cannot search (exit 3)" [ "$rc" = 3 ]
finish
