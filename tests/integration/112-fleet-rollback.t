#!/bin/sh
# SPDX-License-Identifier: ISC
# The central store refuses what does not extend what it has (issue 21
# item 3): a forged record (a changed blob, a changed signature), a
# forged checkpoint, and a host rolled back (its log cut back and regrown: records the store
# archived are replaced by others the host signed): exit 1 for forgery,
# exit 5 for an inconsistent host, one line naming the record or the
# checkpoint, and the archive unchanged (one transaction). Then the
# honest host goes on importing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fleet.sh"
plan 10
fleet_setup 3
export_b "$T/b1"
imp "$HB" "$T/b1"
B_DB=$(archive "$HB")
check "host B's first export imports (exit 0)" [ "$irc" = 0 ]
count() { sq "$B_DB" "select count(*) from records"; }
sig() { sq "$B_DB" "select hex(sig) from records order by seq" | md5sum; }
before=$(sig)
hostb_runs 2; export_b "$T/b2"
# edit one field of the shipped bytes: base64 word 3 (blob) or 4 (sig) of line 2
edit() { python3 - "$@" <<'PY'
import base64, sys
src, dst, word = sys.argv[1], sys.argv[2], int(sys.argv[3])
L = open(src).read().split("\n")
w = L[1].split(" ")
b = bytearray(base64.b64decode(w[word]))
b[len(b) // 2] ^= 0x01
w[word] = base64.b64encode(bytes(b)).decode()
L[1] = " ".join(w)
open(dst, "w").write("\n".join(L))
PY
}
edit "$T/b2" "$T/forged-blob" 2
imp "$HB" "$T/forged-blob"; diag "$(cat "$T/imp")"
check "a record with one changed byte: refused (exit 1), 'forged record'" \
	sh -c "[ $irc = 1 ] && grep -q 'record 7.*forged record' '$T/imp'"
edit "$T/b2" "$T/forged-sig" 3
imp "$HB" "$T/forged-sig"
check "a record with a changed signature: refused (exit 1)" sh -c "[ $irc = 1 ] && grep -q 'record 7' '$T/imp'"
python3 - "$T/b2" "$T/forged-ckpt" <<'PY'
import base64, sys
L = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(L):
    if l.startswith("checkpoint "):
        w = l.split(" ")
        note = base64.b64decode(w[2]).decode().split("\n")
        note[1] = str(int(note[1]) + 1)
        w[2] = base64.b64encode("\n".join(note).encode()).decode()
        L[i] = " ".join(w)
open(sys.argv[2], "w").write("\n".join(L))
PY
imp "$HB" "$T/forged-ckpt"; diag "$(cat "$T/imp")"
check "a checkpoint with another size: refused (exit 1), 'checkpoint refused'" \
	sh -c "[ $irc = 1 ] && grep -q 'checkpoint refused' '$T/imp'"
c5=$(count); s5=$(sig)
check "the archive is unchanged by every refusal (6 records, same signatures)" \
	sh -c '[ "$1" = 6 ] && [ "$2" = "$3" ]' _ "$c5" "$s5" "$before"
imp "$HB" "$T/b2"
check "the genuine export still imports after the refusals (exit 0)" [ "$irc" = 0 ]
cp "$B_DB" "$T/archive.before"
# Roll host B back to 4 records and regrow it past what the store has.
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("delete from records where seq>4"); c.execute("delete from checkpoints where size>4"); c.commit()' "$HBDB"
hostb_runs 5
"$AUDIT" --db "$HBDB" export --format records --since-seq 0 >"$T/rolled"
nb=$(count)
imp "$HB" "$T/rolled"; diag "$(cat "$T/imp")"
check "the rolled-back host: exit 5, 'rolled back or forked', naming record 5" \
	sh -c "[ $irc = 5 ] && grep -q 'record 5 differs from the archived record 5 and the host signed it: the host.s log was rolled back or forked' '$T/imp'"
check "nothing of the rolled-back log was imported" [ "$(count)" = "$nb" ]
# the host's cursor was kept: the next export starts after 10, whose
# chain no longer extends the archive's record 10
export_b "$T/rolled2"
imp "$HB" "$T/rolled2"; diag "$(cat "$T/imp")"
check "its next incremental export: refused (exit 1, 'rolled back or forked' named as possible)" \
	sh -c "[ $irc = 1 ] && grep -q 'rolled back or forked' '$T/imp'"
grep -c "exit=5" "$STORE/hostb.example%2Fsbx/import.log" >"$T/n5"
check "import.log keeps the inconsistent import (exit=5)" [ "$(cat "$T/n5")" = 1 ]
finish
