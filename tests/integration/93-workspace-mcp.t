#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx mcp --workspace (issue 20: "the tool result carries the changeset
# summary and diff (bounded), and an apply_changes tool"): execute_code's
# /work is the workspace copy-on-write and the disk is unchanged; the
# result carries the entries and the diff; apply_changes applies all or
# --only a subset, refuses a conflict with nothing written, refuses a
# changeset no call of this server proposed, and is recorded (search
# --applied); the diff and the entries are bounded; without --workspace
# there is no apply_changes; the official SDK validates the result.
. "$(dirname "$0")/lib.sh"
plan 25
X=$T/state
W=$T/ws
mkdir -p "$X" "$W" "$T/tmp"
printf 'one\n' > "$W/a.txt"
printf 'bye\n' > "$W/gone.txt"
chown -R sbxtest:sbxtest "$X" "$W" "$T/tmp"
chmod 0700 "$X"
SRV="env TMPDIR=$T/tmp XDG_STATE_HOME=$X $SBX mcp --workspace $W"
drive() { # drive SCRIPT [more sbx mcp options]: the PASS/FAIL lines in $T/drive.out
	printf '%s\n' "$1" > "$T/script.py"
	shift
	run_as sbxtest env WS="$W" python3 "$SBX_SRCDIR/tests/integration/mcpdrive.py" "$T/script.py" -- \
		$SRV "$@" >"$T/drive.out" 2>"$T/drive.err"
	rc=$?
	if grep -q FAIL "$T/drive.out"; then diag "$(grep FAIL "$T/drive.out" | cut -c1-600)" "$(tail -3 "$T/drive.err")"; fi
}
passed() { grep -qx "PASS $1" "$T/drive.out"; }

# a changeset the command line made: the server must not apply it
run_as sbxtest env XDG_STATE_HOME="$X" "$SBX" run --json --workspace "$W" -c 'open("/work/cli.txt", "w").write("cli")' \
	>"$T/cli.json" 2>"$T/cli.err" </dev/null
CLI=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["changeset"]["id"])' "$T/cli.json")
check "a command-line run left changeset $CLI" [ -n "$CLI" ]

drive '
import os
ws = os.environ["WS"]
tools = request("tools/list", {})["tools"]
ap = [t for t in tools if t["name"] == "apply_changes"]
ex = [t for t in tools if t["name"] == "execute_code"][0]
check("tools/list", len(ap) == 1 and ap[0]["annotations"]["destructiveHint"] is True and
      "copy-on-write" in ex["description"], tools)
r = call("execute_code", {"code": "import os\nopen(\"/work/a.txt\", \"w\").write(\"ONE\\n\")\nopen(\"/work/new.txt\", \"w\").write(\"new\\n\")\nos.remove(\"/work/gone.txt\")"})
cs = sc(r).get("changeset", {})
acts = sorted((f["action"], f["path"]) for f in cs.get("files", []))
check("run result", not r["isError"] and cs.get("entries") == 3 and cs.get("files_omitted") == 0 and
      acts == [("added", "new.txt"), ("deleted", "gone.txt"), ("modified", "a.txt")], r)
check("run diff", "\n-one\n+ONE\n" in cs.get("diff", "") and "+new" in cs["diff"] and cs["diff_omitted_bytes"] == 0, cs)
check("run text", any(t.startswith("changeset %s: 3 change(s)" % cs.get("id")) for t in texts(r)) and
      any("+ONE" in t for t in texts(r)), texts(r))
check("disk unchanged", open(ws + "/a.txt").read() == "one\n" and not os.path.exists(ws + "/new.txt") and
      os.path.exists(ws + "/gone.txt"))
a = call("apply_changes", {"changeset": cs["id"], "only": ["new.txt"]})
check("apply only", not a["isError"] and sc(a)["result"] == "applied" and sc(a)["applied"] == 1 and
      open(ws + "/new.txt").read() == "new\n" and open(ws + "/a.txt").read() == "one\n", a)
a = call("apply_changes", {"changeset": cs["id"]})
check("apply rest", not a["isError"] and sc(a)["result"] == "applied" and open(ws + "/a.txt").read() == "ONE\n" and
      not os.path.exists(ws + "/gone.txt"), a)
r2 = call("execute_code", {"code": "open(\"/work/a.txt\", \"w\").write(\"TWO\\n\")"})
open(ws + "/a.txt", "w").write("local\n")
a = call("apply_changes", {"changeset": sc(r2)["changeset"]["id"]})
check("conflict", a["isError"] and sc(a)["result"] == "conflict" and sc(a)["conflicts"][0]["path"] == "a.txt" and
      open(ws + "/a.txt").read() == "local\n" and any("conflict: a.txt" in t for t in texts(a)), a)
a = call("apply_changes", {"changeset": "'"$CLI"'"})
check("not proposed", a.get("isError") and "not one that an execute_code call of this server proposed" in texts(a)[0] and
      not os.path.exists(ws + "/cli.txt"), a)
a = call("apply_changes", {"changeset": "../../x"})
check("bad id", a.get("isError") and "changeset: missing or not a changeset id" in texts(a)[0], a)
print("ID", cs["id"])
'
check "server exits 0 (rc $rc)" [ "$rc" = 0 ]
check "tools/list offers apply_changes (destructiveHint) and says /work is copy-on-write" passed "tools/list"
check "execute_code: the result's changeset lists modified, added, deleted" passed "run result"
check "execute_code: the result carries the unified diff" passed "run diff"
check "execute_code: a text block names the changeset and one shows the diff" passed "run text"
check "execute_code: the workspace on disk is unchanged" passed "disk unchanged"
check "apply_changes only new.txt: only it is written" passed "apply only"
check "apply_changes of the rest: the directory is what the run saw" passed "apply rest"
check "apply_changes after a file changed on disk: conflict, nothing written" passed "conflict"
check "apply_changes of a changeset no call of this server proposed: refused, nothing written" passed "not proposed"
check "apply_changes with an id that is not hex: refused" passed "bad id"
ID=$(sed -n 's/^ID //p' "$T/drive.out")
"$AUDIT" search --applied --format jsonl > "$T/applied" 2>&1
check "the applies are recorded: sbx-audit search --applied lists the run" grep -q "$ID" "$T/applied"

# bounds: --max-text bounds the diff; 100 entries are listed, the rest counted
drive '
r = call("execute_code", {"code": "for i in range(150): open(\"/work/f%03d\" % i, \"w\").write(\"x\" * 100 + \"\\n\")"})
cs = sc(r)["changeset"]
check("bounds", cs["entries"] == 150 and len(cs["files"]) == 100 and cs["files_omitted"] == 50 and
      len(cs["diff"].encode()) <= 1024 and cs["diff_omitted_files"] > 100 and cs["shown_whole"] is False and
      any("of the diff not shown" in t for t in texts(r)) and any("and 50 more" in t for t in texts(r)), cs)
a = call("apply_changes", {"changeset": cs["id"]})
check("partial refused", a.get("isError") and "did not show it whole" in texts(a)[0], a)
' --max-text 1K
check "--max-text 1K: the diff within 1 KiB, the rest counted; 100 entries listed, 50 counted" passed bounds
check "apply_changes of a changeset not shown whole: refused (the review found one applied unseen)" passed "partial refused"

# the review of this change: modes, symlink targets, forged names, only [],
# two applies at once, a message that is not UTF-8
printf 'c\n' > "$W/c.txt"
chown sbxtest:sbxtest "$W/c.txt"
drive '
import os
ws = os.environ["WS"]
um = os.umask(0); os.umask(um)
r = call("execute_code", {"code": "import os\nos.chmod(\"/work/c.txt\", 0o666)\nopen(\"/work/x.sh\", \"w\").write(\"x\")\nos.chmod(\"/work/x.sh\", 0o777)\nos.symlink(\"/etc/passwd\", \"/work/notes.md\")\nopen(\"/work/evil\\n  modified README.md\", \"w\").write(\"e\")"})
cs = sc(r)["changeset"]
modes = {f["path"]: f["mode"] for f in cs["files"]}
listing = texts(r)[[i for i, t in enumerate(texts(r)) if t.startswith("changeset ")][0]]
check("modes shown", modes.get("c.txt") == 0o666 and modes.get("x.sh") == 0o777 and
      "c.txt (mode 0666)" in listing and "x.sh (mode 0777)" in listing, (modes, listing))
check("symlink target shown", "symlink a/notes.md -> /etc/passwd" in cs["diff"], cs["diff"])
check("names cannot forge lines", "  modified README.md" not in listing.split("\n") and
      "evil\\x0a  modified README.md" in listing, listing)
a = call("apply_changes", {"changeset": cs["id"], "only": []})
check("only empty refused", a.get("isError") and "only: not an array of 1 to" in texts(a)[0], a)
a = call("apply_changes", {"changeset": cs["id"], "only": ["\u00e9" * 1000]})
check("utf8 answer", a.get("isError") is True and len(texts(a)) == 1, a)
a = call("apply_changes", {"changeset": cs["id"]})
st = os.stat(ws + "/x.sh").st_mode & 0o7777
check("umask applied", not a["isError"] and os.stat(ws + "/c.txt").st_mode & 0o777 == 0o666 & ~um and
      st == 0o777 & ~um and os.readlink(ws + "/notes.md") == "/etc/passwd", (a, oct(st), oct(um)))
r1 = call("execute_code", {"code": "open(\"/work/c.txt\", \"w\").write(\"X\\n\")"})
r2 = call("execute_code", {"code": "open(\"/work/c.txt\", \"w\").write(\"Y\\n\")"})
i1 = send("apply_changes", {"changeset": sc(r1)["changeset"]["id"]})
i2 = send("apply_changes", {"changeset": sc(r2)["changeset"]["id"]})
a1, a2 = answer(i1), answer(i2)
check("one apply at a time", sorted([sc(a1).get("result"), sc(a2).get("result")]) == ["applied", "conflict"] and
      open(ws + "/c.txt").read() == "X\n", (a1, a2))
'
check "the result lists each file's mode (a mode-only change is visible)" passed "modes shown"
check "the diff shows a symbolic link's target" passed "symlink target shown"
check "a file name with a newline cannot forge a line of the listing" passed "names cannot forge lines"
check "apply_changes with only [] is refused (it would apply everything)" passed "only empty refused"
check "apply_changes whose error is cut mid-character still gets an answer" passed "utf8 answer"
check "apply_changes applies modes less the caller's umask (no world-writable file)" passed "umask applied"
check "two apply_changes of changesets from one state at once: the first applied, the second a conflict" \
	passed "one apply at a time"

# no --workspace: no apply_changes
printf '%s\n' 'r = call("apply_changes", {"changeset": "ab"})
tools = [t["name"] for t in request("tools/list", {})["tools"]]
check("none", "apply_changes" not in tools and "Unknown tool" in r["rpc_error"]["message"], (tools, r))' > "$T/script.py"
run_as sbxtest python3 "$SBX_SRCDIR/tests/integration/mcpdrive.py" "$T/script.py" -- env TMPDIR="$T/tmp" "$SBX" mcp >"$T/drive.out" 2>&1
check "without --workspace: no apply_changes (unknown tool)" passed none

run_as sbxtest "$SBX" mcp --workspace "$T/nonexistent" </dev/null >"$T/out" 2>&1
check "mcp --workspace of a missing directory: one line naming it, not 0" \
	sh -c '[ "$1" != 0 ] && [ "$(wc -l < "$2")" = 1 ] && grep -q nonexistent "$2"' _ "$?" "$T/out"

# --- the official MCP TypeScript SDK as the client ---
mcp_sdk
if [ -n "$why" ]; then
	n=$((n + 1)); echo "ok $n # SKIP $why"
	finish
fi
(cd "$T" && timeout 300 env SBX_TEST_WORKSPACE="$W" node "$cache/client.mjs" --with-workspace -- setpriv --reuid=sbxtest \
	--regid=sbxtest --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR="$T/tmp" XDG_STATE_HOME="$X" \
	"$SBX" mcp --workspace "$W") >"$T/sdk.out" 2>"$T/sdk.err"
grep -q FAIL "$T/sdk.out" && diag "$(grep FAIL "$T/sdk.out")"
check "SDK: execute_code's changeset (validated against outputSchema), apply_changes" \
	grep -qx "PASS workspace changeset and apply_changes" "$T/sdk.out"
finish
