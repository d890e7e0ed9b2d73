#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 21: retry metadata the caller makes up (issue 11,
# finding 9). The caller runs sbx-helper directly (tests/escape/drive.py)
# and claims an attempt number above the policy's max_attempts (5 in the
# default policy; the argv parser alone allows up to 10): refused with
# one line, and the refusal recorded; at the cap the run goes ahead.
#
# Defence checked by removing it: check_attempt() (helper/load.c) not
# called in prepare(), which is main before the fix: --attempt 6 and 10
# ran and were recorded as attempts 6 and 10 of a policy that allows 5:
# tests 1-2 failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 4

python3 - "$T/cases.json" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds + ["--session", "retry-claims"]
json.dump([{"name": "attempt-6", "argv": base + ["--attempt", "6"]},
           {"name": "attempt-10", "argv": base + ["--attempt", "10"]},
           {"name": "attempt-5", "argv": base + ["--attempt", "5"]}], open(sys.argv[1], "w"))
PY
drive "$T/cases.json"
diag "$(cut -f1-7 "$T/drive.tsv")" "$(dget attempt-6 stderr)"
check "--attempt above the policy's max_attempts: refused (125) with one line" \
	[ "$(dcol attempt-6 2) $(dcol attempt-6 4) $(dcol attempt-10 2) $(dcol attempt-10 4)" = "125 one 125 one" ]
check "the line names the claim and the cap" \
	sh -c 'echo "$1" | grep -qx "sbx-helper: --attempt 6 exceeds the policy.s max_attempts 5"' _ "$(dget attempt-6 stderr)"
check "the refusal is recorded (START and END sandbox_error) with the reason" \
	sh -c '[ "$1 $2" = "sandbox_error sandbox_error" ] && "$3" show "$4" | grep -q "max_attempts 5"' _ \
	"$(dcol attempt-6 6)" "$(end_outcome "$(dcol attempt-6 7)")" "$AUDIT" "$(dcol attempt-6 7)"
check "--attempt at the cap: the run goes ahead" [ "$(dcol attempt-5 2) $(dcol attempt-5 6)" = "0 ok" ]
finish
