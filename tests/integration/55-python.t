#!/bin/sh
# SPDX-License-Identifier: ISC
# The Python package sbx (installed by `make install` into
# $PREFIX/lib/python3/dist-packages) against the real setuid install, as
# the unprivileged sbxtest: typed results, payload failures as results,
# sbx's own failures as sbx.Error with the result's error code, input
# files, sessions, streaming, and the agent examples' stub-model loops
# end to end. (python/tests run the same API against a stand-in sbx.)
. "$(dirname "$0")/lib.sh"
plan 8
PY=$P/lib/python3/dist-packages
py() { run_as sbxtest env PYTHONPATH="$PY" SBX="$SBX" HOME="$T" python3 -c "$1" >"$T/py" 2>&1; }

py 'import sbx
r = sbx.run("import numpy as np\nprint(int(np.arange(10).sum()))", timeout=20)
assert r.ok and r.stdout == "45\n" and r.exit_code == 0, r
assert isinstance(r.wall_ms, int) and r.audit.end_seq > r.audit.start_seq and len(r.id) == 32, r
print(sbx.__version__)'
diag "$(cat "$T/py")"
check "run: ok, typed, audited; __version__ is VERSION" [ "$(tail -n 1 "$T/py")" = "$(cat "$SBX_SRCDIR/VERSION")" ]
py 'import sbx
r = sbx.run("x = 1\n1/0")
assert r.outcome == "error" and r.exit_code == 1 and r.traceback.type == "ZeroDivisionError", r
assert r.traceback.line == 2 and r.error is not None and r.error.type == "ZeroDivisionError", r.error'
diag "$(cat "$T/py")"
check "run: a traceback is a Result with error and traceback, not an exception" [ ! -s "$T/py" ]
py 'import sbx
r = sbx.run("print(open(\"/in/a.csv\").read(), end=\"\")", inputs={"a.csv": "x,y\n1,2\n"})
assert r.stdout == "x,y\n1,2\n", r'
diag "$(cat "$T/py")"
check "run: inputs as a mapping land read-only under /in" [ ! -s "$T/py" ]
py 'import sbx, uuid
s = "py-" + uuid.uuid4().hex[:8]
sbx.run("open(\"note\", \"w\").write(\"kept\")", session=s)
r = sbx.run("print(open(\"note\").read())", session=s)
assert r.stdout == "kept\n" and r.session == s, r'
diag "$(cat "$T/py")"
check "run: a session keeps /work between runs" [ ! -s "$T/py" ]
py 'import sbx
kinds = [e.kind for e in sbx.stream("import sys\nprint(1, flush=True)\nprint(2, file=sys.stderr)")]
assert kinds[-1] == "result" and "stdout" in kinds and "stderr" in kinds, kinds'
diag "$(cat "$T/py")"
check "stream: stdout and stderr events, then the result" [ ! -s "$T/py" ]
py 'import sbx
try:
    sbx.run("pass", timeout="10m")
except sbx.Error as e:
    assert e.result is not None and e.result.outcome == "sandbox_error" and e.code, vars(e)
    print("code", e.code, e.status)
else:
    raise SystemExit("no exception")'
diag "$(cat "$T/py")"
check "run: a limit above the policy raises sbx.Error, code limit_above_policy, status 77" grep -qx 'code limit_above_policy 77' "$T/py"
py 'import sbx
try:
    sbx.run("pass", language="no-such-language")
except sbx.Error as e:
    print("code", e.code, e.message)
else:
    raise SystemExit("no exception")'
diag "$(cat "$T/py")"
check "run: an unknown language raises sbx.Error, code unknown_language" grep -q '^code unknown_language ' "$T/py"
run_as sbxtest env PYTHONPATH="$PY" SBX="$SBX" python3 "$SBX_SRCDIR/examples/agents/openai_tools.py" >"$T/a1" 2>&1
run_as sbxtest env PYTHONPATH="$PY" SBX="$SBX" python3 "$SBX_SRCDIR/examples/agents/langchain_tool.py" >"$T/a2" 2>&1
diag "$(cat "$T/a1" "$T/a2")"
check "agent examples: the stub models' answers come from real sandboxed runs" \
	sh -c 'grep -qx "The answer is 42." "$1" && grep -qx "10! = 3628800" "$2"' _ "$T/a1" "$T/a2"
finish
