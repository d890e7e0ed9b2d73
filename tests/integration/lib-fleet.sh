# SPDX-License-Identifier: ISC
# Shared by the fleet tests (110-114, sourced after lib.sh): two hosts and
# a central store on this machine. Host A is the real install in $P: its
# log is written by real runs (recorder, sbx-signer, checkpoints after
# every run) and signed by its own key. Host B is a second log with a key
# of its own (origin hostb.example/sbx), written through the real append
# and checkpoint functions by audit-bench: a second setuid install would
# need a second build with other compiled-in paths, and what the store
# checks is the log, its key and its exports, which are the same. The
# store is a directory, its keyring one verifier key a line.
BENCH=$SBX_SRCDIR/build-check-$(basename "$P")/audit-bench
STORE=$T/store
RING=$T/keyring
HB=hostb.example/sbx
HBDB=$T/hostb.db
HBKEY=$T/hostb.key
HBPUB=$T/hostb.pub
WNAME=witness.example/central
WKEY=$T/witness.key
WPUB=$T/witness.pub
HA=$("$AUDIT" key --verifier | cut -d+ -f1)
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
for r in c.execute(sys.argv[2], sys.argv[3:]).fetchall(): print("" if r[0] is None else r[0])
c.commit()' "$@"; }
# hostb_runs N: N more runs (two records each and a checkpoint) on host B
hostb_runs() { AUDIT_BENCH_ORIGIN=$HB "$BENCH" gen "$HBDB" "$HBKEY" "$1" >/dev/null 2>&1; }
fleet_setup() {
	"$AUDIT" keygen --key "$HBKEY" --pubkey "$HBPUB" >/dev/null
	"$AUDIT" keygen --key "$WKEY" --pubkey "$WPUB" >/dev/null
	hostb_runs "${1:-3}"
	{
		echo "# central store keyring: one host a line (sbx-audit key --verifier)"
		"$AUDIT" key --verifier
		"$AUDIT" --db "$HBDB" --pubkey "$HBPUB" key --verifier
	} >"$RING"
}
# export_a FILE / export_b FILE: the next export of host A / B (--resume)
export_a() { "$AUDIT" export --format records --resume "$T/a.cursor" >"$1"; }
export_b() { "$AUDIT" --db "$HBDB" export --format records --resume "$T/b.cursor" >"$1"; }
# imp HOST FILE [ARGS]: import into the store; output in $T/imp, status in $irc
imp() { h=$1; f=$2; shift 2; "$AUDIT" import --host "$h" --keyring "$RING" --into "$STORE" "$@" "$f" >"$T/imp" 2>&1; irc=$?; }
archive() { python3 -c 'import sys,urllib.parse; print(sys.argv[1] + "/" + "".join(c if c.isalnum() or c in "-_" or (c == "." and i) else "%%%02X" % ord(c) for i, c in enumerate(sys.argv[2])) + "/audit.db")' "$STORE" "$1"; }
# note_at DB SIZE: the stored checkpoint note of SIZE records, byte for byte
note_at() { python3 -c 'import sqlite3,sys
r=sqlite3.connect(sys.argv[1]).execute("select note from checkpoints where size=?", (int(sys.argv[2]),)).fetchone()
sys.stdout.write(r[0] if r else "")' "$1" "$2"; }
