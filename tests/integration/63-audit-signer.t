#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx-signer (issue 14, item 3): the signing key belongs to _sbxsign in a
# directory of its own; the recorder (_sbx, which parses the payload's
# output) cannot read it, and every record and checkpoint is signed by
# sbx-signer, which keeps the last checkpoint it signed. Whoever can write
# the log (the _sbx account) and rolls it back to an older copy gets no
# run recorded on top of it: the signer refuses, the run is not started.
# Defence removed -> check that fails: the recorder signing with the key
# itself (before this change) -> "the key is not readable by _sbx" and
# "a rolled-back log: the run is refused".
. "$(dirname "$0")/lib.sh"
plan 11
DB=$P/var/lib/sbx/audit.db
SD=$P/var/lib/sbx-signer
copy() { python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$1" "$2"; }
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2], sys.argv[3:]).fetchone()
print("" if r is None or r[0] is None else r[0])' "$@"; }

sbx_run run -c 'print("signed by sbx-signer")'
check "a run is recorded" [ "$rc" = 0 ]
check "the key is _sbxsign's, 0400, in a 0700 directory of _sbxsign" sh -c \
	"[ \"\$(stat -c '%U %a' '$SD')\" = '_sbxsign 700' ] && [ \"\$(stat -c '%U %a' '$SD/audit.key')\" = '_sbxsign 400' ]"
check "the key is not readable by _sbx (the recorder's account)" \
	sh -c '! setpriv --reuid=_sbx --regid=_sbx --clear-groups cat "$1/audit.key" >/dev/null 2>&1' _ "$SD"
check "the signer keeps its state: the head it signed is the log's last record" \
	sh -c "grep -qx \"head \$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select max(seq) from records\").fetchone()[0])' '$DB')\" '$SD/state'"
"$AUDIT" verify >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "the log verifies (signed by the signer with the log's key)" [ "$vrc" = 0 ]

# Roll the log back to an older copy, as whoever can write it could.
copy "$DB" "$T/old.db"
sbx_run run -c 'print(2)'
sbx_run run -c 'print(3)'
copy "$DB" "$T/now.db"
copy "$T/old.db" "$DB"
sbx_run run -c 'print("on a rolled-back log")'
diag "$(cat "$T/err")"
check "on a rolled-back log the run is refused (not started, exit 74: the audit log failed)" sh -c \
	"[ $rc = 74 ] && grep -q 'audit log unavailable' '$T/err' && ! grep -q 'on a rolled-back log' '$T/out'"
check "... because sbx-signer refused: at or below the checkpoint it signed" \
	grep -q 'sbx-signer refused: record [0-9]* is at or below the checkpoint of [0-9]* records' "$T/err"
check "nothing was added to the rolled-back log" \
	[ "$(sq "$DB" "select max(seq) from records")" = "$(sq "$T/old.db" "select max(seq) from records")" ]
copy "$T/now.db" "$DB"
sbx_run run -c 'print("the real log again")'
check "the real log back: runs are recorded again" sh -c "[ $rc = 0 ] && \"$AUDIT\" verify >/dev/null"
# root's checkpoint --write (no --key) signs through the signer's directory:
# its state stays the signer's, and the next run goes on.
"$AUDIT" checkpoint --write >"$T/cp" 2>&1; crc=$?
diag "$(cat "$T/cp")"
check "checkpoint --write as root, through the signer's directory: exit 0" [ "$crc" = 0 ]
sbx_run run -c 'print("after root wrote a checkpoint")'
check "... the state is still _sbxsign's and the next run is recorded" \
	sh -c "[ $rc = 0 ] && [ \"\$(stat -c %U '$SD/state')\" = _sbxsign ] && [ \"\$(stat -c %U '$SD/lock')\" = _sbxsign ]"
finish
