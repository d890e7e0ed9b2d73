#!/bin/sh
# SPDX-License-Identifier: ISC
# The result contract: every result JSON the suite produced so far (kept
# by lib.sh in $SBX_RESULTS: sbx run --json, the result and attempt
# events of --jsonl, the failures of sbx itself) validates against
# docs/result.schema.json, the schema `make install` installs, and carries
# its schema_version; results of each outcome and of sbx's own failures
# are among them. Runs last among the integration tests (prove's order).
. "$(dirname "$0")/lib.sh"
plan 6
S=$SBX_SRCDIR
check "the installed schema is docs/result.schema.json" cmp -s "$S/docs/result.schema.json" "$P/share/sbx/result.schema.json"
python3 -c 'import jsonschema, json, sys; jsonschema.Draft202012Validator.check_schema(json.load(open(sys.argv[1])))' \
	"$S/docs/result.schema.json" >"$T/meta" 2>&1
diag "$(tail -n 3 "$T/meta")"
check "the schema is a valid JSON Schema (draft 2020-12)" [ ! -s "$T/meta" ]

# a few results of our own, so that the check never runs on nothing
sbx_run run --json -c 'print(1)'
sbx_run run --json -c '1/0'
sbx_run run --json --timeout 1s -c 'while True: pass'
sbx_run run --json --bogus-option
sbx_run run --json --lang no-such-language -c pass
sbx_run run --jsonl -c 'print(2)'
python3 - "$S/docs/result.schema.json" "$SBX_RESULTS" >"$T/v" 2>&1 <<'PY'
import json, os, sys, collections
import jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator(schema)
bad, n, outcomes, codes, versions = [], 0, collections.Counter(), collections.Counter(), set()
for f in sorted(os.listdir(sys.argv[2])):
    d = json.load(open(os.path.join(sys.argv[2], f)))
    n += 1
    outcomes[d.get("outcome")] += 1
    codes[(d.get("error") or {}).get("code")] += 1
    versions.add(d.get("schema_version"))
    errs = sorted(v.iter_errors(d), key=lambda e: list(e.path))
    if errs:
        bad.append("%s: %s at %s" % (f, errs[0].message[:200], "/".join(map(str, errs[0].path))))
print("results", n)
print("outcomes", dict(outcomes))
print("codes", dict(codes))
print("versions", sorted(map(str, versions)))
for b in bad[:20]:
    print("INVALID", b)
print("invalid", len(bad))
PY
diag "$(grep -v '^INVALID' "$T/v" | head -n 5)" "$(grep '^INVALID' "$T/v" | head -n 20)"
nres=$(sed -n 's/^results //p' "$T/v")
check "results collected from the suite (${nres:-0})" [ "${nres:-0}" -ge 6 ]
check "every one validates against the schema" grep -qx 'invalid 0' "$T/v"
check "every one has schema_version $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["properties"]["schema_version"]["const"])' "$S/docs/result.schema.json")" \
	grep -qx "versions \\['$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["properties"]["schema_version"]["const"])' "$S/docs/result.schema.json")'\\]" "$T/v"
check "among them ok, error, timeout and sbx's own failures (usage)" \
	sh -c 'grep "^outcomes" "$1" | grep -q "ok" && grep "^outcomes" "$1" | grep -q "timeout" && grep "^codes" "$1" | grep -q "usage"' _ "$T/v"
finish
