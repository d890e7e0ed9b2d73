#!/bin/sh
# SPDX-License-Identifier: ISC
# Checkpoints end to end: the helper writes one after every run, so the
# newest covers every finished run; verify --state saves it with the newest
# record; prove a run's inclusion and check the proof offline; a copy of the
# log with its tail and its checkpoints cut is caught, with --state and
# without (the STARTs name the kept checkpoints).
. "$(dirname "$0")/lib.sh"
plan 16
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub
KEY=$P/var/lib/sbx/audit.key
nrec() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from records").fetchone()[0])' "$1"; }

sbx_run run --json -c 'print("checkpoint me")'
id=$(jget id)
"$AUDIT" checkpoint >"$T/cp" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "checkpoint: exit 0, the helper wrote one" [ "$rc" = 0 ]
check "checkpoint: C2SP note with an em dash signature line" \
	grep -q "^$(printf '\342\200\224') " "$T/cp"
check "checkpoint: the run's END is covered (tree size = records)" [ "$(sed -n 2p "$T/cp")" = "$(nrec "$DB")" ]
"$AUDIT" checkpoint --write --key "$KEY" >"$T/cp2" 2>"$T/err"; rc=$?
check "checkpoint --write with nothing new: exit 0, the same note" sh -c "[ $rc = 0 ] && cmp -s '$T/cp' '$T/cp2'"

"$AUDIT" verify --state "$T/state" >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "verify --state (first use): exit 0" [ "$rc" = 0 ]
check "verify --state saved the newest record and the checkpoint" \
	sh -c "head -1 '$T/state' | grep -qx 'sbx-audit verify state 2' && sed -n 2p '$T/state' | grep -Eq '^head $(nrec "$DB") [0-9a-f]{64} [0-9a-f]{128}\$' && tail -n +3 '$T/state' | cmp -s - '$T/cp'"

"$AUDIT" prove "$id" >"$T/proof" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "prove of the latest run, no checkpoint --write: exit 0" [ "$rc" = 0 ]
"$AUDIT" verify-proof --pubkey "$PUB" "$T/proof" >"$T/vp" 2>&1; rc=$?
check "verify-proof: exit 0" [ "$rc" = 0 ]
check "verify-proof: START and END proven" [ "$(grep -c '^OK: seq' "$T/vp")" = 2 ]
python3 -c 'import json,sys,base64
d=json.load(open(sys.argv[1])); b=bytearray(base64.b64decode(d["proofs"][0]["blob"])); b[-1]^=1
d["proofs"][0]["blob"]=base64.b64encode(bytes(b)).decode(); json.dump(d,open(sys.argv[2],"w"))' "$T/proof" "$T/bad"
"$AUDIT" verify-proof --pubkey "$PUB" "$T/bad" >/dev/null 2>&1; rc=$?
check "verify-proof: an altered record fails" [ "$rc" = 1 ]

# A second run: checkpointed too, no tail.
sbx_run run --json -c 'print("tail")'
"$AUDIT" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "verify after another run: exit 0, OK: N records (checkpoint at N)" \
	sh -c "[ $rc = 0 ] && grep -qx 'OK: $(nrec "$DB") records (checkpoint at $(nrec "$DB"))' '$T/v'"

"$AUDIT" verify --state "$T/state" >/dev/null 2>&1
cp "$T/cp" "$T/cp1"
"$AUDIT" checkpoint >"$T/cp" 2>/dev/null

# Cut the tail (the second run's END) and every checkpoint from a copy.
python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$DB" "$T/copy.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); m=c.execute("select max(seq) from records").fetchone()[0]; c.execute("delete from records where seq>=?",(m,)); c.execute("delete from checkpoints"); c.commit()' "$T/copy.db"
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "checkpoints deleted, without --state: exit 1" [ "$rc" = 1 ]
check "checkpoints deleted, without --state: checkpoint-missing at the START that names one" \
	grep -Eq '^seq [0-9]+: checkpoint-missing: the START names the kept checkpoint' "$T/v"
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify --json --state "$T/state" >"$T/v" 2>&1; rc=$?
diag "$(cat "$T/v")"
check "truncated copy with --state: exit 1" [ "$rc" = 1 ]
check "truncated copy with --state: a truncated finding in JSON" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); sys.exit(0 if any(f["kind"]=="truncated" and f["expected"] for f in d["findings"]) else 1)' "$T/v"
check "the state file is unchanged after tampering" sh -c "tail -n +3 '$T/state' | cmp -s - '$T/cp'"
finish
