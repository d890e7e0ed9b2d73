#!/bin/sh
# SPDX-License-Identifier: ISC
# C2SP interoperability (issue 14, item 9), checked against an
# implementation nobody here wrote: Go's golang.org/x/mod/sumdb/note and
# tlog (Debian golang-golang-x-mod-dev, tools/install-deps), through
# tests/interop/c2sp.go. Go must read sbx's verifier key and checkpoints
# and check its inclusion proofs with tlog.CheckRecord; sbx must accept a
# checkpoint Go cosigned with 16 witnesses (signed-note: at least 16
# signatures) and refuse one of another origin; the two agree on which
# key names are valid.
. "$(dirname "$0")/lib.sh"
plan 13
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOTOOLCHAIN=local
C2SP=$T/c2sp
if ! go build -o "$C2SP" "$SBX_SRCDIR/tests/interop/c2sp.go" 2>"$T/go.err"; then
	diag "$(cat "$T/go.err")" "go and golang-golang-x-mod-dev are test dependencies (tools/install-deps)"
fi
check "tests/interop/c2sp.go builds against Debian's golang.org/x/mod" [ -x "$C2SP" ]

sbx_run run --json -c "print('c2sp')"
id=$(jget id)
vk=$("$AUDIT" key --verifier)
diag "verifier key: $vk"
"$AUDIT" checkpoint >"$T/note"
check "the default origin is HOST/sbx (a schema-less URL-like name)" \
	sh -c 'head -1 "$1" | grep -qx "[^/ ]*/sbx"' _ "$T/note"
"$C2SP" open "$vk" "$T/note" >"$T/open" 2>&1
diag "$(cat "$T/open")"
check "Go: NewVerifier reads sbx-audit key --verifier, Open verifies the checkpoint" \
	grep -q "^$(head -1 "$T/note") [0-9]* " "$T/open"
sed '2s/^[0-9]*$/999999/' "$T/note" >"$T/forged"
check "Go: a checkpoint with another size does not verify" sh -c '! "$1" open "$2" "$3" 2>/dev/null' _ "$C2SP" "$vk" "$T/forged"

"$AUDIT" prove "$id" >"$T/proof.json"
"$C2SP" proof "$vk" "$T/proof.json" >"$T/p" 2>&1
diag "$(cat "$T/p")"
check "Go: tlog.CheckRecord accepts sbx's inclusion proofs of the run's records" grep -qx "proofs 2 ok" "$T/p"

"$C2SP" cosign "$vk" "$T/note" 16 "$T/cosigned" 2>"$T/e"
diag "$(cat "$T/e")"
check "Go cosigned the checkpoint with 16 witnesses (17 signatures, over 1024 bytes)" \
	sh -c '[ "$(grep -c "^— " "$1")" = 17 ] && [ "$(wc -c <"$1")" -gt 1024 ]' _ "$T/cosigned"
"$AUDIT" verify --state "$T/cosigned" >"$T/v" 2>&1; vrc=$?
diag "$(cat "$T/v")"
check "sbx accepts the cosigned checkpoint as a --state (exit 0)" [ "$vrc" = 0 ]
"$AUDIT" verify --key "$vk" >"$T/v" 2>&1; vrc=$?
check "verify --key VKEY (the verifier key instead of --pubkey): exit 0" [ "$vrc" = 0 ]
"$AUDIT" verify --key "$vk" --origin other.example/sbx >"$T/v" 2>&1; vrc=$?
diag "$(head -3 "$T/v")"
check "verify --origin pins the origin: checkpoints of another are checkpoint-bad (exit 1)" \
	sh -c "[ $vrc = 1 ] && grep -q 'checkpoint-bad: .*not the pinned other.example/sbx' '$T/v'"
# A note Go signed under the same name with another key is not ours.
sed '/^$/,$d' "$T/note" >"$T/text"
"$C2SP" sign "$(head -1 "$T/note")" "$T/text" >"$T/gosigned" 2>&1
sed 1d "$T/gosigned" >"$T/gonote"
"$AUDIT" verify --state "$T/gonote" >"$T/v" 2>&1; vrc=$?
check "a checkpoint of this origin signed by another key (Go): log-replaced (exit 1)" \
	sh -c "[ $vrc = 1 ] && grep -q 'log-replaced' '$T/v'"

# Key names: Go's isValidName and sbx agree (Unicode spaces, '+', UTF-8).
agree=0
for name in 'host.example/sbx' 'h\303\251te/sbx' 'a b' 'a+b' 'a\302\240b' 'a\342\200\203b' 'a\343\200\200b' 'a\377b' 'a\tb'; do
	nm=$(printf "$name")
	"$C2SP" name "$nm"; g=$?
	"$AUDIT" key --verifier --origin "$nm" >/dev/null 2>&1; s=$?
	[ "$g" = 0 ] && [ "$s" = 0 ] || { [ "$g" != 0 ] && [ "$s" = 2 ]; } || { agree=1; diag "disagree on '$name': go $g, sbx $s"; }
done
check "key names: sbx-audit key --origin and Go's note.NewSigner agree on 9 names" [ "$agree" = 0 ]
vk2=$("$AUDIT" key --verifier --origin 'x.example/sbx')
check "key --verifier --origin: the name is the given one, the hash matches (Go reads it)" \
	sh -c '"$1" sign n "$2" >/dev/null 2>&1; case "$3" in x.example/sbx+????????+*) exit 0;; esac; exit 1' _ "$C2SP" "$T/text" "$vk2"
"$AUDIT" verify --key 'x.example/sbx+00000000+AAAA' >"$T/v" 2>&1; vrc=$?
check "verify --key with a hash that does not match: usage error (exit 2)" \
	sh -c "[ $vrc = 2 ] && grep -q 'hash does not match\|not base64' '$T/v'"
finish
