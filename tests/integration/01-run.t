#!/bin/sh
# SPDX-License-Identifier: ISC
# Output, exit status, stdin code, sh language, and the audit record of each.
. "$(dirname "$0")/lib.sh"
plan 16

sbx_run run -c 'print(6*7)'
check "print(6*7) exits 0" [ "$rc" = 0 ]
check "prints 42" [ "$(cat "$T/out")" = 42 ]

sbx_run run --json -c 'print(6*7)'
id=$(jget id)
check "result has a 32-hex-digit id" sh -c 'echo "$1" | grep -Eqx "[0-9a-f]{32}"' _ "$id"
check "outcome ok" [ "$(jget outcome)" = ok ]
check "audited: END outcome ok" [ "$(audit_field "$id" end.outcome)" = ok ]
check "audited: code kept" sh -c '"$1" show --code "$2" | grep -q "print(6\*7)"' _ "$AUDIT" "$id"

sbx_run run -c 'import sys; sys.exit(3)'
check "payload exit status passed through" [ "$rc" = 3 ]

printf 'print("from stdin", 1+1)\n' > "$T/job.py"
run_as sbxtest sh -c "cat $T/job.py | $SBX run -" >"$T/out" 2>"$T/err"
check "code from stdin" [ "$(cat "$T/out")" = "from stdin 2" ]

sbx_run run --json --lang sh -c 'id -u; ls /; cat /etc/hostname'
check "sh: ok" [ "$(jget outcome)" = ok ]
jget stdout > "$T/sh"
check "sh: runs as the caller's uid" [ "$(head -1 "$T/sh")" = "$(id -u sbxtest)" ]
check "sh: hostname sbx" grep -qx sbx "$T/sh"
check "sh: /code and /out exist" sh -c 'grep -qx code "$1" && grep -qx out "$1"' _ "$T/sh"
check "sh: audited with language sh" [ "$(audit_field "$(jget id)" start.language)" = sh ]

sbx_run run --json -c 'import sys; print("x" * 10, file=sys.stderr); raise SystemExit(1)'
check "stderr captured" [ "$(jget stderr)" = xxxxxxxxxx ]
check "outcome error for non-zero exit" [ "$(jget outcome)" = error ]

check "no cgroup left" no_cgroups_left
finish
