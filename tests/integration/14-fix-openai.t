#!/bin/sh
# SPDX-License-Identifier: ISC
# examples/fixers/openai-fixer against a stub chat-completions server on
# 127.0.0.1: the request it builds (path, headers, model, messages with the
# code and traceback) and the code it takes from the reply.
. "$(dirname "$0")/lib.sh"
plan 9

install -m 0755 "$SBX_SRCDIR/examples/fixers/openai-fixer" "$T/openai-fixer"
printf 'values = []\nprint(sum(values) / len(values))\n' >"$T/job.py"
chmod 644 "$T/job.py"

# The stub records the one request it gets and answers with a fenced block.
cat >"$T/stub.py" <<'PY'
import http.server, json, sys
out = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        json.dump({"path": self.path, "auth": self.headers.get("Authorization"),
                   "ctype": self.headers.get("Content-Type"),
                   "body": json.loads(body)}, open(out + "/request.json", "w"))
        reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content":
                 "Here is the fix:\n```python\nvalues = []\nprint(sum(values) / max(len(values), 1))\n```\n"}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(out + "/port.tmp", "w").write(str(s.server_port))
import os; os.rename(out + "/port.tmp", out + "/port")
s.handle_request()
PY
python3 "$T/stub.py" "$T" &
stub=$!
i=0
while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$T/port" 2>/dev/null)

# curl's command line is world-readable (/proc/PID/cmdline): record it.
mkdir -p "$T/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >>%s/curl-argv\nexec /usr/bin/curl "$@"\n' "$T" >"$T/bin/curl"
chmod 755 "$T/bin/curl"
run_as sbxtest env PATH="$T/bin:/usr/bin:/bin" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=sk-test-123 OPENAI_MODEL=stub-model \
	"$SBX" run --json --max-attempts 2 --fix "$T/openai-fixer" "$T/job.py" >"$T/out" 2>"$T/err"
rc=$?
kill "$stub" 2>/dev/null
wait "$stub" 2>/dev/null
[ "$rc" = 0 ] || diag "$(cat "$T/err")"
req() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
exec(sys.argv[2])' "$T/request.json" "$1"; }

check "the loop succeeded on attempt 2" [ "$rc $(jget stop_reason) $(jget attempt)" = "0 ok 2" ]
check "attempt 2 ran the code from the reply's fenced block" [ "$(jget stdout)" = "0.0" ]
check "request: POST to /v1/chat/completions" req 'assert d["path"] == "/v1/chat/completions", d["path"]'
check "request: bearer token and JSON content type" req 'assert d["auth"] == "Bearer sk-test-123" and d["ctype"] == "application/json", d'
check "request: model and temperature 0" req 'assert d["body"]["model"] == "stub-model" and d["body"]["temperature"] == 0, d["body"]'
check "request: system then user message" req 'assert [m["role"] for m in d["body"]["messages"]] == ["system", "user"], d["body"]'
check "request: the user message has the numbered code and the traceback" req '
u = d["body"]["messages"][1]["content"]
assert "   2  print(sum(values) / len(values))" in u, u
assert "Traceback (most recent call last)" in u and "ZeroDivisionError: division by zero" in u, u
assert "Attempt 1 of 2 failed" in u, u'
check "the key is not on curl's command line (header file)" sh -c 'grep -q "chat/completions" "$1" && ! grep -q "sk-test-123" "$1"' _ "$T/curl-argv"
# A server that is not there: the fixer fails and the loop says so.
run_as sbxtest env OPENAI_BASE_URL="http://127.0.0.1:1/v1" "$SBX" run --json --fix "$T/openai-fixer" "$T/job.py" >"$T/out" 2>"$T/err"
check "unreachable endpoint: fixer_failed" [ "$(jget stop_reason)" = fixer_failed ]
finish
