#!/bin/sh
# SPDX-License-Identifier: ISC
# Artifacts (sbx.policy(5) artifacts, sbx(1) "The result"):
# - 102 files in /out, some in nested subdirectories, all come back under
#   their paths relative to /out, with their digests;
# - every file not returned is in "skipped" with its reason (symlink,
#   not_regular, hidden; count_cap under a policy's artifacts = 5) and
#   plain mode says "sbx: N artifacts not saved (...)";
# - a file the payload was writing when /out filled up is returned flagged
#   truncated: true, and plain mode says it is incomplete.
. "$(dirname "$0")/lib.sh"
plan 10
POL=$P/etc/sbx/policies.d
cat > "$POL/fewarts.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
artifacts = 5
out_size = 1M
EOF2
chmod 644 "$POL/fewarts.policy"
MANY='import os
for i in range(100):
    open("/out/f%03d.txt" % i, "w").write("file %d\n" % i)
os.makedirs("/out/sub/deeper")
open("/out/sub/table.csv", "w").write("a,b\n1,2\n")
open("/out/sub/deeper/x.json", "w").write("{}")
os.symlink("/etc/passwd", "/out/sub/link")
os.mkfifo("/out/fifo")
open("/out/.cache", "w").write("hidden")'

sbx_run run --json --artifacts "$T/a" -c "$MANY"
diag "$(head -c 400 "$T/err")"
check "102 artifacts returned, outcome ok" [ "$(jget outcome)/$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["artifacts"]))' "$T/out")" = ok/102 ]
check "subdirectory files under their relative paths, saved there" \
	sh -c '[ "$(cat "$1/sub/table.csv")" = "$(printf "a,b\n1,2")" ] && [ "$(cat "$1/sub/deeper/x.json")" = "{}" ] && [ -f "$1/f099.txt" ]' _ "$T/a"
check "their digests in the result" python3 -c 'import hashlib, json, sys
d = json.load(open(sys.argv[1]))
a = {x["name"]: x for x in d["artifacts"]}
assert a["sub/deeper/x.json"]["sha256"] == hashlib.sha256(b"{}").hexdigest() and a["sub/table.csv"]["media_type"] == "text/csv"
assert not any(x["truncated"] for x in d["artifacts"])' "$T/out"
check "the symlink, the fifo and the hidden file are listed as skipped with their reasons" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert sorted((s["path"], s["reason"]) for s in d["skipped"]) == [(".cache", "hidden"), ("fifo", "not_regular"), ("sub/link", "symlink")], d["skipped"]
assert d["artifacts_skipped"] == 3 and d["skipped_reasons"] == {"hidden": 1, "not_regular": 1, "symlink": 1}' "$T/out"
check "no link followed: nothing but regular files and their directories saved" \
	[ "$(find "$T/a" -mindepth 1 ! -type f ! -type d | wc -l)/$(find "$T/a" -type f | wc -l)" = 0/102 ]

sbx_run run --json --policy fewarts -c "$MANY"
check "artifacts = 5: five returned, 97 listed as count_cap" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["artifacts"]) == 5 and d["skipped_reasons"]["count_cap"] == 97 and d["limits"]["artifacts"] == 5, d["skipped_reasons"]
assert sum(s["reason"] == "count_cap" for s in d["skipped"]) == 97' "$T/out"
sbx_run run --policy fewarts -c "$MANY"
diag "$(cat "$T/err")"
check "plain mode: 'sbx: 100 artifacts not saved (over the artifact count cap 5 (policy fewarts): 97; ...)'" \
	grep -qx 'sbx: 100 artifacts not saved (over the artifact count cap 5 (policy fewarts): 97; not a regular file: 1; a symbolic link: 1; a hidden name: 1); the result.s "skipped" lists them' "$T/err"

FILL='open("/out/small.txt", "w").write("done")
try:
    with open("/out/big.bin", "wb") as f:
        f.write(b"x" * 4000000)
except OSError as e:
    print("write failed:", e.strerror)'
sbx_run run --json --policy fewarts --artifacts "$T/b" -c "$FILL"
check "a file cut when /out filled: returned, truncated: true; the complete one not" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
a = {x["name"]: x for x in d["artifacts"]}
assert a["big.bin"]["truncated"] is True and a["small.txt"]["truncated"] is False, a
assert "/out" in d["disk_full"] and "No space left" in d["stdout"]' "$T/out"
ID=$(jget id)
sbx_run run --policy fewarts --artifacts "$T/c" -c "$FILL"
diag "$(cat "$T/err")"
check "plain mode: 'sbx: artifact big.bin is incomplete: /out filled up at 1M ...'" \
	grep -qx 'sbx: artifact big.bin is incomplete: /out filled up at 1M (policy fewarts) while it was written' "$T/err"
check "no cgroup left" no_cgroup_of "$ID"
finish
