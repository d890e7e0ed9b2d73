#!/bin/sh
# SPDX-License-Identifier: ISC
# MCP version negotiation (specification, lifecycle): `sbx mcp` answers
# initialize with the client's revision when it speaks it (2024-11-05,
# 2025-03-26, 2025-06-18, 2025-11-25), else with the newest, and gives each
# client only what its revision defines (no outputSchema, title or
# structuredContent before 2025-06-18, the result JSON as the last text
# block instead; no annotations or progress message before 2025-03-26;
# batches accepted under 2025-03-26). Real clients: the official
# TypeScript SDK 1.0.4 (2024-11-05) and 1.11.0 (2025-03-26) from
# tests/mcp-versions (19-mcp.t drives the current SDK). The official MCP
# Inspector finds nothing to report in the tool's schemas with --strict.
# `sbx mcp` started by a caller who may not run the helper says why at
# once and exits 77.
. "$(dirname "$0")/lib.sh"
plan 11

# mcp MSG...: the server's answers to these lines, as sbxtest, in $T/mcp
mcp() { printf '%s\n' "$@" | run_as sbxtest timeout 60 "$SBX" mcp >"$T/mcp" 2>"$T/mcp.err"; }
init() { printf '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' "$1"; }
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
answers() { python3 -c '
import json, sys
by_id = {}
notes = []
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "id" in m: by_id[m["id"]] = m
    else: notes.append(m)
exec(sys.argv[2])' "$T/mcp" "$1"; }

got=
for v in 2024-11-05 2025-03-26 2025-06-18 2025-11-25 2024-10-07 2099-01-01; do
	mcp "$(init "$v")"
	got="$got $(answers 'print(by_id["init"]["result"]["protocolVersion"])')"
done
diag "answered:$got"
check "each revision spoken is answered with itself, others with the newest" \
	[ "$got" = " 2024-11-05 2025-03-26 2025-06-18 2025-11-25 2025-11-25 2025-11-25" ]

call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_code","_meta":{"progressToken":"t"},"arguments":{"code":"import time\nprint(6*7, flush=True)\ntime.sleep(1.5)"}}}'
list='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
for v in 2024-11-05 2025-03-26 2025-06-18 2025-11-25; do
	mcp "$(init "$v")" "$INITED" "$list" "$call"
	cp "$T/mcp" "$T/mcp-$v"
done
check_v() { # REVISION CODE: run CODE over that revision's answers
	cp "$T/mcp-$1" "$T/mcp"
	answers "$2" >"$T/why" 2>&1
}
check_v 2024-11-05 '
t = by_id[1]["result"]["tools"][0]
assert "outputSchema" not in t and "title" not in t and "annotations" not in t, t
r = by_id[2]["result"]
assert "structuredContent" not in r, r
last = json.loads(r["content"][-1]["text"])
assert last["outcome"] == "ok" and last["stdout"] == "42\n" and last["schema_version"], last
p = [n for n in notes if n["method"] == "notifications/progress"]
assert p and all("message" not in n["params"] for n in p), p'
diag "$(cat "$T/why")"
ok $? "2024-11-05: what that revision defines, and no more"
check_v 2025-03-26 '
t = by_id[1]["result"]["tools"][0]
assert "outputSchema" not in t and "title" not in t and t["annotations"]["readOnlyHint"] is False, t
r = by_id[2]["result"]
assert "structuredContent" not in r and json.loads(r["content"][-1]["text"])["outcome"] == "ok", r
p = [n for n in notes if n["method"] == "notifications/progress"]
assert p and all("message" in n["params"] for n in p), p'
diag "$(cat "$T/why")"
ok $? "2025-03-26: annotations and progress messages, no structured content"
for v in 2025-06-18 2025-11-25; do
	check_v $v '
t = by_id[1]["result"]["tools"][0]
assert t["outputSchema"]["properties"]["schema_version"] and t["title"], t
r = by_id[2]["result"]
assert r["structuredContent"]["outcome"] == "ok" and r["structuredContent"]["stdout"] == "42\n", r'
	diag "$(cat "$T/why")"
	ok $? "$v: title, outputSchema, structuredContent"
done
mcp "$(init 2025-03-26)" "$INITED" '[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]'
answers 'assert by_id[7]["result"] == {} and by_id[8]["result"]["tools"], by_id' >"$T/why" 2>&1
diag "$(cat "$T/why")"
ok $? "2025-03-26: a batch is accepted, each request answered"
mcp "$(init 2025-11-25)" "$INITED" '[{"jsonrpc":"2.0","id":7,"method":"ping"}]'
answers 'assert 7 not in by_id and by_id[None]["error"]["code"] == -32600, by_id' >"$T/why" 2>&1
diag "$(cat "$T/why")"
ok $? "2025-11-25: batches refused (-32600), as that revision removed them"

# a caller outside group sbx: one line at start-up, exit 77
out=$(printf '%s\n' "$(init 2025-11-25)" | run_as sbxout timeout 20 "$SBX" mcp 2>"$T/e"); rc=$?
diag "$(cat "$T/e")"
check "sbx mcp as a caller outside group sbx: refuses at start (77), says which group and how to join" \
	sh -c '[ "$1" = 77 ] && [ -z "$2" ] && grep -q "not in group sbx.*usermod -a -G sbx sbxout, then log in again" "$3"' _ "$rc" "$out" "$T/e"

# the real older SDKs and the Inspector
npm_cache tests/mcp-versions sdk-2025-03-26 versions- --ignore-scripts
# node runs as root, the server it starts as sbxtest
AS_SBXTEST="setpriv --reuid=sbxtest --regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR=$T"
for v in 2024-11-05 2025-03-26; do
	if [ -n "$why" ]; then echo "ok $((n + 1)) # SKIP $why"; n=$((n + 1)); continue; fi
	# shellcheck disable=SC2086
	(cd "$T" && timeout 120 node "$cache/client.mjs" "sdk-$v" -- $AS_SBXTEST "$SBX" mcp) >"$T/sdk" 2>"$T/sdk.err"
	[ -s "$T/sdk.err" ] && diag "$(tail -n 5 "$T/sdk.err")"
	diag "$(cat "$T/sdk")"
	check "TypeScript SDK client on $v: connects, lists, calls" sh -c '! grep -q "^FAIL" "$1" && [ "$(grep -c "^PASS" "$1")" = 3 ]' _ "$T/sdk"
done
if [ -n "$why" ]; then
	echo "ok $((n + 1)) # SKIP $why"; n=$((n + 1))
else
	# shellcheck disable=SC2086
	(cd "$T" && HOME="$T" timeout 120 "$cache/node_modules/.bin/mcp-inspector" --cli --method tools/list --strict \
		$AS_SBXTEST "$SBX" mcp) >"$T/insp" 2>"$T/insp.err"; irc=$?
	diag "$(head -c 2000 "$T/insp.err")"
	check "MCP Inspector --strict: nothing to report in the tool's schemas (exit $irc)" \
		sh -c '[ "$1" = 0 ] && ! grep -Eq "^(Warning|Error)" "$2" && grep -q "\"outputSchema\"" "$3"' _ "$irc" "$T/insp.err" "$T/insp"
fi
finish
