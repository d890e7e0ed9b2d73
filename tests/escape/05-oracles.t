#!/bin/sh
# SPDX-License-Identifier: ISC
# Class 5, existence oracles and access bypass. Every name the caller can
# give sbx is tried on something it may not read and on something missing:
# code files and --artifacts directories under a root-only directory, and
# policies by name (one that exists but does not allow the caller, one
# that does not exist, and names that try to leave policies.d). Each pair
# must give the same error text (the name aside) and the same exit status.
# Caller paths are only ever opened by the client, as the caller: a path
# error never starts the helper (no audit record), so no root process
# answers a question about a path. A refused policy is audited.
#
# Defence removed -> this test failed (checked by hand, see the report):
#   the old "policy 'X' not found (PATH)" message restored for a missing
#   policy in helper/load.c -> tests 6, 7, 8 fail
. "$(dirname "$0")/lib.sh"
plan 11
POL=$P/etc/sbx/policies.d
mkdir -m 0700 "$T/priv" "$T/priv/existing-dir"
echo 'print("secret code")' > "$T/priv/exists.py"
printf '[policy]\nusers = sbxout\n' > "$POL/escnamed.policy"
chmod 0644 "$POL/escnamed.policy"
records() { "$AUDIT" list --limit 0 | wc -l; }

# pair WHAT ARGS_A -- ARGS_B: run sbx with each, compare status and stderr
# with the names that differ replaced by X
names='s/existing-dir\|missing-dir\|exists\.py\|missing\.py\|escnamed\|escnothere\|passwd\|nothere/X/g'
pair() {
	what=$1; a=$2; b=$3; shift 3
	run_as sbxtest "$SBX" run "$@" $a > "$T/oa" 2> "$T/ea"; ra=$?
	run_as sbxtest "$SBX" run "$@" $b > "$T/ob" 2> "$T/eb"; rb=$?
	sa=$(sed "$names" "$T/ea"); sb=$(sed "$names" "$T/eb")
	diag "$what: [$ra] $(cat "$T/ea")" "$what: [$rb] $(cat "$T/eb")"
	[ "$ra" = "$rb" ] && [ "$ra" != 0 ] && [ "$sa" = "$sb" ] && [ -n "$sa" ]
}
n0=$(records)
check "code file: exists under a root-only directory vs missing: same error, same status" \
	pair code "$T/priv/exists.py" "$T/priv/missing.py"
check "--artifacts: existing vs missing directory under a root-only directory" \
	pair artifacts "--artifacts=$T/priv/existing-dir" "--artifacts=$T/priv/missing-dir" -c 'print(1)'
check "--artifacts: below an existing vs a missing directory" \
	pair artifacts-below "--artifacts=$T/priv/existing-dir/sub" "--artifacts=$T/priv/missing-dir/sub" -c 'print(1)'
check "code and artifact path errors never started the helper (no audit record)" [ "$(records)" = "$n0" ]
check "the secret code never came out" sh -c '! grep -q "secret code" "$1" "$2"' _ "$T/oa" "$T/ob"

check "policy: exists but not allowed vs does not exist: same error, same status" \
	pair policy "--policy=escnamed" "--policy=escnothere" -c 'print(1)'
check "the error names neither the file nor the reason" sh -c '! grep -q "policies.d\|users" "$1" "$2"' _ "$T/ea" "$T/eb"
run_as sbxtest "$SBX" run --json --policy escnamed -c 'print(1)' > "$T/ja" 2>/dev/null
run_as sbxtest "$SBX" run --json --policy escnothere -c 'print(1)' > "$T/jb" 2>/dev/null
# error is an object ({code, message, ...}): compare code and message, and
# never two empty answers (pj prints nothing when the key is missing)
ej() { pj "$1" '"%s %s" % (d["error"]["code"], d["error"]["message"].replace("sbx-helper: ", "").replace("escnamed", "X").replace("escnothere", "X"))'; }
check "--json: the same error for both, code and message (the helper's prefix aside)" \
	sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$(ej "$T/ja")" "$(ej "$T/jb")"
check "policy names that try to leave policies.d: same answer for an existing and a missing target" \
	pair policy-path "--policy=../../../../../etc/passwd" "--policy=../../../../../etc/nothere" -c 'print(1)'
rm -f "$POL/escnamed.policy"
check "host unchanged" host_unchanged
check "the refused policy request is audited (sandbox_error)" audited "$(pj "$T/ja" 'd["id"]')" sandbox_error
finish
