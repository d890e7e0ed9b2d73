#!/bin/sh
# SPDX-License-Identifier: ISC
# The output cap keeps head and tail (sbx.policy(5) output, output_action):
# - truncate (default): a 5 MB print under the default 1M cap returns the
#   first part, a marker line with the byte counts and the last part (the
#   last line included); the program goes on past the cap and finishes
#   (outcome ok, a file it writes afterwards comes back), "limit" is
#   "output", stdout_omitted_bytes counts what was left out, plain mode
#   says "sbx: output cut at 1M (policy default); N not shown";
# - a traceback printed after a flood of output is still in stderr's tail
#   and parsed;
# - kill: the run is stopped at the cap (outcome output_limit, exit 137).
. "$(dirname "$0")/lib.sh"
plan 11
POL=$P/etc/sbx/policies.d
cat > "$POL/cutkill.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
output = 64K
output_action = kill
EOF2
chmod 644 "$POL/cutkill.policy"
FLOOD='import sys
for i in range(100000):
    print("line %06d %s" % (i, "x" * 40))
print("LAST LINE")
open("/out/after.txt", "w").write("finished")'

sbx_run run --json --artifacts "$T/a1" -c "$FLOOD"
check "5 MB printed: outcome ok, limit output, exit 0" [ "$rc/$(jget outcome)/$(jget limit)" = 0/ok/output ]
check "head and tail: the first line, the marker, the last lines" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = d["stdout"]
head, rest = s.split("\n[sbx: output cut at the output limit: ", 1)
marker, tail = rest.split("\n", 1)
n, of = int(marker.split()[0]), int(marker.split()[2])
assert head.startswith("line 000000 ") and tail.endswith("line 099999 " + "x" * 40 + "\nLAST LINE\n"), (head[:40], tail[-80:])
assert tail.startswith("line ") and of == d["stdout_bytes"] == 100000 * 53 + 10, (tail[:20], of)
assert n == d["stdout_omitted_bytes"] and abs(of - len(head) - len(tail) - n) <= 1, (n, len(head), len(tail))  # the head may have ended with its newline
assert len(head) + len(tail) <= d["limits"]["output_bytes"] and len(tail) > 200000
assert d["stdout_truncated"] is True and d["error"] is None and d["limits"]["output_action"] == "truncate"
' "$T/out"
check "the program went on past the cap: its later file is returned" [ "$(cat "$T/a1/after.txt" 2>/dev/null)" = finished ]
ID=$(jget id)
audit_show "$ID" > "$T/rec"
check "END record: limit output, outcome ok" sh -c 'grep -Eq "limit +output" "$1" && grep -Eq "outcome +ok" "$1"' _ "$T/rec"

sbx_run run -c "$(printf '%s\n' "$FLOOD" | sed '$d')"
diag "$(cat "$T/err")"
check "plain mode: 'sbx: output cut at 1M (policy default); 4.3M not shown', the only line" \
	sh -c '[ "$(cat "$1")" = "sbx: output cut at 1M (policy default); 4.3M not shown" ]' _ "$T/err"
check "plain mode: stdout streams the head, the marker and the tail, ending with the last line" \
	sh -c 'head -1 "$1" | grep -q "^line 000000 " && grep -q "^\[sbx: output cut at the output limit: " "$1" && [ "$(tail -1 "$1")" = "LAST LINE" ]' _ "$T/out"

sbx_run run --json -c 'import sys
sys.stderr.write("noise\n" * 400000)
raise ValueError("the real error, at the end")'
check "a traceback after 2.4 MB of stderr: outcome error, the traceback parsed from the tail" \
	[ "$(jget outcome)/$(jget traceback.type)/$(jget error.type)" = error/ValueError/ValueError ]
jget stderr > "$T/stderr"
check "stderr keeps its head and its tail" sh -c 'head -1 "$1" | grep -qx noise && grep -q "ValueError: the real error, at the end" "$1"' _ "$T/stderr"

sbx_run run --json --policy cutkill -c 'import time
print("x" * 1000000)
time.sleep(20)'
check "output_action = kill: outcome output_limit, exit 137, limit output" \
	[ "$rc/$(jget outcome)/$(jget limit)" = 137/output_limit/output ]
check "kill: the head of 64K is kept, no marker" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["stdout"]) == 65536 and "[sbx:" not in d["stdout"] and d["stdout_omitted_bytes"] == d["stdout_bytes"] - 65536' "$T/out"
check "no cgroup left" no_cgroup_of "$ID" "$(jget id)"
finish
