#!/bin/sh
# SPDX-License-Identifier: ISC
# Requests refused before a policy loaded, and the policy's text (issue 14
# item 7). A request for a policy that does not exist, or in a language
# sbx.conf does not have, is one signed REFUSED record (who asked, what,
# why, the SHA-256 of the code actually sent) where nothing was recorded
# before; the caller gets the same words and status as before. A run's
# policy file is kept by digest in the policy table (START names it by
# policy_sha256 and policy_bytes), and verify checks the row: deleting it
# or putting another text there is policy-missing or policy-modified at
# the START's seq, exit 1.
. "$(dirname "$0")/lib.sh"
plan 23
DB=$P/var/lib/sbx/audit.db
PUB=$P/etc/sbx/audit.pub
POL=$P/etc/sbx/policies.d
copy() { python3 -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$1" "$2"; }
sq() { python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2], sys.argv[3:]).fetchone(); c.commit()
print("" if r is None or r[0] is None else r[0])' "$@"; }
V() { db=$1; shift; "$AUDIT" --db "$db" --pubkey "$PUB" verify "$@" >"$T/v" 2>&1; vrc=$?; diag "$(cat "$T/v")"; }
# refused ID KEY: a field of the run's REFUSED record (show --json)
refused() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys
d=json.load(sys.stdin).get("refused") or {}
v=d.get(sys.argv[1])
print("null" if v is None else v)' "$2"; }

# a run first: the log exists (sq would create an empty file as root)
sbx_run run -c 'print(0)'
# --- a policy that does not exist, through sbx ---
n0=$(sq "$DB" "select count(*) from records")
sbx_run run --json --policy nothere64 -c 'print("refused code 64")'
diag "$(cat "$T/err")"
check "missing policy: refused by policy (77), as before" [ "$rc" = 77 ]
check "missing policy: the same words as a policy that does not allow the caller" \
	sh -c 'echo "$1" | grep -q "policy .nothere64. does not exist or does not allow user sbxtest"' _ "$(jget error.message)"
id=$(jget id)
check "missing policy: the result's limits are null (none applied)" [ "$(jget limits)" = null ]
check "missing policy: exactly one record more" [ "$(sq "$DB" "select count(*) from records")" = $((n0 + 1)) ]
check "missing policy: it is a REFUSED record of that request" \
	[ "$(sq "$DB" "select kind from records where run_id=?" "$id")" = refused ]
r_user=$(refused "$id" user); r_pol=$(refused "$id" requested_policy); r_lang=$(refused "$id" requested_language)
r_why=$(refused "$id" refusal); r_msg=$(refused "$id" refusal_message)
diag "user=$r_user policy=$r_pol language=$r_lang refusal=$r_why message=$r_msg"
check "REFUSED: the caller, what was asked, why" sh -c '[ "$1" = sbxtest ] && [ "$2" = nothere64 ] &&
	[ "$3" = python ] && [ "$4" = policy_denied ] && echo "$5" | grep -q "does not exist or does not allow"' \
	_ "$r_user" "$r_pol" "$r_lang" "$r_why" "$r_msg"
want=$(printf '%s' 'print("refused code 64")' | sha256sum | cut -d' ' -f1)
check "REFUSED: the SHA-256 and size of the code actually sent" \
	sh -c '[ "$1" = "$2" ] && [ "$3" = 24 ]' _ "$(refused "$id" code_sha256)" "$want" "$(refused "$id" code_bytes)"
"$AUDIT" show "$id" >"$T/show" 2>&1
check "show: a REFUSED record with what was asked, no policy or limits line" sh -c 'grep -q "^REFUSED seq " "$1" &&
	grep -q "^  asked policy  *nothere64\$" "$1" && ! grep -q "^  policy \|^  limits " "$1"' _ "$T/show"
check "REFUSED: no code text kept" [ "$(sq "$DB" "select count(*) from code where sha256=?" "$want")" = 0 ]

# --- driven directly: an unknown language (sbx checks it before it starts the
# helper), and code in a descriptor that is not a sealed memfd ---
cat > "$T/ask.py" <<'PY'
import os, socket, subprocess, sys
import sbxframes as F
helper, lang, policy, kind = sys.argv[1:5]
code = F.memfd(b"print('asked 64')", seal=(kind == "sealed"))
a, b = socket.socketpair()
argv = [helper, "run", "--lang", lang, "--code-fd", str(code), "--result-fd", str(b.fileno())]
if policy != "-":
    argv += ["--policy", policy]
p = subprocess.Popen(argv, pass_fds=(code, b.fileno()), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
b.close()
data = F.read_all(a, 20)
rc = p.wait(timeout=20)
res = F.result(data) or {}
print(rc, res.get("id"), (res.get("error") or {}).get("code"), "|".join(F.messages(data)))
PY
chmod 644 "$T/ask.py"
run_as sbxtest /usr/bin/python3 "$T/ask.py" "$P/libexec/sbx/sbx-helper" cobol64 - sealed >"$T/o" 2>"$T/e"
diag "$(cat "$T/o" "$T/e")"
set -- $(cat "$T/o")
check "unknown language: usage status (2) and unknown_language, as sbx(1) gives it" sh -c '[ "$1" = 2 ] && [ "$3" = unknown_language ]' _ "$@"
check "unknown language: the message names the languages there are" grep -q "no language 'cobol64' in .*there are: .*python" "$T/o"
lid=$2
check "unknown language: one REFUSED record (requested_language, refusal)" \
	sh -c '[ "$1" = cobol64 ] && [ "$2" = unknown_language ]' _ "$(refused "$lid" requested_language)" "$(refused "$lid" refusal)"
check "unknown language: the code's SHA-256 as sent" \
	[ "$(refused "$lid" code_sha256)" = "$(printf "%s" "print('asked 64')" | sha256sum | cut -d' ' -f1)" ]
run_as sbxtest /usr/bin/python3 "$T/ask.py" "$P/libexec/sbx/sbx-helper" python nothere64 unsealed >"$T/o" 2>"$T/e"
diag "$(cat "$T/o" "$T/e")"
set -- $(cat "$T/o")
uid=$2
check "missing policy, unsealed code: 77, recorded, the code never read (digest zeros, no size)" \
	sh -c '[ "$1" = 77 ] && [ "$2" = "$(printf "%064d" 0)" ] && [ "$3" = null ]' \
	_ "$1" "$(refused "$uid" code_sha256)" "$(refused "$uid" code_bytes)"

# --- a policy that does not parse: sbx's own failure (125), recorded ---
printf '[policy]\nno_such_key = 1\n' >"$POL/broken64.policy"
chmod 0644 "$POL/broken64.policy"
sbx_run run --json --policy broken64 -c 'print(1)'
rm -f "$POL/broken64.policy"
diag "$(cat "$T/err")"
bid=$(jget id)
check "policy that does not load: 125, one REFUSED record (setup)" \
	sh -c '[ "$1" = 125 ] && [ "$2" = setup ] && [ "$3" = broken64 ]' _ "$rc" "$(refused "$bid" refusal)" "$(refused "$bid" requested_policy)"

V "$DB"
check "the log with its REFUSED records verifies: exit 0, checkpointed" sh -c "[ $vrc = 0 ] && grep -q '^OK: .* (checkpoint at ' '$T/v'"

# --- the policy's text, by digest ---
printf '[policy]\ndescription = policy of test 64 %s\n' "$(date +%s%N)" >"$POL/text64.policy"
chmod 0644 "$POL/text64.policy"
sbx_run run --json --policy text64 -c 'print(64)'
check "a run under its own policy: exit 0" [ "$rc" = 0 ]
rid=$(jget id)
psha=$(sha256sum "$POL/text64.policy" | cut -d' ' -f1)
sseq=$(sq "$DB" "select seq from records where run_id=? and kind='start'" "$rid")
check "START: policy_sha256 and policy_bytes name the file" sh -c '[ "$1" = "$2" ] && [ "$3" = "$4" ]' _ \
	"$(audit_field "$rid" start.policy_sha256)" "$psha" "$(audit_field "$rid" start.policy_bytes)" "$(stat -c %s "$POL/text64.policy")"
python3 -c 'import sqlite3,sys
r=sqlite3.connect(sys.argv[1]).execute("select text from policy where sha256=?", (sys.argv[2],)).fetchone()
sys.stdout.buffer.write(r[0] if r else b"")' "$DB" "$psha" >"$T/ptext"
check "the policy table holds the file's text" cmp -s "$T/ptext" "$POL/text64.policy"
sbx_run run --json --policy text64 -c 'print(65)'
check "the same policy again: still one row" [ "$(sq "$DB" "select count(*) from policy where sha256=?" "$psha")" = 1 ]
rm -f "$POL/text64.policy"

copy "$DB" "$T/pdel.db"
sq "$T/pdel.db" "delete from policy where sha256=?" "$psha" >/dev/null
V "$T/pdel.db"
check "policy row deleted: exit 1, policy-missing at the START (seq $sseq)" \
	sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: policy-missing: ' '$T/v'"
copy "$DB" "$T/pmod.db"
sq "$T/pmod.db" "update policy set text=cast('[policy]
users = mallory
' as blob) where sha256=?" "$psha" >/dev/null
V "$T/pmod.db"
check "policy text edited: exit 1, policy-modified at the START (seq $sseq)" \
	sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: policy-modified: ' '$T/v'"
copy "$DB" "$T/psub.db"
python3 -c 'import sqlite3,sys,hashlib
c=sqlite3.connect(sys.argv[1]); t=b"[policy]\nusers = mallory\n"
c.execute("delete from policy where sha256=?", (sys.argv[2],))
c.execute("insert into policy(sha256, text) values(?, ?)", (hashlib.sha256(t).hexdigest(), t)); c.commit()' "$T/psub.db" "$psha"
V "$T/psub.db"
check "policy text substituted (another text under its own digest): exit 1, policy-missing at seq $sseq" \
	sh -c "[ $vrc = 1 ] && grep -q '^seq $sseq: policy-missing: ' '$T/v'"
finish
