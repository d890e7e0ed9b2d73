#!/bin/sh
# SPDX-License-Identifier: ISC
# Checkpoints leave the host through sbx.conf's witnesses (issue 14 item
# 4): with audit_witness_dir every checkpoint the recorder signs is also a
# file SIZE-DIGEST.note there, with audit_witness_command a root-owned
# program gets it on standard input; sbx-audit verify --witness takes the
# directory (or the command's file) and catches a log rolled back or
# re-signed against them. A command that is not root's is never run, one
# that fails or hangs costs a syslog warning and at most 5 s, never the run.
. "$(dirname "$0")/lib.sh"
plan 12
CONF=$P/etc/sbx/sbx.conf
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub
W=$P/var/witness65
cp -p "$CONF" "$T/conf.save"
trap 'cp -p "$T/conf.save" "$CONF"; rm -rf "$W" "$T"' EXIT
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2], sys.argv[3:]).fetchone(); c.commit()
print("" if r is None or r[0] is None else r[0])' "$@"; }
copy() { python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$1" "$2"; }

sbx_run run -c pass # the audit log exists from here on
rm -rf "$W"
mkdir -p "$W/dir" "$W/cmd"
chown _sbx "$W/dir" "$W/cmd"
chmod 0700 "$W/dir" "$W/cmd"
# the command: root's, appends what it is given to a file _sbx may write
printf '#!/bin/sh\ncat >> %s/cmd/notes\n' "$W" >"$W/ship"
chmod 0755 "$W/ship"
conf() { cp -p "$T/conf.save" "$CONF"; sed -i "s|^\[sbx\]\$|[sbx]\n$1|" "$CONF"; }
conf "audit_witness_dir = $W/dir\naudit_witness_command = $W/ship --flag"

sbx_run run --json -c 'print(65)'
check "a run with both witnesses: exit 0" [ "$rc" = 0 ]
cs=$(sq "$DB" "select max(size) from checkpoints")
check "the checkpoint of $cs records is a file in the witness directory" sh -c 'ls "$1" | grep -q "^$2-[0-9a-f]\{16\}\.note\$"' _ "$W/dir" "$cs"
f=$(ls "$W/dir" | grep "^$cs-")
check "the file is the signed note, mode 0640" sh -c '[ "$(stat -c %a "$1")" = 640 ] && head -2 "$1" | tail -1 | grep -qx "$2"' _ "$W/dir/$f" "$cs"
check "the command got the same note on its standard input" cmp -s "$W/cmd/notes" "$W/dir/$f"
"$AUDIT" verify --witness "$W/dir" >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "verify --witness DIR: the log agrees with its witnesses (exit 0)" [ "$vrc" = 0 ]

# a rollback to before the last run: the witnesses saw more
copy "$DB" "$T/now.db"
sq "$T/now.db" "delete from records where seq > ?" $((cs - 2)) >/dev/null
sq "$T/now.db" "delete from checkpoints where size > ?" $((cs - 2)) >/dev/null
"$AUDIT" --db "$T/now.db" --pubkey "$PUB" verify --witness "$W/dir" >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "rolled back log against the witness directory: exit 1, truncated or rolled-back" \
	sh -c "[ $vrc = 1 ] && grep -q ': \(truncated\|rolled-back\): ' '$T/v'"
"$AUDIT" --db "$T/now.db" --pubkey "$PUB" verify --witness "$W/cmd/notes" >"$T/v" 2>&1; vrc=$?
check "... and against the command's file: exit 1" [ "$vrc" = 1 ]

# a command the caller could replace is never run; one that fails or
# hangs does not cost the run
chown sbxtest "$W/ship"
: >"$W/cmd/notes"
sbx_run run -c 'print(1)'
check "a witness command not owned by root: the run still succeeds" [ "$rc" = 0 ]
check "... and the command never ran" [ ! -s "$W/cmd/notes" ]
chown root "$W/ship"
printf '#!/bin/sh\nsleep 30\n' >"$W/ship"
t0=$(date +%s)
sbx_run run -c 'print(1)'
t1=$(date +%s)
check "a command that hangs is killed: the run succeeds within 5 s more" sh -c '[ "$1" = 0 ] && [ $(($3 - $2)) -lt 20 ]' _ "$rc" "$t0" "$t1"
chmod 0 "$W/dir"
chown root "$W/dir"
sbx_run run -c 'print(1)'
check "a witness directory it cannot write: the run still succeeds" [ "$rc" = 0 ]

cp -p "$T/conf.save" "$CONF"
sed -i 's|^\[sbx\]$|[sbx]\naudit_witness_dir = relative/dir|' "$CONF"
sbx_run run -c 'print(1)'
check "audit_witness_dir not absolute: sbx.conf refused with the key named" sh -c '[ "$1" = 125 ] && grep -q "audit_witness_dir: .relative/dir. is not an absolute path" "$2"' _ "$rc" "$T/err"
finish
