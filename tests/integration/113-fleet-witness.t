#!/bin/sh
# SPDX-License-Identifier: ISC
# The central store as a witness (issue 21 item 4): each import cosigns
# the newest host checkpoint it verified, in the C2SP tlog-cosignature
# format (Ed25519 cosignature/v1, with a timestamp), with the store's own
# key. Checked with Go (tests/interop/fleet.go): the host signature with
# golang.org/x/mod/sumdb/note, the cosignature with crypto/ed25519 over
# the spec's signed message (the note package knows only type 0x01), the
# witness key as `sbx-audit key --cosigner` prints it. A changed
# cosignature or another witness key fails; a refused import cosigns
# nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fleet.sh"
plan 10
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOTOOLCHAIN=local
FLEET=$T/fleet
go build -o "$FLEET" "$SBX_SRCDIR/tests/interop/fleet.go" 2>"$T/go.err" || diag "$(cat "$T/go.err")"
fleet_setup 2
sbx_run run -c 'print(113)'
W="--witness-key $WKEY --witness-name $WNAME"
WVK=$("$AUDIT" --pubkey "$WPUB" key --cosigner --origin "$WNAME")
diag "witness key: $WVK"
check "key --cosigner: NAME+HASH+KEY of signature type 0x04" \
	python3 -c 'import base64,sys; n,h,k=sys.argv[1].split("+",2); b=base64.b64decode(k); sys.exit(not (n==sys.argv[2] and len(b)==33 and b[0]==4))' "$WVK" "$WNAME"
export_a "$T/a1"; export_b "$T/b1"
imp "$HA" "$T/a1" $W; ra=$irc
imp "$HB" "$T/b1" $W; rb=$irc
diag "$(cat "$T/imp")"
check "both hosts import and are cosigned (exit 0, 'cosigned by $WNAME')" \
	sh -c "[ $ra = 0 ] && [ $rb = 0 ] && grep -q 'cosigned by $WNAME' '$T/imp'"
CA=$(dirname "$(archive "$HA")")/checkpoint
CB=$(dirname "$(archive "$HB")")/checkpoint
check "DIR/HOST/checkpoint: the host's note, its signature and one witness line" \
	sh -c '[ "$(grep -c "^— " "$1")" = 2 ] && grep -q "^— '"$WNAME"' " "$1"' _ "$CB"
VA=$(sed -n 2p "$RING"); VB=$(sed -n 3p "$RING")
"$FLEET" cosig "$VA" "$WVK" "$CA" >"$T/ga" 2>&1; ga=$?
"$FLEET" cosig "$VB" "$WVK" "$CB" >"$T/gb" 2>&1; gb=$?
diag "$(cat "$T/ga" "$T/gb")"
now=$(date +%s)
check "Go: both cosignatures verify (host key with sumdb/note, the witness's with ed25519)" \
	sh -c "[ $ga = 0 ] && [ $gb = 0 ] && grep -q '^cosigned $HB ' '$T/gb'"
t=$(cut -d' ' -f4 "$T/gb")
check "the cosignature's timestamp is now (POSIX seconds, within 5 minutes)" \
	sh -c "[ $((now - t)) -ge 0 ] && [ $((now - t)) -lt 300 ]"
python3 - "$CB" "$T/bad" <<'PY'
import base64, sys
L = open(sys.argv[1]).read().split("\n")
i = max(k for k, l in enumerate(L) if l.startswith("\u2014 "))
name, b64 = L[i][2:].rsplit(" ", 1)
b = bytearray(base64.b64decode(b64)); b[-1] ^= 1
L[i] = "\u2014 " + name + " " + base64.b64encode(bytes(b)).decode()
open(sys.argv[2], "w").write("\n".join(L))
PY
check "Go: a changed cosignature does not verify" sh -c '! "$1" cosig "$2" "$3" "$4" 2>/dev/null' _ "$FLEET" "$VB" "$WVK" "$T/bad"
"$AUDIT" keygen --key "$T/other.key" --pubkey "$T/other.pub" >/dev/null
OVK=$("$AUDIT" --pubkey "$T/other.pub" key --cosigner --origin "$WNAME")
check "Go: the cosignature does not verify with another witness key" sh -c '! "$1" cosig "$2" "$3" "$4" 2>/dev/null' _ "$FLEET" "$VB" "$OVK" "$CB"
"$AUDIT" --db "$(archive "$HB")" consistency --key "$VB" "$CB" "$CB" >/dev/null 2>&1; cc=$?
check "sbx reads the cosigned note as a checkpoint (consistency with itself: exit 0)" [ "$cc" = 0 ]
cp "$CB" "$T/cb.before"
hostb_runs 1; export_b "$T/b2"
sed '2s/^record \([0-9]*\) \(.\)/record \1 A\2/' "$T/b2" >"$T/b2.bad"
imp "$HB" "$T/b2.bad" $W
check "a refused import (exit 1) cosigns nothing: DIR/HOST/checkpoint unchanged" \
	sh -c "[ $irc = 1 ] && cmp -s '$CB' '$T/cb.before'"
imp "$HB" "$T/b2" $W
"$FLEET" cosig "$VB" "$WVK" "$CB" >"$T/gb" 2>&1; gb=$?
nb=$(sq "$(archive "$HB")" "select count(*) from records")
check "the next import cosigns the new checkpoint (Go: size $nb)" \
	sh -c "[ $irc = 0 ] && [ $gb = 0 ] && [ $nb -gt 4 ] && grep -q '^cosigned $HB $nb ' '$T/gb'"
finish
