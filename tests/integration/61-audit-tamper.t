#!/bin/sh
# SPDX-License-Identifier: ISC
# The tamper matrix of removals (issue 14): each manipulation of a copy of
# a real log, made the way whoever can write the file would (plain SQL),
# must give its finding's kind at its seq and exit status 1 (tampering) or
# 4 (a warning); a healthy log after 16 concurrent runs is exit 0.
. "$(dirname "$0")/lib.sh"
plan 41
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub
KEY=$P/var/lib/sbx/audit.key
BENCH=$SBX_SRCDIR/build-check-$(basename "$P")/audit-bench
copy() { python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$1" "$2"; }
# sq DB SQL [ARG...]: run SQL with ? bound to ARGs, print the first value
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2], sys.argv[3:]).fetchone(); c.commit()
print("" if r is None or r[0] is None else r[0])' "$@"; }
# V DB [ARGS]: verify DB; output in $T/v, status in $vrc
V() { db=$1; shift; "$AUDIT" --db "$db" --pubkey "$PUB" verify "$@" >"$T/v" 2>&1; vrc=$?; diag "$(cat "$T/v")"; }
has() { grep -q "^seq $1: $2: " "$T/v"; }

# --- a healthy log: 16 concurrent runs, every one checkpointed ---
i=0
while [ $i -lt 16 ]; do
	i=$((i + 1))
	run_as sbxtest "$SBX" run -c "print($i)" >/dev/null 2>&1 &
done
wait
top16=$(sq "$DB" "select max(seq) from records")
V "$DB"
check "16 concurrent runs: verify exit 0" [ "$vrc" = 0 ]
check "16 concurrent runs: OK: N records (checkpoint at N)" grep -qx "OK: $top16 records (checkpoint at $top16)" "$T/v"

# A run whose records we can find, with code of its own (a text run
# before would be the one code-missing names: the first START of a code).
sbx_run run --json -c "print('tamper target $(date +%s%N)')"
id=$(jget id)
sseq=$(sq "$DB" "select seq from records where run_id=? and kind='start'" "$id")
eseq=$(sq "$DB" "select seq from records where run_id=? and kind='end'" "$id")
code=$(sq "$DB" "select code_sha256 from records where seq=?" "$sseq")
copy "$DB" "$T/base.db"
"$AUDIT" --db "$T/base.db" --pubkey "$PUB" verify --state "$T/base.state" >"$T/base.v" 2>&1
nb=$(sq "$T/base.db" "select max(seq) from records")

# --- runs in progress: three STARTs after the last checkpoint ---
copy "$DB" "$T/p0.db"
for i in 1 2 3; do
	run_as sbxtest "$SBX" run -c 'import time; time.sleep(6)' >/dev/null 2>&1 &
done
t=0
while [ "$(sq "$DB" "select count(*) from records where seq > ? and kind='start'" "$nb")" -lt 3 ] && [ $t -lt 100 ]; do
	sleep 0.1; t=$((t + 1))
done
copy "$DB" "$T/p.db"
wait
m=$(sq "$T/p.db" "select max(seq) from records")
V "$T/p.db" --state "$T/p.state"
check "runs in progress: exit 0, and said so" sh -c "[ $vrc = 0 ] && grep -q '3 runs in progress)\$' '$T/v'"
check "runs in progress: the state pins the newest record" grep -q "^head $m " "$T/p.state"

for k in 1 2 3; do
	copy "$T/p.db" "$T/cut$k.db"
	sq "$T/cut$k.db" "delete from records where seq > ?" $((m - k)) >/dev/null
	cp "$T/p.state" "$T/cut.state"
	V "$T/cut$k.db" --state "$T/cut.state"
	check "tail cut by $k after the last checkpoint: exit 1" [ "$vrc" = 1 ]
	check "tail cut by $k: truncated at seq $((m - k + 1))" has $((m - k + 1)) truncated
done
check "tail cut: the state is not moved by a failed verify" cmp -s "$T/p.state" "$T/cut.state"

# An older copy with the same last checkpoint.
check "the older copy has the same newest checkpoint" \
	[ "$(sq "$T/p0.db" "select note from checkpoints order by size desc limit 1")" = "$(sq "$T/p.db" "select note from checkpoints order by size desc limit 1")" ]
V "$T/p0.db" --state "$T/p.state"
check "rollback to an older copy: exit 1, truncated at seq $((nb + 1))" sh -c "[ $vrc = 1 ] && grep -q '^seq $((nb + 1)): truncated: ' '$T/v'"
# ... and written again: the records the state saw are others now.
copy "$T/p0.db" "$T/again.db"
printf 'mallory 1666 default python3 ok - 2026-01-01T00:00:00Z print(1)\nmallory 1666 default python3 ok - 2026-01-01T00:00:01Z print(2)\n' |
	"$BENCH" fixture "$T/again.db" "$KEY" 2>&1
V "$T/again.db" --state "$T/p.state"
check "rolled back and appended to: exit 1, rolled-back at seq $m" sh -c "[ $vrc = 1 ] && grep -q '^seq $m: rolled-back: ' '$T/v'"

# --- the whole log gone, with a state ---
V "$T/missing.db" --state "$T/p.state"
check "log deleted, with a state: exit 1, truncated at seq 1" sh -c "[ $vrc = 1 ] && grep -q '^seq 1: truncated: ' '$T/v'"
: >"$T/empty.db"
V "$T/empty.db" --state "$T/p.state"
check "log emptied, with a state: exit 1, truncated at seq 1" sh -c "[ $vrc = 1 ] && grep -q '^seq 1: truncated: ' '$T/v'"
echo junk >"$T/junk.db"
V "$T/junk.db" --state "$T/p.state"
check "log replaced by junk, with a state: exit 1, truncated at seq 1" sh -c "[ $vrc = 1 ] && grep -q '^seq 1: truncated: ' '$T/v'"
V "$T/missing.db"
check "log deleted, without a state: cannot read (exit 3)" [ "$vrc" = 3 ]

# --- a keyless fake rotation: the oldest run deleted, the base set by hand ---
copy "$T/base.db" "$T/fake.db"
k=$(sq "$T/fake.db" "select min(size) from checkpoints where kept=1")
chain=$(sq "$T/fake.db" "select hex(chain) from records where seq=?" "$k" | tr A-F a-f)
sq "$T/fake.db" "delete from records where seq <= ?" "$k" >/dev/null
sq "$T/fake.db" "insert or replace into meta(key, value) values('base_seq', ?)" "$k" >/dev/null
sq "$T/fake.db" "insert or replace into meta(key, value) values('base_chain', ?)" "$chain" >/dev/null
V "$T/fake.db"
check "fake rotation: exit 1" [ "$vrc" = 1 ]
check "fake rotation: rotation-unsigned at seq $((k + 1))" has $((k + 1)) rotation-unsigned
check "fake rotation: no rotation-unsigned for the real log" sh -c '! grep -q rotation-unsigned "$1"' _ "$T/base.v"

# --- the code table and its search index ---
copy "$T/base.db" "$T/code.db"
sq "$T/code.db" "delete from code where sha256=?" "$code" >/dev/null
V "$T/code.db"
check "code row deleted: exit 1, code-missing at the START (seq $sseq)" sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: code-missing: ' '$T/v'"
copy "$T/base.db" "$T/subst.db"
python3 -c 'import sqlite3,sys,hashlib
c=sqlite3.connect(sys.argv[1]); t=b"print(\"an innocent text\")\n"
c.execute("delete from code where sha256=?", (sys.argv[2],))
c.execute("insert into code(sha256, text) values(?, ?)", (hashlib.sha256(t).hexdigest(), t)); c.commit()' "$T/subst.db" "$code"
V "$T/subst.db"
check "code row substituted (another text under its own digest): exit 1, code-missing at seq $sseq" \
	sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: code-missing: ' '$T/v'"
copy "$T/base.db" "$T/fts.db"
sq "$T/fts.db" "insert into code_fts(code_fts, rowid, text) select 'delete', rowid, text from code where sha256=?" "$code" >/dev/null
check "FTS entry removed: search --code-contains no longer finds the run" \
	sh -c '! "$1" --db "$2" search --code-contains "tamper target" | grep -q "$3"' _ "$AUDIT" "$T/fts.db" "$id"
V "$T/fts.db"
check "FTS entry removed: exit 1, index-mismatch at the START (seq $sseq)" sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: index-mismatch: ' '$T/v'"

# --- checkpoint rows ---
copy "$T/base.db" "$T/ck1.db"
k=$(sq "$T/ck1.db" "select min(size) from checkpoints where kept=1")
sq "$T/ck1.db" "delete from checkpoints where size=?" "$k" >/dev/null
V "$T/ck1.db"
check "a kept checkpoint row deleted: exit 1 without a state" [ "$vrc" = 1 ]
check "a kept checkpoint row deleted: checkpoint-missing at the START after it (seq $((k + 1)))" has $((k + 1)) checkpoint-missing
copy "$T/base.db" "$T/ck2.db"
top=$(sq "$T/ck2.db" "select max(size) from checkpoints")
sq "$T/ck2.db" "delete from checkpoints where size=?" "$top" >/dev/null
V "$T/ck2.db"
check "the newest checkpoint row deleted, no state: a warning (exit 4)" sh -c "[ $vrc = 4 ] && grep -q 'uncheckpointed-tail' '$T/v'"
cp "$T/base.state" "$T/ck.state"
V "$T/ck2.db" --state "$T/ck.state"
check "the newest checkpoint row deleted, with a state: exit 1, checkpoint-missing at seq $top" \
	sh -c "[ $vrc = 1 ] && grep -q '^seq $top: checkpoint-missing: ' '$T/v'"
copy "$T/base.db" "$T/ck3.db"
sq "$T/ck3.db" "delete from checkpoints" >/dev/null
V "$T/ck3.db" --state "$T/ck.state"
check "every checkpoint row deleted, with a state: exit 1" [ "$vrc" = 1 ]
check "every checkpoint row deleted: checkpoint-missing at seq $top" has "$top" checkpoint-missing

# --- START/END pairing ---
copy "$T/base.db" "$T/nostart.db"
sq "$T/nostart.db" "delete from records where seq=?" "$sseq" >/dev/null
V "$T/nostart.db"
check "START deleted: exit 1" [ "$vrc" = 1 ]
check "START deleted: seq-gap at seq $sseq" has "$sseq" seq-gap
check "START deleted: end-without-start at the END (seq $eseq)" has "$eseq" end-without-start
# A START whose END never came (the recorder died), long ago.
"$AUDIT" keygen --key "$T/k" --pubkey "$T/k.pub" --user "$(id -un)" >/dev/null
printf 'alice 1001 default python3 incomplete - 2025-01-02T03:04:05Z print(1)\nbob 1002 default sh ok - 2025-01-02T03:05:05Z echo\n' |
	"$BENCH" fixture "$T/inc.db" "$T/k" 2>&1
"$AUDIT" --db "$T/inc.db" --pubkey "$T/k.pub" verify >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "START without END, long ago: a warning (exit 4)" [ "$vrc" = 4 ]
check "START without END: incomplete at seq 1, the only finding" sh -c "grep -q '^seq 1: incomplete: ' '$T/v' && [ \$(grep -c '^seq ' '$T/v') = 1 ]"

# --- the intact copy still verifies, and so does the real log ---
V "$T/base.db" --state "$T/base.state"
check "the untouched copy with its state: exit 0" [ "$vrc" = 0 ]
V "$DB"
check "the live log after the runs in progress ended: exit 0" sh -c "[ $vrc = 0 ] && grep -q '^OK: ' '$T/v'"
check "no cgroup left" no_cgroups_left
check "the live log has its three sleepers' ENDs" \
	[ "$(sq "$DB" "select count(*) from records where seq > ? and kind='end'" "$nb")" = 3 ]
check "verify --json: in_progress and checkpoint_size" sh -c '"$1" verify --json | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if d[\"in_progress\"]==0 and d[\"checkpoint_size\"]==d[\"records\"] else 1)"' _ "$AUDIT"
finish
