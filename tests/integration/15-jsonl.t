#!/bin/sh
# SPDX-License-Identifier: ISC
# --jsonl: one JSON object per line, output events as they come (a UTF-8
# character split between writes arrives whole), the result last; sbx's
# own errors as a result event too; with --fix, attempt and fix events.
. "$(dirname "$0")/lib.sh"
plan 8

lines_ok() { python3 -c 'import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
exec(sys.argv[2])' "$T/out" "$1"; }

cat >"$T/split.py" <<'PY'
import sys, time
print("one", flush=True)
sys.stdout.buffer.write(b"\xc3"); sys.stdout.flush(); time.sleep(0.2)
sys.stdout.buffer.write(b"\xa9\n"); sys.stdout.flush()
print("oops", file=sys.stderr)
sys.exit(3)
PY
chmod 644 "$T/split.py"
sbx_run run --jsonl "$T/split.py"
check "exit status of the program" [ "$rc" = 3 ]
check "every line is one JSON object with an event" lines_ok 'assert ev and all(isinstance(e, dict) and "event" in e for e in ev), ev'
check "stdout events carry the output, the split character whole" lines_ok '
assert "".join(e["data"] for e in ev if e["event"] == "stdout") == "one\n\u00e9\n", ev
assert all("\ufffd" not in e.get("data", "") for e in ev), ev'
check "stderr event" lines_ok 'assert "".join(e["data"] for e in ev if e["event"] == "stderr") == "oops\n", ev'
check "the result comes last" lines_ok 'assert ev[-1]["event"] == "result" and ev[-1]["result"]["exit_code"] == 3 and [e["event"] for e in ev].count("result") == 1, ev'

sbx_run run --jsonl --policy no-such-policy -c 'print(1)'
# no such policy: refused like a policy that does not allow the caller (77)
check "sbx error: exit 77, one result event with sandbox_error" sh -c '[ "$1" = 77 ] && python3 -c "
import json,sys; ev=[json.loads(l) for l in open(sys.argv[1])]
assert ev[-1] == {\"event\": \"result\", \"result\": ev[-1][\"result\"]} and ev[-1][\"result\"][\"outcome\"] == \"sandbox_error\", ev
" "$2"' _ "$rc" "$T/out"

install -m 0755 "$SBX_SRCDIR/examples/fixers/line-fixer" "$T/line-fixer"
install -m 0644 "$SBX_SRCDIR/examples/fixers/three-attempts.py" "$T/three.py"
sbx_run run --jsonl --fix "$T/line-fixer" "$T/three.py"
check "--fix: attempt, fix, attempt, fix, attempt, result" lines_ok '
seq = [(e["event"], e.get("attempt")) for e in ev if e["event"] in ("attempt", "fix", "result")]
assert seq == [("attempt", 1), ("fix", 1), ("attempt", 2), ("fix", 2), ("attempt", 3), ("result", None)], seq'
check "--fix: the final result lists the attempts" lines_ok 'assert ev[-1]["result"]["stop_reason"] == "ok" and len(ev[-1]["result"]["attempts"]) == 3, ev[-1]'
finish
