#!/bin/sh
# SPDX-License-Identifier: ISC
# RFC 9162 consistency proofs between checkpoints (issue 21 item 3):
# `sbx-audit consistency OLD NEW` produces the proof from a log's leaves
# and checks one offline with --proof. Checked against an implementation
# nobody here wrote, Go's golang.org/x/mod/sumdb/tlog (ProveTree,
# CheckTree) through tests/interop/fleet.go: for every pair of a log's
# checkpoints, the two produce the same hashes and each accepts the
# other's proof; a changed, shortened or misplaced proof is refused
# (exit 5), as is a NEW smaller than OLD and a log that was rolled back.
# (Every (m, n) up to 70 leaves, odd sizes too: tests/unit/test_consistency.c.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fleet.sh"
plan 9
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOTOOLCHAIN=local
FLEET=$T/fleet
if ! go build -o "$FLEET" "$SBX_SRCDIR/tests/interop/fleet.go" 2>"$T/go.err"; then
	diag "$(cat "$T/go.err")" "go and golang-golang-x-mod-dev are test dependencies (tools/install-deps)"
fi
check "tests/interop/fleet.go builds against Debian's golang.org/x/mod" [ -x "$FLEET" ]
fleet_setup 0
VK=$(sed -n 3p "$RING")
# A checkpoint note after each run (2 records each): sizes 2, 4, ... 34.
# The log keeps only some of them (retention): keep each as it comes.
sizes=""
i=0
while [ $i -lt 17 ]; do
	hostb_runs 1
	s=$(sq "$HBDB" "select max(size) from checkpoints")
	note_at "$HBDB" "$s" >"$T/ck.$s"
	sizes="$sizes $s"
	i=$((i + 1))
done
sq "$HBDB" "select hex(leaf) from records order by seq" >"$T/leaves"
check "17 checkpoints of host B, sizes 2 to 34" [ "$(echo $sizes)" = "2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34" ]
same=0 gook=0 sbxok=0 pairs=0 bad=""
for om in $sizes; do
	for on in $sizes; do
		[ "$om" -le "$on" ] || continue
		pairs=$((pairs + 1))
		"$AUDIT" --db "$HBDB" consistency --key "$VK" "$T/ck.$om" "$T/ck.$on" >"$T/p.sbx" 2>"$T/e" || bad="$bad sbx:$om-$on"
		"$FLEET" prove "$T/leaves" "$om" "$on" >"$T/p.go" 2>>"$T/e" || bad="$bad goprove:$om-$on"
		cmp -s "$T/p.sbx" "$T/p.go" && same=$((same + 1))
		"$FLEET" check "$T/leaves" "$om" "$on" "$T/p.sbx" >/dev/null 2>>"$T/e" && gook=$((gook + 1))
		"$AUDIT" consistency --key "$VK" --proof "$T/p.go" "$T/ck.$om" "$T/ck.$on" >/dev/null 2>>"$T/e" &&
			sbxok=$((sbxok + 1))
		[ "$om" = 6 ] && [ "$on" = 34 ] && cp "$T/p.sbx" "$T/p.6-34"
	done
done
diag "pairs $pairs, identical $same, Go accepts sbx's $gook, sbx accepts Go's $sbxok${bad:+, failed:$bad}" "$(head -3 "$T/e")"
check "sbx and Go's tlog.ProveTree give the same proof for all $pairs pairs" [ "$same" = "$pairs" ]
check "Go's tlog.CheckTree accepts every proof sbx made" [ "$gook" = "$pairs" ]
check "sbx-audit consistency --proof accepts every proof Go made" [ "$sbxok" = "$pairs" ]
"$AUDIT" consistency --key "$VK" --proof "$T/p.6-34" "$T/ck.6" "$T/ck.34" >"$T/o" 2>&1; c1=$?
diag "$(cat "$T/o")"
python3 - "$T/p.6-34" "$T/p.bad" <<'PY'
import base64, sys
l = open(sys.argv[1]).read().split()
h = bytearray(base64.b64decode(l[1])); h[0] ^= 1; l[1] = base64.b64encode(bytes(h)).decode()
open(sys.argv[2], "w").write("\n".join(l) + "\n")
PY
"$AUDIT" consistency --key "$VK" --proof "$T/p.bad" "$T/ck.6" "$T/ck.34" >"$T/o" 2>&1; c2=$?
sed '$d' "$T/p.6-34" >"$T/p.short"
"$AUDIT" consistency --key "$VK" --proof "$T/p.short" "$T/ck.6" "$T/ck.34" >/dev/null 2>&1; c3=$?
"$AUDIT" consistency --key "$VK" --proof "$T/p.6-34" "$T/ck.8" "$T/ck.34" >/dev/null 2>&1; c4=$?
check "a good proof: exit 0 ('consistent'); a changed hash, one hash fewer, another OLD: exit 5" \
	sh -c "[ $c1 = 0 ] && [ $c2 = 5 ] && [ $c3 = 5 ] && [ $c4 = 5 ]"
"$AUDIT" --db "$HBDB" consistency --key "$VK" "$T/ck.34" "$T/ck.6" >"$T/o" 2>&1; c5=$?
check "NEW smaller than OLD: inconsistent (exit 5, 'cut back')" sh -c "[ $c5 = 5 ] && grep -q 'cut back' '$T/o'"
sed '2s/.*/36/' "$T/ck.34" >"$T/forged"
"$AUDIT" --db "$HBDB" consistency --key "$VK" "$T/ck.6" "$T/forged" >"$T/o" 2>&1; c6=$?
check "a checkpoint whose signature fails: exit 1" [ "$c6" = 1 ]
# Host B rolled back to 10 records and regrown to 34: its new checkpoint
# of 34 is signed by B, but the log no longer extends the checkpoint of 20.
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("delete from records where seq>10"); c.execute("delete from checkpoints where size>10"); c.commit()' "$HBDB"
i=0; while [ $i -lt 12 ]; do hostb_runs 1; i=$((i + 1)); done
s=$(sq "$HBDB" "select max(size) from checkpoints")
note_at "$HBDB" "$s" >"$T/ck.new"
"$AUDIT" --db "$HBDB" consistency --key "$VK" "$T/ck.20" "$T/ck.new" >"$T/o" 2>&1; c7=$?
diag "$(cat "$T/o")"
check "rolled back and regrown ($s records): OLD of 20 is not in the new log (exit 5)" \
	sh -c "[ $c7 = 5 ] && grep -q 'does not extend OLD' '$T/o'"
finish
