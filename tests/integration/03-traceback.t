#!/bin/sh
# A failing program: outcome error, parsed traceback, audited.
. "$(dirname "$0")/lib.sh"
plan 6

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
finish
