# SPDX-License-Identifier: ISC
"""Drive `sbx mcp` one request at a time (tests/integration/93-workspace-mcp.t).

usage: python3 mcpdrive.py SCRIPT -- CMD ARG...
SCRIPT is Python run with these names: call(tool, args) sends a tools/call
and returns its result (or {"rpc_error": ...}) once answered, request(method,
params) any request; send(tool, args) sends a tools/call and returns its id
without waiting, answer(id) waits for that id's answer (answers that come
first are kept); sc(result) its structuredContent, texts(result) its text
blocks, check(name, cond, detail) prints "PASS name" or "FAIL name: detail".
The server is initialized (2025-11-25) first and its stdin closed at the end.
"""
import json
import subprocess
import sys

sep = sys.argv.index("--")
script = open(sys.argv[1]).read()
proc = subprocess.Popen(sys.argv[sep + 1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
next_id = [0]


answers = {}


def send_request(method, params):
    next_id[0] += 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    return next_id[0]


def answer(i):
    while i not in answers:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("FAIL the server ended before answering request %d" % i)
        m = json.loads(line)
        if "id" in m and ("result" in m or "error" in m):
            answers[m["id"]] = m["result"] if "result" in m else {"rpc_error": m["error"]}
    return answers.pop(i)


def request(method, params):
    return answer(send_request(method, params))


def send(tool, args):
    return send_request("tools/call", {"name": tool, "arguments": args})


def call(tool, args):
    return request("tools/call", {"name": tool, "arguments": args})


def sc(r):
    return r.get("structuredContent") or {}


def texts(r):
    return [c["text"] for c in r.get("content", []) if c.get("type") == "text"]


def check(name, cond, detail=""):
    print(("PASS %s" % name) if cond else ("FAIL %s: %s" % (name, detail)), flush=True)


request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "drive", "version": "1"}})
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
exec(script)
proc.stdin.close()
sys.exit(proc.wait())
