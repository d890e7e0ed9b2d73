#!/bin/sh
# SPDX-License-Identifier: ISC
# The retry loop (sbx run --fix): every stop condition, the fixer's input
# document, both answer forms, and the audit links between attempts.
. "$(dirname "$0")/lib.sh"
plan 39

install -m 0755 "$SBX_SRCDIR/examples/fixers/line-fixer" "$T/line-fixer"
install -m 0644 "$SBX_SRCDIR/examples/fixers/three-attempts.py" "$T/three.py"
printf 'print(1/0)\n' >"$T/fail.py"
chmod 644 "$T/fail.py"
# A fixer that always offers new code that still fails: a comment more.
# With FIX_HANG_AT=N it answers nothing from attempt N on (it sleeps until
# it is killed), so a budget can only run out while it runs.
cat >"$T/more" <<'PY'
#!/usr/bin/env python3
import json, sys, time, os
d = json.load(sys.stdin)
time.sleep(float(os.environ.get("FIX_SLEEP", "0")))
if d["attempt"] >= int(os.environ.get("FIX_HANG_AT") or 1 << 30):
    time.sleep(3600)
print(d["code"] + "#")
PY
chmod 755 "$T/more"
summary() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join("%s:%s" % (a["attempt"], a["outcome"]) for a in d["attempts"]))' "$T/out"; }

# 1. Success on the third attempt, with the deterministic fixer.
sbx_run run --json --fix "$T/line-fixer" "$T/three.py"
check "three attempts: exit 0" [ "$rc" = 0 ]
check "three attempts: stop_reason ok" [ "$(jget stop_reason)" = ok ]
check "three attempts: error, error, ok" [ "$(summary)" = "1:error 2:error 3:ok" ]
check "attempt 1 failed on NameError, attempt 2 on ZeroDivisionError" \
	[ "$(jget attempts.0.error_type) $(jget attempts.1.error_type)" = "NameError ZeroDivisionError" ]
check "the last result is attempt 3's" [ "$(jget attempt) $(jget stdout)" = "3 mean 4.0
max 5" ]
id1=$(jget attempts.0.id) id2=$(jget attempts.1.id) id3=$(jget attempts.2.id) sess=$(jget session)
check "session id shared by the result" sh -c 'case $1 in fix-????????????????) ;; *) exit 1;; esac' _ "$sess"
check "audit: the three attempts share the session" \
	[ "$(audit_field "$id1" start.session) $(audit_field "$id2" start.session) $(audit_field "$id3" start.session)" = "$sess $sess $sess" ]
check "audit: attempt numbers 1 2 3" \
	[ "$(audit_field "$id1" start.attempt) $(audit_field "$id2" start.attempt) $(audit_field "$id3" start.attempt)" = "1 2 3" ]
check "audit: each attempt names its predecessor" \
	[ "$(audit_field "$id2" start.parent_id) $(audit_field "$id3" start.parent_id)" = "$id1 $id2" ]
check "audit: the log verifies each claim (parent_check verified: same session, language, policy, the previous failed attempt)" \
	[ "$(audit_field "$id2" start.parent_check) $(audit_field "$id3" start.parent_check)" = "verified verified" ]
check "audit: attempt 1 has no predecessor" sh -c 'p=$1; [ -z "$p" ] || [ "$p" = null ]' _ "$(audit_field "$id1" start.parent_id)"
check "result lists parents" [ "$(jget attempts.2.parent)" = "$id2" ]

# Plain mode: the output streams, progress lines on stderr.
sbx_run run --fix "$T/line-fixer" "$T/three.py"
check "plain mode: exit 0 and the final output" sh -c '[ "$1" = 0 ] && grep -q "^max 5$" "$2"' _ "$rc" "$T/out"
check "plain mode: progress and stop lines" sh -c 'grep -q "^sbx: fix: attempt 1 of 5: error, exit 1 (NameError" "$1" &&
	grep -q "^sbx: fix: stopped after 3 attempts: ok$" "$1"' _ "$T/err"

# 2. The fixer's input document.
sbx_run run --json --fix "cat >$T/doc.json; exit 3" "$T/three.py"
check "document: protocol, attempt, language, name" sh -c 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
assert (d[\"protocol\"], d[\"attempt\"], d[\"max_attempts\"], d[\"language\"], d[\"name\"]) == (\"sbx-fix-1\", 1, 5, \"python\", \"three.py\"), d
" "$1"' _ "$T/doc.json"
check "document: the code as submitted" sh -c 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert d[\"code\"] == open(sys.argv[2]).read()
" "$1" "$2"' _ "$T/doc.json" "$T/three.py"
check "document: the result with the traceback mapped to the user's line" sh -c 'python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))[\"result\"]
assert r[\"outcome\"] == \"error\" and r[\"exit_code\"] == 1, r
tb = r[\"traceback\"]; assert tb[\"type\"] == \"NameError\" and tb[\"line\"] == 6, tb
f = [f for f in tb[\"frames\"] if f[\"in_code\"]]
assert f and f[-1][\"line\"] == 6 and f[-1][\"file\"] == \"/code/three.py\", tb
assert \"NameError\" in r[\"stderr\"] and r[\"stderr_excerpted\"] is False, r
" "$1"' _ "$T/doc.json"

# 3. Stop: the fixer fails.
check "fixer failed: exit status of the attempt" [ "$rc" = 1 ]
check "fixer failed: stop_reason, detail" [ "$(jget stop_reason) / $(jget stop_detail)" = "fixer_failed / the fixer exited with status 3" ]
check "fixer failed: one attempt" [ "$(summary)" = "1:error" ]

# 4. Stop: the fixer answers nothing.
sbx_run run --json --fix true "$T/fail.py"
check "empty answer: fixer_failed, no code" [ "$(jget stop_reason) / $(jget stop_detail)" = "fixer_failed / it answered no code" ]

# 5. Stop: the fixer times out; what it started is killed too.
start=$(date +%s)
sbx_run run --json --fix-timeout 300ms --fix "sleep 31.25 & sleep 31.25" "$T/fail.py"
check "fixer timeout: stop_reason" [ "$(jget stop_reason)" = fixer_timeout ]
check "fixer timeout: did not wait for the fixer" [ $(( $(date +%s) - start )) -lt 10 ]
check "fixer timeout: its process group is gone" sh -c '! pgrep -u sbxtest -f "sleep 31.25" >/dev/null'

# 6. Stop: code already tried (the fixer has no "# fix:" for the line).
sbx_run run --json --fix "$T/line-fixer" "$T/fail.py"
check "repeated code: stop_reason" [ "$(jget stop_reason)" = repeated_code ]
check "repeated code: one attempt run" [ "$(summary)" = "1:error" ]

# 7. The raw answer form.
sbx_run run --json --fix "printf 'print(6*7)\n'" "$T/fail.py"
check "raw answer: run and succeeded" [ "$rc $(jget stop_reason) $(jget stdout)" = "0 ok 42" ]

# 8. Stop: the caps. --max-attempts, the policy's max_attempts (5), 10.
sbx_run run --json --max-attempts 2 --fix "$T/more" "$T/fail.py"
check "--max-attempts 2: two attempts" [ "$(summary)" = "1:error 2:error" ]
check "--max-attempts 2: stop_reason max_attempts, exit 1" [ "$(jget stop_reason) $rc" = "max_attempts 1" ]
sbx_run run --json --max-attempts 9 --fix "$T/more" "$T/fail.py"
check "policy max_attempts 5 caps --max-attempts 9" [ "$(summary) $(jget max_attempts)" = "1:error 2:error 3:error 4:error 5:error 5" ]
check "policy cap: stop_reason max_attempts" [ "$(jget stop_reason)" = max_attempts ]
sbx_run run --max-attempts 11 --fix true "$T/fail.py"
check "--max-attempts 11: refused (hard cap 10), a usage error (2)" sh -c '[ "$1" = 2 ] && grep -q "^sbx: --max-attempts: .11. is not a number from 1 to 10$" "$2"' _ "$rc" "$T/err"
sbx_run run --budget 1s "$T/fail.py"
check "--budget without --fix: refused (2)" sh -c '[ "$1" = 2 ] && grep -q "need --fix" "$2"' _ "$rc" "$T/err"

# 9. Stop: the budget. The fixer answers at once after attempt 1 and never
# after attempt 2, so the budget runs out during the second fixer run
# whatever the machine's load: 8 s is the time two attempts may take (0.1-
# 0.3 s each here, several times that under sanitizers and load), not a
# race. The fixer is killed when the budget runs out.
start=$(date +%s%N)
run_as sbxtest env FIX_HANG_AT=2 "$SBX" run --json --budget 8s --fix "$T/more" "$T/fail.py" >"$T/out" 2>"$T/err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "budget: stop_reason budget, ran out while the fixer ran" \
	[ "$(jget stop_reason)|$(jget stop_detail)" = "budget|the budget of 8000 ms ran out while the fixer ran" ]
check "budget: two attempts" [ "$(summary)" = "1:error 2:error" ]
check "budget: the loop ended at the budget, the fixer killed ($ms ms)" sh -c '[ "$1" -ge 8000 ] && [ "$1" -lt 20000 ]' _ "$ms"
# The budget also cuts an attempt's time limit: a sleeping attempt 2 gets
# what is left of 2 s, not the policy's 30 s.
printf 'import time\ntime.sleep(20)\n' >"$T/slow.py"
chmod 644 "$T/slow.py"
start=$(date +%s)
sbx_run run --json --timeout 20s --budget 2s --fix "$T/more" "$T/slow.py"
check "budget: the attempt timed out within the budget" [ "$(jget attempts.0.outcome) $(jget limits.wall_time_ms)" = "timeout 2000" ]
check "budget: nothing more after the budget" sh -c '[ "$1" = budget ] && [ $(( $(date +%s) - $2 )) -lt 10 ]' _ "$(jget stop_reason)" "$start"

check "no cgroups left" no_cgroups_left
finish
