#!/bin/sh
# SPDX-License-Identifier: ISC
# Record format version 2 end to end: a real run's START carries its
# inputs (name, size, SHA-256), the code size and the environment (sbx
# version, kernel release, interpreter) as extension fields; sbx-audit
# show (text and --json) and export print them from the record-field
# table; the log still verifies; an edit of a field's bytes is found.
. "$(dirname "$0")/lib.sh"
plan 14
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub

printf 'a,b\n1,2\n' >"$T/data.csv"
printf 'x' >"$T/tiny.txt"
chmod 0644 "$T/data.csv" "$T/tiny.txt"
sbx_run run --json --input "$T/data.csv" --input "$T/tiny.txt" -c 'print(open("/in/data.csv").read())'
diag "$(cat "$T/err")"
check "run with two inputs: exit 0" [ "$rc" = 0 ]
id=$(jget id)

"$AUDIT" show --json "$id" >"$T/show.json" 2>"$T/err"
check "show --json: exit 0" [ "$?" = 0 ]
fields() { python3 -c 'import json,sys,hashlib
d=json.load(open(sys.argv[1]))["start"]
want=[{"name":"data.csv","size":8,"sha256":hashlib.sha256(open(sys.argv[2],"rb").read()).hexdigest()},
      {"name":"tiny.txt","size":1,"sha256":hashlib.sha256(b"x").hexdigest()}]
ok = d.get("inputs") == want
ok = ok and d.get("kernel_release") == sys.argv[3]
ok = ok and d.get("code_bytes") == len("print(open(\"/in/data.csv\").read())")
ok = ok and isinstance(d.get("sbx_version"), str) and d["sbx_version"][:1].isdigit()
ok = ok and d.get("interpreter_path", "").startswith("/usr/bin/python3")
ok = ok and d.get("origin") == d.get("origin")
print(json.dumps(d, indent=1)) if not ok else None
sys.exit(0 if ok else 1)' "$T/show.json" "$T/data.csv" "$(uname -r)"; }
check "show --json: inputs with their SHA-256, code_bytes, sbx_version, kernel_release, interpreter_path" fields

"$AUDIT" show "$id" >"$T/show.txt" 2>&1
check "show: an inputs line with the count" grep -Eq '^  inputs +2$' "$T/show.txt"
check "show: each input with name, size and sha256" \
	grep -Eq "^    name data.csv  size 8  sha256 $(sha256sum "$T/data.csv" | cut -c1-64)$" "$T/show.txt"
check "show: the kernel release" grep -Eq "^  kernel +$(uname -r)$" "$T/show.txt"

"$AUDIT" export --format jsonl >"$T/export.jsonl" 2>"$T/err"
check "export jsonl: exit 0" [ "$?" = 0 ]
check "export jsonl: the run's fields hold its inputs and the kernel" python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d["id"]==sys.argv[2]:
        f=d["fields"]
        sys.exit(0 if [i["name"] for i in f["inputs"]]==["data.csv","tiny.txt"] and f["kernel_release"] else 1)
sys.exit(1)' "$T/export.jsonl" "$id"
"$AUDIT" export --format csv >"$T/export.csv" 2>"$T/err"
# a run with many connections (78-egress-connections) holds more than
# Python's default 128 KiB in one CSV cell
check "export csv: a fields column holding JSON" python3 -c 'import csv,json,sys
csv.field_size_limit(sys.maxsize)
r=list(csv.DictReader(open(sys.argv[1])))
row=[x for x in r if x["id"]==sys.argv[2]][0]
sys.exit(0 if json.loads(row["fields"])["inputs"][1]["size"]==1 else 1)' "$T/export.csv" "$id"

"$AUDIT" checkpoint --write --key "$P/var/lib/sbx-signer/audit.key" >/dev/null
"$AUDIT" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "verify: exit 0" [ "$rc" = 0 ]
check "the log says format 2" [ "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select value from meta where key=\"format\"").fetchone()[0])' "$DB")" = 2 ]

# An attacker changes an input's recorded digest in the blob: the leaf no
# longer matches (record-modified at that seq).
python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$DB" "$T/copy.db"
seq=$(python3 -c 'import sqlite3,sys,hashlib
c=sqlite3.connect(sys.argv[1])
seq,b=c.execute("select seq, blob from records where run_id=? and kind=\"start\"",(sys.argv[2],)).fetchone()
h=hashlib.sha256(b"x").digest()
assert h in b
c.execute("update records set blob=? where seq=?",(b.replace(h,bytes(32)),seq)); c.commit(); print(seq)' "$T/copy.db" "$id")
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "edited input digest: verify exit 1" [ "$rc" = 1 ]
check "edited input digest: record-modified at the START's seq" grep -q "^seq $seq: record-modified" "$T/v"
check "the result's inputs carry the same digests" [ "$(jget inputs.1.sha256)" = "$(printf x | sha256sum | cut -c1-64)" ]
finish
