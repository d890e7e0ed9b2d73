#!/bin/sh
# SPDX-License-Identifier: ISC
# A failing program: outcome error, parsed traceback, audited.
. "$(dirname "$0")/lib.sh"
plan 15

cp "$SBX_SRCDIR/examples/divide_by_zero.py" "$T/divide_by_zero.py"
chmod 644 "$T/divide_by_zero.py"
sbx_run run --json "$T/divide_by_zero.py"
check "exit status 1" [ "$rc" = 1 ]
check "outcome error" [ "$(jget outcome)" = error ]
check "exception type" [ "$(jget traceback.type)" = ZeroDivisionError ]
check "frames point at the submitted file" sh -c 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
fr=d[\"traceback\"][\"frames\"]
assert any(f[\"file\"].endswith(\"divide_by_zero.py\") and f[\"line\"] for f in fr), fr
" "$1"' _ "$T/out"
check "stderr has the traceback" sh -c 'grep -q "ZeroDivisionError" "$1"' _ "$T/out"
check "audited as error" [ "$(audit_field "$(jget id)" end.outcome)" = error ]
check "error object: {code error, the exception's type and message, hint, line, the traceback text}" sh -c 'python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); e=d[\"error\"]; t=d[\"traceback\"]
assert sorted(e) == [\"code\", \"hint\", \"line\", \"message\", \"traceback\", \"type\"], e
assert e[\"code\"]==\"error\" and e[\"type\"]==\"ZeroDivisionError\" and e[\"message\"]==t[\"message\"] and e[\"line\"]==t[\"line\"], e
assert e[\"traceback\"].startswith(\"Traceback (most recent call last):\") and e[\"traceback\"]==t[\"text\"], e
" "$1"' _ "$T/out"
sbx_run run --json --lang sh -c 'echo partial; echo "no such thing" >&2; exit 3'
check "error object, no traceback: type error, the last stderr line" \
	[ "$(jget error.code)|$(jget error.type)|$(jget error.message)" = "error|error|no such thing" ]
sbx_run run --json --lang sh -c 'exit 3'
check "error object, nothing on stderr: the message says the exit status" \
	[ "$(jget error.code)|$(jget error.message)" = "error|the program exited with status 3 and wrote nothing to stderr" ]
sbx_run run --json -c 'print(1)'
check "error is null when the outcome is ok" [ "$(jget error)" = null ]

# At the wall-time limit the payload gets SIGINT first: Python shows where
# it was stuck as a KeyboardInterrupt traceback, and the outcome stays timeout.
printf 'def spin():\n    while True:\n        pass\nspin()\n' > "$T/spin.py"
chmod 644 "$T/spin.py"
sbx_run run --json --timeout 1s "$T/spin.py"
check "timeout: outcome timeout, exit 124" [ "$(jget outcome)/$rc" = timeout/124 ]
check "timeout: KeyboardInterrupt traceback" [ "$(jget traceback.type)" = KeyboardInterrupt ]
check "timeout: the innermost frame is the loop in spin.py" sh -c 'python3 -c "
import json,sys; f=json.load(open(sys.argv[1]))[\"traceback\"][\"frames\"][-1]
assert f[\"file\"].endswith(\"spin.py\") and f[\"function\"]==\"spin\" and f[\"line\"] in (2,3), f
" "$1"' _ "$T/out"
# ... and a payload that ignores SIGINT is killed all the same, soon after.
sbx_run run --json --timeout 1s -c 'import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True: pass'
check "SIGINT ignored: still outcome timeout" [ "$(jget outcome)" = timeout ]
check "SIGINT ignored: killed within 1.5 s of the limit" [ "$(jget wall_ms)" -lt 2500 ]
finish
