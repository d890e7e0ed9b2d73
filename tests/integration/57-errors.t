#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx's own failures are told apart: exit status (2 usage, 77 refused,
# 125 set-up) and, with --json, one result shape whose error.code comes
# from the error-code table (common/errcode.c); messages in the caller's
# units naming the policy; an unknown language lists those there are; the
# group refusal names the group and how to join it; --artifacts DIR is
# checked writable before anything runs.
. "$(dirname "$0")/lib.sh"
plan 16
records() { "$AUDIT" list --limit 0 2>/dev/null | wc -l; }

sbx_run run --json --bogus-option -c pass
check "usage error: exit 2, outcome sandbox_error, code usage, the option named" \
	sh -c '[ "$1" = 2 ] && [ "$2" = "sandbox_error|usage" ] && grep -q "bogus-option" "$3"' _ "$rc" "$(jget outcome)|$(jget error.code)" "$T/err"
check "... and the result has every member (schema_version, id null, limits null)" \
	[ "$(jget schema_version)|$(jget id)|$(jget limits)|$(jget stdout_truncated)" = "1.0|null|null|false" ]

before=$(records)
sbx_run run --json --lang ruby -c 'puts 1'
check "unknown language: exit 2, code unknown_language, lists the languages there are" \
	sh -c '[ "$1" = 2 ] && [ "$2" = unknown_language ] && grep -q "no language .ruby. in .*sbx.conf; there are: .*python.*sh" "$3"' _ "$rc" "$(jget error.code)" "$T/err"
check "... nothing ran or was recorded" [ "$(records)" = "$before" ]

run_as sbxout "$SBX" run --json -c 'print(1)' >"$T/out" 2>"$T/err"; rc=$?
check "not in group sbx: exit 77, code not_in_group" [ "$rc:$(jget error.code)" = "77:not_in_group" ]
check "... the message says which group and how to join it" \
	sh -c 'grep -q "sbxout is not in group sbx, which may run .*sbx-helper: ask an administrator to run usermod -a -G sbx sbxout, then log in again" "$1"' _ "$T/err"

mkdir -p "$T/ro" && chmod 0755 "$T/ro" # root's: sbxtest may not write there
before=$(records)
sbx_run run --json --artifacts "$T/ro" -c 'open("/out/a.txt", "w").write("x")'
check "--artifacts DIR not writable: refused before the run (exit 2, artifacts_unwritable), nothing recorded" \
	sh -c '[ "$1" = 2 ] && [ "$2" = artifacts_unwritable ] && [ "$3" = "$4" ] && grep -q "you cannot write there" "$5"' \
	_ "$rc" "$(jget error.code)" "$(records)" "$before" "$T/err"

sbx_run run --json --timeout 1s -c 'while True: pass'
check "a limit: code timeout, the message in the caller's units naming where the limit came from (--timeout)" \
	[ "$rc|$(jget error.code)|$(jget error.message)" = "124|timeout|wall-time limit of 1s (--timeout) reached" ]
# refused by policy: exit 77, the code of the table, the caller's units
# and the policy's name (the helper says which check refused it)
before=$(records)
sbx_run run --json --timeout 10m -c 'print("ran")'
check "a limit above the policy: exit 77, code limit_above_policy, in the caller's units naming the policy" \
	[ "$rc|$(jget outcome)|$(jget error.code)|$(jget error.message)|$(jget stdout)" = \
	  "77|sandbox_error|limit_above_policy|--timeout 10m exceeds policy default's wall_time 30s|" ]
check "... the refusal is recorded, the result of the one shape (type = code)" \
	[ "$(( $(records) > before ))|$(jget schema_version)|$(jget error.type)|$(jget id | wc -c)" = "1|1.0|limit_above_policy|33" ]
printf '[policy]\nusers = sbxout\n' > "$P/etc/sbx/policies.d/fd57-named.policy"
chmod 644 "$P/etc/sbx/policies.d/fd57-named.policy"
sbx_run run --json --policy fd57-named -c 'print("ran")'
rm -f "$P/etc/sbx/policies.d/fd57-named.policy"
check "a policy that does not allow the caller: exit 77, code policy_denied, the policy named" \
	sh -c '[ "$1" = "77|policy_denied" ] && echo "$2" | grep -q "fd57-named.*does not allow user sbxtest\|does not allow user sbxtest.*fd57-named"' \
	_ "$rc|$(jget error.code)" "$(jget error.message)"
sbx_run run --json -c 'import json; json.loads("{")'
check "a traceback: code error, type the exception's, hint present (null or a string)" \
	[ "$(jget error.code)|$(jget error.type)|$(python3 -c 'import json,sys; print("hint" in json.load(open(sys.argv[1]))["error"])' "$T/out")" = "error|json.decoder.JSONDecodeError|True" ]
sbx_run run --jsonl --bogus-option -c pass
check "--jsonl: the same failure as one result event" \
	python3 -c 'import json,sys; e=json.loads(open(sys.argv[1]).read().splitlines()[-1]); sys.exit(not (e["event"]=="result" and e["result"]["error"]["code"]=="usage" and "schema_version" in e["result"]))' "$T/out"
sbx_run run --json -c 'print(1)'
check "ok: error null, schema_version set" [ "$rc|$(jget error)|$(jget schema_version)" = "0|null|1.0" ]
# the caller's stack limit is the caller's; sbx's own stack is not (a soft
# 64 KiB limit crashed the client with SIGSEGV, exit 139)
run_as sbxtest sh -c 'ulimit -S -s 64 && exec "$1" run -c "print(64)"' _ "$SBX" >"$T/out" 2>"$T/err" </dev/null; rc=$?
check "ulimit -S -s 64: sbx raises its own soft stack limit and runs (rc $rc)" [ "$rc|$(cat "$T/out")" = "0|64" ]
run_as sbxtest sh -c 'ulimit -s 200 && exec "$1" run -c "print(1)"' _ "$SBX" >"$T/out" 2>"$T/err" </dev/null; rc=$?
check "a hard stack limit below 1 MiB: exit 125, one line naming it" \
	sh -c '[ "$1" = 125 ] && [ "$(wc -l < "$2")" = 1 ] && grep -qx "sbx: the stack limit is 200 KiB (hard), below the 1024 KiB sbx needs (ulimit -H -s)" "$2"' _ "$rc" "$T/err"
finish
