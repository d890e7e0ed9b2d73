#!/bin/sh
# SPDX-License-Identifier: ISC
# The log: every run listed, verify clean, one tampered row found, readable
# only by root and group sbx-audit.
. "$(dirname "$0")/lib.sh"
plan 7
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub

sbx_run run --json -c 'print("audit me")'
id=$(jget id)
check "sbx-audit list shows the run" sh -c '"$1" list | grep -q "$2"' _ "$AUDIT" "$id"
# a checkpoint follows every run: a healthy log verifies clean
"$AUDIT" verify >"$T/v" 2>&1; vrc=$?
check "verify: exit 0" [ "$vrc" = 0 ]
check "verify: OK: N records (checkpoint at N)" grep -Eq '^OK: ([0-9]+) records \(checkpoint at \1\)$' "$T/v"

python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$DB" "$T/copy.db"
seq=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select seq from records where run_id=? and kind=\"end\"",(sys.argv[2],)).fetchone()[0])' "$T/copy.db" "$id")
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("update records set outcome=\"error\" where seq=?",(int(sys.argv[2]),)); c.commit()' "$T/copy.db" "$seq"
"$AUDIT" --db "$T/copy.db" --pubkey "$PUB" verify >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "tampered column: verify fails" [ "$vrc" = 1 ]
check "tampered column: names the record" grep -q "seq $seq" "$T/v"

run_as sbxtest "$AUDIT" list >/dev/null 2>&1; rc=$?
check "a user outside sbx-audit cannot read the log" [ "$rc" != 0 ]
check "log mode 0640, group sbx-audit" [ "$(stat -c '%a %G' "$DB")" = "640 sbx-audit" ]
finish
