#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx mcp: the MCP server on stdio. First raw JSON-RPC lines piped in
# (framing, version negotiation, the four JSON-RPC error codes, EOF,
# SIGTERM, a closed stdout), then the official TypeScript SDK as the
# client (tests/mcp/client.mjs: initialize, tools/list, calls, images,
# bounded text with the whole stdout as a resource, progress, errors). The SDK part is skipped only when node or npm is
# missing or npm cannot reach its registry.
. "$(dirname "$0")/lib.sh"
plan 40

skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
mkdir -m 0777 "$T/tmp"

# mcp LINES...: one server session as sbxtest with these lines on stdin;
# replies in $T/mcp.out, status in $rc.
mcp() {
	printf '%s\n' "$@" >"$T/mcp.in"
	run_as sbxtest env TMPDIR="$T/tmp" "$SBX" mcp <"$T/mcp.in" >"$T/mcp.out" 2>"$T/mcp.err"
	rc=$?
}
# replies PYTHON: run assertions with msgs (the parsed lines) and by_id.
replies() { python3 -c 'import json,sys
msgs=[json.loads(l) for l in open(sys.argv[1])]
by_id={m["id"]: m for m in msgs if "id" in m and m["id"] is not None}
errs=[m for m in msgs if m.get("id", 0) is None]
exec(sys.argv[2])' "$T/mcp.out" "$1"; }

init() { printf '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' "$1"; }
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# --- framing, negotiation ---
mcp "$(init 2025-06-18)" "$INITED" '{"jsonrpc":"2.0","id":1,"method":"ping"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
check "exit 0 at the end of stdin" [ "$rc" = 0 ]
check "every line is one JSON-RPC 2.0 message; notifications unanswered" replies '
assert all(m["jsonrpc"] == "2.0" for m in msgs) and len(msgs) == 3, msgs
assert by_id[1]["result"] == {}, msgs'
check "tools/list: execute_code with input and output schema, then the live-session tools (82-live-mcp.t)" replies '
t = by_id[2]["result"]["tools"]
assert [x["name"] for x in t] == ["execute_code", "sbx_session_list", "sbx_session_stop", "sbx_session_restart"], t
assert t[0]["inputSchema"]["required"] == ["code"] and {"outcome", "schema_version", "error"} <= set(t[0]["outputSchema"]["required"]), t'
v1=$(replies 'print(by_id["init"]["result"]["protocolVersion"])')
mcp "$(init 2025-11-25)"; v2=$(replies 'print(by_id["init"]["result"]["protocolVersion"])')
mcp "$(init 2024-11-05)"; v3=$(replies 'print(by_id["init"]["result"]["protocolVersion"])')
check "version: the client's if spoken (2025-06-18, 2025-11-25, 2024-11-05; more in 56-mcp-versions.t) ($v1 $v2 $v3)" \
	[ "$v1 $v2 $v3" = "2025-06-18 2025-11-25 2024-11-05" ]

# --- JSON-RPC errors ---
mcp "$(init 2025-06-18)" 'not json' '{"jsonrpc":"2.0","id":1,"method":' \
	'{"jsonrpc":"2.0","id":3,"method":"no/such/method"}' \
	'[{"jsonrpc":"2.0","id":4,"method":"ping"}]' '{"jsonrpc":"1.0","id":5,"method":"ping"}' \
	'{"jsonrpc":"2.0","id":null,"method":"ping"}' '{"jsonrpc":"2.0","id":6}' '42' \
	'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}' \
	'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"execute_code","arguments":"print(1)"}}' \
	'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}' \
	'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{}}}' \
	'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"execute_code","arguments":{"language":"python"}}}' \
	'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"1","timeout":-1}}}' \
	'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"1","files":[{"name":"../x","content":""}]}}}' \
	'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"1","rm":true}}}' \
	'{"jsonrpc":"2.0","id":15,"method":"initialize"}'
check "parse errors: -32700 with id null, one per bad line" replies '
p = [m for m in errs if m["error"]["code"] == -32700]
assert len(p) == 2, msgs'
check "unknown method: -32601" replies 'assert by_id[3]["error"]["code"] == -32601, by_id[3]'
check "invalid requests (batch, jsonrpc 1.0, id null, no method, not an object): -32600" replies '
assert by_id[5]["error"]["code"] == -32600 and by_id[6]["error"]["code"] == -32600, msgs
inv = [m for m in errs if m["error"]["code"] == -32600]
assert len(inv) == 3, inv   # the batch, id null, 42
assert 4 not in by_id, msgs'
check "invalid params (unknown tool, arguments not an object, params an array, no name): -32602" replies '
for i in (7, 8, 9, 10, 15):
    assert by_id[i]["error"]["code"] == -32602, by_id[i]
assert "rm_rf" in by_id[7]["error"]["message"], by_id[7]'
check "2025-06-18: bad arguments are -32602 naming the argument" replies '
assert by_id[11]["error"]["code"] == -32602 and by_id[11]["error"]["message"].startswith("code:"), by_id[11]
assert by_id[12]["error"]["message"].startswith("timeout:"), by_id[12]
assert by_id[13]["error"]["message"].startswith("files[0].name:"), by_id[13]
assert "rm" in by_id[14]["error"]["message"], by_id[14]'
check "every request answered once" replies '
ids = [m["id"] for m in msgs if m.get("id") is not None]
assert sorted(ids, key=str) == sorted(["init", 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], key=str), ids'

mcp "$(init 2025-11-25)" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{"language":"python"}}}'
check "2025-11-25: bad arguments are a tool error (isError) the model can read" replies '
r = by_id[1]["result"]
assert r["isError"] is True and r["content"][0]["type"] == "text" and r["content"][0]["text"].startswith("code:"), r'

# --- runs over raw lines ---
mcp "$(init 2025-11-25)" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"import sys\nprint(\"out\")\nprint(\"err\", file=sys.stderr)\nraise KeyError(\"k\")"}}}'
check "stdin ends with a call in flight: it is answered, then exit 0" sh -c '[ "$1" = 0 ] && grep -q "\"id\":1,\"result\"" "$2"' _ "$rc" "$T/mcp.out"
check "failed run: isError, traceback first, stdout, stderr beyond the traceback" replies '
r = by_id[1]["result"]
c = [x["text"] for x in r["content"] if x["type"] == "text"]
assert r["isError"] is True and r["structuredContent"]["outcome"] == "error", r
assert c[0].startswith("Traceback") and "KeyError" in c[0], c
assert c[1] == "stdout:\nout\n" and c[2].startswith("stderr:\nerr\n"), c
assert c[-1].startswith("outcome: error, exit code 1"), c'
check "the work directory is gone" [ -z "$(ls -A "$T/tmp")" ]

# Artifacts other than images are resource links the client reads with
# resources/read while the server runs; the store keeps at most
# --keep-artifacts bytes (oldest dropped) and is removed at exit.
cat >"$T/res.py" <<'PY'
import base64, glob, json, os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def answer(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
def call(i, code):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "execute_code", "arguments": {"code": code, "language": "sh"}}})
    return answer(i)["result"]
def read(i, uri):
    send({"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": {"uri": uri} if uri else {}})
    return answer(i)
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
assert "resources" in answer(0)["result"]["capabilities"]
r = call(1, 'echo hi >/out/a.bin; printf "\\001\\002" >>/out/a.bin; echo note >/out/n.txt')
links = [x for x in r["content"] if x["type"] == "resource_link"]
run = r["structuredContent"]["id"]
a, n = "sbx://run/%s/out/a.bin" % run, "sbx://run/%s/out/n.txt" % run
assert sorted(l["uri"] for l in links) == [a, n] and not [x for x in r["content"] if x["type"] == "resource"], r["content"]
assert [l["size"] for l in links if l["uri"] == a] == [5], links
assert all("path" not in x for x in r["structuredContent"]["artifacts"]), r["structuredContent"]
c = read(2, a)["result"]["contents"]
assert c == [{"uri": a, "mimeType": "application/octet-stream", "blob": base64.b64encode(b"hi\n\x01\x02").decode()}], c
c = read(3, n)["result"]["contents"]
assert c == [{"uri": n, "mimeType": "text/plain", "text": "note\n"}], c
send({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})
assert sorted(x["uri"] for x in answer(4)["result"]["resources"]) == [a, n]
send({"jsonrpc": "2.0", "id": 40, "method": "resources/templates/list"})
assert answer(40)["result"] == {"resourceTemplates": []}
e = read(5, "sbx://run/%s/out/nope" % run)["error"]
assert e["code"] == -32602 and e["data"] == {"uri": "sbx://run/%s/out/nope" % run}, e
assert read(6, None)["error"]["code"] == -32602
# 8K holds two files (each counts as at least 4 KiB): the next call's file
# drops the oldest; a call with three files drops everything older
# but keeps only two of its own, both still readable.
r = call(7, "printf 0123456789ab >/out/big.bin")
big = [x for x in r["content"] if x["type"] == "resource_link"][0]["uri"]
first, second = [l["uri"] for l in links] # call 1's, in the order kept
assert "error" in read(8, first) and "result" in read(9, second), "the oldest not dropped, or both"
assert base64.b64decode(read(10, big)["result"]["contents"][0]["blob"]) == b"0123456789ab"
r = call(11, "for f in x1 x2 x3; do echo $f >/out/$f.txt; done")
links = [x["uri"] for x in r["content"] if x["type"] == "resource_link"]
t = [x["text"] for x in r["content"] if x["type"] == "text" and x["text"].startswith("artifact ")]
assert len(links) == 2 and len(t) == 1 and t[0].endswith(".txt (3 bytes, text/plain): not kept: the store is full (sbx mcp --keep-artifacts 8192)"), r["content"]
assert all("result" in read(12 + i, u) for i, u in enumerate(links)), "a link of this answer is not readable"
assert read(14, second)["error"]["code"] == -32602 and read(15, big)["error"]["code"] == -32602
# an error message cut inside a UTF-8 character is still answered; a NUL is refused
send({"jsonrpc": "2.0", "id": 16, "method": "tools/call", "params": {"name": "a" * 199 + "\u00e9", "arguments": {}}})
assert answer(16)["error"]["code"] == -32602
send({"jsonrpc": "2.0", "id": 17, "method": "x" * 199 + "\u00e9"})
assert answer(17)["error"]["code"] == -32601
e = read(18, links[0] + "\u0000junk")["error"]
assert e["code"] == -32602 and "NUL" in e["message"], e
assert len(glob.glob(sys.argv[1] + "/sbx-mcp-store.*")) == 1
p.stdin.close()
assert p.wait(timeout=20) == 0
assert glob.glob(sys.argv[1] + "/sbx-mcp-store.*") == [], "store left behind"
print("PASS")
PY
check "artifacts: resource links, resources/read and list, -32602 with data.uri, oldest results dropped first, store removed at exit" \
	sh -c 'cd "$1" && timeout 120 python3 "$1/res.py" "$1/tmp" setpriv --reuid=sbxtest --regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR="$1/tmp" "$2" mcp --keep-artifacts 8K | grep -qx PASS' _ "$T" "$SBX"
check "the work directories are gone" [ -z "$(ls -A "$T/tmp")" ]
"$SBX" mcp --keep-artifacts lots </dev/null >/dev/null 2>"$T/e"; rc=$?
check "--keep-artifacts: a bad size is a usage error (2) naming the option" sh -c '[ "$1" = 2 ] && grep -q "keep-artifacts.*lots" "$2"' _ "$rc" "$T/e"

mcp "$(init 2025-11-25)" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","_meta":{"progressToken":"tok"},"arguments":{"code":"import time\nfor i in range(60):\n    print(i, flush=True)\n    time.sleep(0.02)"}}}'
check "progress: on output at most every 100 ms, increasing, the token echoed, before the answer" replies '
notes = [m for m in msgs if m.get("method") == "notifications/progress"]
wall = by_id[1]["result"]["structuredContent"]["wall_ms"]
assert 2 <= len(notes) <= wall / 100 + 3, (len(notes), wall)
assert all(n["params"]["progressToken"] == "tok" for n in notes), notes
p = [n["params"]["progress"] for n in notes]
assert p == sorted(p) and len(set(p)) == len(p), p
assert msgs[-1].get("id") == 1, msgs[-1]'

# SIGTERM while a run is going: the run is stopped (its END record is
# written well before its 30 s), the work directory removed.
cat >"$T/term.py" <<'PY'
import json, subprocess, sys, time, os, signal
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute_code", "arguments": {"code": "import time\nprint('started', flush=True)\ntime.sleep(30)"}, "_meta": {"progressToken": 7}}})
while True:
    m = json.loads(p.stdout.readline())
    if m.get("method") == "notifications/progress" and "started" in m["params"].get("message", ""):
        break
t = time.time()
p.send_signal(signal.SIGTERM)
rc = p.wait(timeout=20)
print(rc, round(time.time() - t, 1))
PY
out=$(cd "$T" && python3 "$T/term.py" setpriv --reuid=sbxtest --regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR="$T/tmp" "$SBX" mcp 2>"$T/term.err")
diag "SIGTERM: exit status, seconds: $out"
check "SIGTERM during a run: exit 0 within 5 s" python3 -c 'import sys; rc, s = sys.argv[1].split(); assert rc == "0" and float(s) < 5' "$out"
sleep 1
check "... the run was stopped (END record well before 30 s), work directory gone" sh -c '
"$1" list --json | python3 -c "import json,sys; r=json.load(sys.stdin)[-1]; assert r[\"end_seq\"] and r[\"wall_ms\"] < 15000, r" && [ -z "$(ls -A "$2")" ]' _ "$AUDIT" "$T/tmp"

# notifications/cancelled: no answer for that call, its run stopped (even
# though the program ignores SIGTERM), the
# server goes on (ping answered) and ends at EOF.
cat >"$T/cancel.py" <<'PY'
import json, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute_code", "arguments": {"code": "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('started', flush=True)\ntime.sleep(30)"}, "_meta": {"progressToken": "c"}}})
seen = []
while True:
    m = json.loads(p.stdout.readline()); seen.append(m)
    if m.get("method") == "notifications/progress" and "started" in m["params"].get("message", ""):
        break
send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "test"}})
send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
t = time.time()
p.stdin.close()
seen += [json.loads(l) for l in p.stdout]
rc = p.wait(timeout=20)
assert rc == 0, rc
assert time.time() - t < 8, time.time() - t
assert not [m for m in seen if m.get("id") == 1], seen
assert [m for m in seen if m.get("id") == 2] == [{"jsonrpc": "2.0", "id": 2, "result": {}}], seen
PY
check "notifications/cancelled: the call is not answered, ping is, exit 0 soon after EOF" \
	sh -c 'cd "$1" && python3 "$1/cancel.py" setpriv --reuid=sbxtest --regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR="$1/tmp" "$2" mcp' _ "$T" "$SBX"
sleep 1
check "... the cancelled run was stopped, work directory gone" sh -c '
"$1" list --json | python3 -c "import json,sys; r=json.load(sys.stdin)[-1]; assert r[\"end_seq\"] and r[\"wall_ms\"] < 15000, r" && [ -z "$(ls -A "$2")" ]' _ "$AUDIT" "$T/tmp"

# more calls than run at a time (4): all answered, each with its own output
set --
for i in 1 2 3 4 5 6; do
	set -- "$@" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\",\"arguments\":{\"code\":\"import time; time.sleep(0.5); print($i * 11)\"}}}"
done
mcp "$(init 2025-11-25)" "$@"
check "six calls at once: six answers, each its own" replies '
for i in range(1, 7):
    r = by_id[i]["result"]
    assert r["isError"] is False and r["structuredContent"]["stdout"] == "%d\n" % (i * 11), (i, r)'

# 4 running and 64 waiting: the next call is refused at once, the others run
set -- "$(init 2025-11-25)"
for i in $(seq 1 69); do
	if [ $i -le 4 ]; then code='import time; time.sleep(2)'; else code='pass'; fi
	set -- "$@" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\",\"arguments\":{\"code\":\"$code\"}}}"
done
mcp "$@"
check "more than 64 calls waiting: the 69th is a tool error, answered first; the rest run" replies '
calls = [m for m in msgs if isinstance(m.get("id"), int)]
assert calls[0]["id"] == 69 and calls[0]["result"]["isError"] and "too many calls" in calls[0]["result"]["content"][0]["text"], calls[0]
assert sorted(m["id"] for m in calls) == list(range(1, 70)), [m["id"] for m in calls]
assert all(m["result"]["isError"] is False for m in calls[1:]), [m for m in calls if m["result"]["isError"]][:2]'

# stdout closed by the client: no SIGPIPE death, exit 125
cat >"$T/pipe.py" <<'PY'
import subprocess, sys, os
r, w = os.pipe()
os.close(r)
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=w)
os.close(w)
p.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', timeout=20)
print(p.returncode)
PY
out=$(cd "$T" && python3 "$T/pipe.py" setpriv --reuid=sbxtest --regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent "$SBX" mcp 2>/dev/null)
check "a closed stdout: exit 125, not killed by SIGPIPE (got $out)" [ "$out" = 125 ]

run_as sbxtest "$SBX" mcp --help >"$T/out" 2>&1
check "sbx mcp --help names the tool and its arguments" grep -q 'execute_code' "$T/out"
run_as sbxtest "$SBX" mcp extra </dev/null >"$T/out" 2>&1
check "sbx mcp with an argument: usage error 2" [ "$?" = 2 ]

# --- the official TypeScript SDK as the client ---
names="initialize tools/list call_ok call_error image_artifact bounded_text progress ping_during_a_run timeout_outcome malformed_call bad_arguments"
nnames=11
mcp_sdk
if [ -n "$why" ]; then
	i=0; while [ $i -lt $((nnames + 2)) ]; do skip "$why"; i=$((i + 1)); done
	finish
fi
flags="--with-files --with-session"
(cd "$T" && timeout 300 node "$cache/client.mjs" $flags -- setpriv --reuid=sbxtest --regid=sbxtest --init-groups \
	env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR="$T/tmp" XDG_DATA_HOME="$T/xdg" "$SBX" mcp) >"$T/sdk.out" 2>"$T/sdk.err"
grep -q FAIL "$T/sdk.out" && diag "$(grep FAIL "$T/sdk.out")"
[ -s "$T/sdk.err" ] && diag "$(tail -5 "$T/sdk.err")"
for name in $names; do
	check "SDK: ${name}" grep -qx "PASS $(echo "$name" | tr _ ' ')" "$T/sdk.out"
done
check "SDK: files under /in (text and base64)" grep -qx "PASS files" "$T/sdk.out"
check "SDK: session (/work kept between calls)" grep -qx "PASS session" "$T/sdk.out"
finish
