#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 21: retry metadata the caller makes up (issue 11,
# finding 9). The caller runs sbx-helper directly (tests/escape/drive.py)
# and claims an attempt number above the policy's max_attempts (5 in the
# default policy; the argv parser alone allows up to 10): refused with
# one line, and the refusal recorded; at the cap the run goes ahead. Then
# it claims parents: a made-up run id, its own run of another session, its
# own run of the same session but not the previous attempt, and the real
# previous attempt. The claim stays in the record (parent); START says
# what the log makes of it (parent_check): only the last is "verified".
#
# Defences checked by removing them: check_attempt() (helper/load.c) not
# called in prepare(), which is main before the fix: --attempt 6 and 10
# ran and were recorded as attempts 6 and 10 of a policy that allows 5:
# tests 1-2 failed. parent_field() (recorder/recorder.c) not called: no
# parent_check in START, the made-up parent looked like a real one: tests
# 5-7 failed. rec_log_parent_check() (recorder/log.c) as before the
# review's finding 7 (uid, session label, attempt only): test 6 failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 7

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
check "--attempt above the policy's max_attempts: refused (77, limit_above_policy) with one line" \
	[ "$(dcol attempt-6 2) $(dcol attempt-6 4) $(dcol attempt-10 2) $(dcol attempt-10 4)" = "77 one 77 one" ]
check "the line names the claim and the cap" \
	sh -c 'echo "$1" | grep -qx "sbx-helper: --attempt 6 exceeds the policy.s max_attempts 5"' _ "$(dget attempt-6 stderr)"
check "the refusal is recorded (START and END sandbox_error) with the reason" \
	sh -c '[ "$1 $2" = "sandbox_error sandbox_error" ] && "$3" show "$4" | grep -q "max_attempts 5"' _ \
	"$(dcol attempt-6 6)" "$(end_outcome "$(dcol attempt-6 7)")" "$AUDIT" "$(dcol attempt-6 7)"
check "--attempt at the cap: the run goes ahead" [ "$(dcol attempt-5 2) $(dcol attempt-5 6)" = "0 ok" ]

# --parent: the caller's claim, and what the log says of it
p1=$(dcol attempt-5 7)
python3 - "$T/cases.json" "$p1" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds
p1 = sys.argv[2]
json.dump([{"name": "made-up", "argv": base + ["--session", "retry-claims", "--attempt", "2", "--parent", "0123456789abcdef0123456789abcdef"]},
           {"name": "other-session", "argv": base + ["--session", "elsewhere", "--attempt", "2", "--parent", p1]},
           {"name": "skipped", "argv": base + ["--session", "retry-claims", "--attempt", "3", "--parent", p1]}],
          open(sys.argv[1], "w"))
PY
drive "$T/cases.json"
made=$(dcol made-up 7) other=$(dcol other-session 7) skipped=$(dcol skipped 7)
# parent_check ID: the START's verdict on its --parent claim
parent_check() { "$AUDIT" show --json "$1" | python3 -c 'import json, sys
d = json.load(sys.stdin)["start"]; print(d.get("parent_id") or d.get("parent"), d.get("parent_check"))'; }
# The review's finding 7: two unrelated runs, neither in a session, the
# second naming the first: both START records were "verified". Now a chain
# needs its session label (sbx's retry loop always gives one), the same
# language and policy, and a parent that ended, not ok. "first" fails, as
# a run a retry follows does.
python3 - "$T/cases.json" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
py = ["run", "--lang", "python"] + fds
fail = "raise SystemExit(3)"
json.dump([{"name": "first", "argv": py + ["--session", "chain", "--attempt", "1"], "code": fail},
           {"name": "lone", "argv": py + ["--attempt", "1"], "code": fail},
           {"name": "fine", "argv": py + ["--session", "okchain", "--attempt", "1"]}],
          open(sys.argv[1], "w"))
PY
drive "$T/cases.json"
first=$(dcol first 7) lone=$(dcol lone 7) fine=$(dcol fine 7)
python3 - "$T/cases.json" "$first" "$lone" "$fine" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
first, lone, fine = sys.argv[2:5]
py = ["run", "--lang", "python"] + fds
json.dump([{"name": "second", "argv": py + ["--session", "chain", "--attempt", "2", "--parent", first]},
           {"name": "unrelated", "argv": py + ["--attempt", "2", "--parent", lone]},
           {"name": "after-ok", "argv": py + ["--session", "okchain", "--attempt", "2", "--parent", fine]},
           {"name": "other-lang", "argv": ["run", "--lang", "sh"] + fds + ["--session", "chain", "--attempt", "2",
                                                                          "--parent", first], "code": "echo RAN"}],
          open(sys.argv[1], "w"))
PY
drive "$T/cases.json"
second=$(dcol second 7)
got="$(parent_check "$made"); $(parent_check "$other"); $(parent_check "$skipped")"
diag "$got"
check "made-up, other session, skipped attempt: each recorded as claimed, with what the log says" [ "$got" = \
	"0123456789abcdef0123456789abcdef no such run; $p1 another session; $p1 not the previous attempt" ]
got="$(parent_check "$(dcol unrelated 7)"); $(parent_check "$(dcol after-ok 7)"); $(parent_check "$(dcol other-lang 7)")"
diag "$got"
check "unrelated runs without a session, a retry of a run that ended ok, another language: not verified" [ "$got" = \
	"$lone no session; $fine parent ended ok; $first another language" ]
check "the real previous attempt: verified" [ "$(parent_check "$second")" = "$first verified" ]
finish
