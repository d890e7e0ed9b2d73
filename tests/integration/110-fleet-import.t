#!/bin/sh
# SPDX-License-Identifier: ISC
# Logs from many hosts (issue 21 item 3): each host ships its signed
# records and checkpoints as `sbx-audit export --format records --resume`
# files, and a central store imports them per host with `sbx-audit import`,
# checking every record with the host's key from the keyring. Two hosts
# (lib-fleet.sh): the real install and a second log with its own key.
# Asserted: both import, each archive verifies with the existing verifier,
# an export delivered twice imports nothing, the next export carries only
# what is new, and a file of another host, a host missing from the keyring,
# a wrong key, a cut-off file and a skipped export are each refused with
# one line, the documented exit status and nothing imported.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fleet.sh"
plan 16
fleet_setup 3
sbx_run run -c 'print(110)'
sbx_run run -c 'import sys; sys.exit(3)'
export_a "$T/a1"; arc=$?
export_b "$T/b1"
check "export --format records: exit 0, a header naming the origin, an end line" \
	sh -c '[ '$arc' = 0 ] && head -1 "$1" | grep -qx "sbx-audit-records 1 $2" && tail -1 "$1" | grep -q "^end [1-9][0-9]* [1-9][0-9]*$"' _ "$T/a1" "$HA"
imp "$HA" "$T/a1"; diag "$(cat "$T/imp")"
check "host A imports (exit 0, one line naming the records)" sh -c "[ $irc = 0 ] && grep -q '^import: $HA: imported records 1-' '$T/imp'"
imp "$HB" "$T/b1"; diag "$(cat "$T/imp")"
check "host B imports into its own archive (exit 0: records 1-6)" sh -c "[ $irc = 0 ] && grep -q 'imported records 1-6 (6)' '$T/imp'"
A_DB=$(archive "$HA"); B_DB=$(archive "$HB")
check "one archive per host, DIR/HOST/audit.db (the origin's '/' as %2F)" \
	sh -c '[ -f "$1" ] && [ -f "$2" ] && [ -f "'"$STORE"'/hostb.example%2Fsbx/audit.db" ]' _ "$A_DB" "$B_DB"
"$AUDIT" --db "$B_DB" verify --key "$(sed -n 3p "$RING")" >"$T/v" 2>&1; vrc=$?
diag "$(tail -2 "$T/v")"
check "the archive of B verifies with B's key (sbx-audit verify: exit 0)" [ "$vrc" = 0 ]
na=$(sq "$A_DB" "select count(*) from records"); nh=$(tail -1 "$T/a1" | cut -d' ' -f2)
check "A's archive holds every record the export shipped ($nh)" [ "$na" = "$nh" ]
imp "$HA" "$T/a1"
check "the same export again: exit 0, nothing new, nothing added" \
	sh -c "[ $irc = 0 ] && grep -q 'nothing new' '$T/imp' && [ \$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from records\").fetchone()[0])' '$A_DB') = $na ]"
sbx_run run -c 'print(1101)'
export_a "$T/a2"
first=$(sed -n 2p "$T/a2" | cut -d' ' -f2)
check "the next export starts after the last one (record $((na + 1)))" [ "$first" = $((na + 1)) ]
imp "$HA" "$T/a2"; diag "$(cat "$T/imp")"
check "and extends the archive (exit 0)" sh -c "[ $irc = 0 ] && grep -q 'imported records $((na + 1))-' '$T/imp'"
imp "$HB" "$T/a2"
check "A's export as host B: refused (exit 1), naming both origins" sh -c "[ $irc = 1 ] && grep -q 'is of origin $HA, not --host $HB' '$T/imp'"
grep -v "^$HA+" "$RING" >"$T/ring2"
"$AUDIT" import --host "$HA" --keyring "$T/ring2" --into "$STORE" "$T/a2" >"$T/imp" 2>&1; irc=$?
check "a host not in the keyring: refused (exit 1)" sh -c "[ $irc = 1 ] && grep -q 'no key for this origin' '$T/imp'"
hostb_runs 1; export_b "$T/b2"
"$AUDIT" --pubkey "$WPUB" key --verifier --origin "$HB" >"$T/wrongkey"
{ grep -v "^$HB+" "$RING"; cat "$T/wrongkey"; } >"$T/ring3"
nb=$(sq "$B_DB" "select count(*) from records")
"$AUDIT" import --host "$HB" --keyring "$T/ring3" --into "$STORE" "$T/b2" >"$T/imp" 2>&1; irc=$?
diag "$(cat "$T/imp")"
check "B's records checked with another key: refused (exit 1), nothing imported" \
	sh -c "[ $irc = 1 ] && grep -q 'not signed by this key\|signature does not verify' '$T/imp' && [ \$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from records\").fetchone()[0])' '$B_DB') = $nb ]"
head -c -1 "$T/b2" >"$T/cut"
imp "$HB" "$T/cut"
check "a cut-off export (no final newline): refused (exit 1), 'cut short'" sh -c "[ $irc = 1 ] && grep -q 'cut short' '$T/imp'"
sed '$d' "$T/b2" >"$T/noend"
imp "$HB" "$T/noend"
check "an export without its end line: refused (exit 1)" sh -c "[ $irc = 1 ] && grep -q 'no end line' '$T/imp'"
hostb_runs 1; export_b "$T/b3"
imp "$HB" "$T/b3"; diag "$(cat "$T/imp")"
check "an export that skips one (b2 not imported): refused, 'does not extend' (exit 1)" \
	sh -c "[ $irc = 1 ] && grep -q 'does not extend the archive, which ends at record $nb' '$T/imp'"
imp "$HB" "$T/b2"; diag "$(cat "$T/imp")"; imp "$HB" "$T/b3"; diag "$(cat "$T/imp")"
check "imported in order, both go in (exit 0); import.log has a line per import" \
	sh -c "[ $irc = 0 ] && [ \$(wc -l <'$STORE/hostb.example%2Fsbx/import.log') -ge 8 ]"
finish
