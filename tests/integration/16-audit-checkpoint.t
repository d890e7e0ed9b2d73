#!/bin/sh
# SPDX-License-Identifier: ISC
# Checkpoints end to end: write one, verify against a saved --state, prove
# a run's inclusion and check the proof offline; a copy of the log with
# its tail cut (checkpoints too) passes a plain verify but not --state.
. "$(dirname "$0")/lib.sh"
plan 16
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub
KEY=$P/var/lib/sbx/audit.key

sbx_run run --json -c 'print("checkpoint me")'
id=$(jget id)
"$AUDIT" checkpoint --write --key "$KEY" >"$T/cp" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "checkpoint --write: exit 0" [ "$rc" = 0 ]
check "checkpoint: C2SP note with an em dash signature line" \
	grep -q "^$(printf '\342\200\224') " "$T/cp"
size=$(sed -n 2p "$T/cp")
check "checkpoint: tree size is the number of records" \
	[ "$size" = "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from records").fetchone()[0])' "$DB")" ]

"$AUDIT" verify --state "$T/state" >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "verify --state (first use): exit 0" [ "$rc" = 0 ]
check "verify --state saved the checkpoint" cmp -s "$T/state" "$T/cp"

"$AUDIT" prove "$id" >"$T/proof" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "prove: exit 0" [ "$rc" = 0 ]
"$AUDIT" verify-proof --pubkey "$PUB" "$T/proof" >"$T/vp" 2>&1; rc=$?
check "verify-proof: exit 0" [ "$rc" = 0 ]
check "verify-proof: START and END proven" [ "$(grep -c '^OK: seq' "$T/vp")" = 2 ]
python3 -c 'import json,sys,base64
d=json.load(open(sys.argv[1])); b=bytearray(base64.b64decode(d["proofs"][0]["blob"])); b[-1]^=1
d["proofs"][0]["blob"]=base64.b64encode(bytes(b)).decode(); json.dump(d,open(sys.argv[2],"w"))' "$T/proof" "$T/bad"
"$AUDIT" verify-proof --pubkey "$PUB" "$T/bad" >/dev/null 2>&1; rc=$?
check "verify-proof: an altered record fails" [ "$rc" = 1 ]

# A second run after the checkpoint: the tail is a warning (exit 2).
sbx_run run --json -c 'print("tail")'
"$AUDIT" verify >"$T/v" 2>&1; rc=$?
check "verify: uncheckpointed tail is a warning (exit 2)" [ "$rc" = 2 ]
check "verify: names the tail" grep -q "uncheckpointed-tail" "$T/v"

# Cut the tail and every checkpoint from a copy: only --state catches it.
python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$DB" "$T/copy.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); m=c.execute("select max(seq) from records").fetchone()[0]; c.execute("delete from records where seq>=?",(m-3,)); c.execute("delete from checkpoints"); c.commit()' "$T/copy.db"
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify >"$T/v" 2>&1; rc=$?
check "truncated copy without --state: no tampering seen (exit 2)" [ "$rc" = 2 ]
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify --json --state "$T/state" >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "truncated copy with --state: exit 1" [ "$rc" = 1 ]
check "truncated copy with --state: a truncated finding in JSON" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); sys.exit(0 if any(f["kind"]=="truncated" and f["expected"] for f in d["findings"]) else 1)' "$T/v"

# The helper checkpoints by itself (sbx.conf checkpoint_records): with 1,
# every run leaves the log fully covered.
CONF=$P/etc/sbx/sbx.conf
cp -p "$CONF" "$T/conf.save"
sed -i 's/^checkpoint_records = .*/checkpoint_records = 1/' "$CONF"
sbx_run run -c 'print("sealed")'
cp -p "$T/conf.save" "$CONF"
"$AUDIT" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "checkpoint_records = 1: the helper checkpointed the run (verify exit 0)" [ "$rc" = 0 ]
"$AUDIT" checkpoint >"$T/cp" 2>/dev/null
check "checkpoint_records = 1: the newest checkpoint covers every record" \
	[ "$(sed -n 2p "$T/cp")" = "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from records").fetchone()[0])' "$DB")" ]
finish
