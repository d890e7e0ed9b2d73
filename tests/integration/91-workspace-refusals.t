#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx apply's bad inputs (sbx(1) WORKSPACES): a symlink to /etc is applied
# as a symlink and nothing under /etc is written; a directory swapped for a
# symlink to elsewhere between run and apply is a conflict, nothing written
# through it; a manifest path with ".." is refused; a tampered manifest is
# refused by the audit log (the run's END signs another digest) and
# recorded; a tampered stored file stops the apply part-way, recorded as
# partial with the entries written; a moved workspace is refused; another
# user's changeset is not theirs to apply; workspace_size caps the changes
# and workspaces = no refuses --workspace; sparse files (holes cost the
# upper tmpfs nothing) and hard links do not make the collector write past
# workspace_size to the caller's disk: the changeset is incomplete, says why, is signed so
# and refused; END's changeset_entries is the manifest's entry lines
# exactly, whatever lines straddle the recorder's reads.
. "$(dirname "$0")/lib.sh"
plan 27
POL=$P/etc/sbx/policies.d
X=$T/state
W=$T/ws
OUT=$T/outside
mkdir -p "$X" "$W/sub" "$OUT"
printf 'same\n' > "$W/sub/f"
printf 'same\n' > "$OUT/f"
printf 'keep\n' > "$W/k1"
printf 'keep\n' > "$W/k2"
chown -R sbxtest:sbxtest "$X" "$W" "$OUT"
chmod 0700 "$X"
sed -e 's/^\[limits\]/[limits]\nworkspace_size = 1M/' "$POL/default.policy" > "$POL/ws91-small.policy"
sed -e 's/^\[filesystem\]/[filesystem]\nworkspaces = no/' "$POL/default.policy" > "$POL/ws91-none.policy"
chmod 0644 "$POL/ws91-small.policy" "$POL/ws91-none.policy"
trap 'rm -rf "$T" "$POL/ws91-small.policy" "$POL/ws91-none.policy"' EXIT
wrun() {
	u=sbxtest
	[ "$1" = --as ] && { u=$2; shift 2; }
	run_as "$u" env XDG_STATE_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
record_of() { # the latest APPLY record of run $1: "phase result check"
	python3 -c 'import sqlite3,sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
r = db.execute("SELECT run_id FROM records WHERE kind = '"'apply'"' AND applied_run = ? ORDER BY seq DESC LIMIT 1", (sys.argv[2],)).fetchone()
print(r[0] if r else "")' "$P/var/lib/sbx/audit.db" "$1"
}
field() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0].get(sys.argv[1]))' "$2"; }

# 1. a symlink to /etc, and a write through it inside the sandbox
wrun run --json --workspace "$W" -c 'import os
os.symlink("/etc", "/work/etc")
try:
    open("/work/etc/sbx-ws91", "w").write("x")
    print("wrote")
except OSError as e:
    print("refused", e.errno)'
ID=$(jget id)
check "symlink: the write through /work/etc -> /etc failed inside (read-only /etc)" \
	python3 -c 'import json,sys; sys.exit("refused" not in json.load(open(sys.argv[1]))["stdout"])' "$T/out"
wrun apply "$ID"
check "symlink: applied as a symlink, nothing written under /etc" \
	sh -c '[ "$1" = 0 ] && [ "$(readlink "$2/etc")" = /etc ] && [ ! -e /etc/sbx-ws91 ]' _ "$rc" "$W"
rm -f "$W/etc"

# 2. a directory swapped for a symlink between run and apply
wrun run --json --workspace "$W" -c 'open("/work/sub/f", "w").write("new\n")'
ID=$(jget id)
mv "$W/sub" "$W/sub.real" && ln -s "$OUT" "$W/sub" && chown -h sbxtest:sbxtest "$W/sub"
wrun apply "$ID"
check "beneath: a path through a symlink on disk is a conflict (exit 1)" \
	sh -c '[ "$1" = 1 ] && grep -q "conflict: sub/f: reached only through a symbolic link" "$2"' _ "$rc" "$T/err"
check "beneath: nothing written outside the workspace" grep -qx same "$OUT/f"
rm "$W/sub" && mv "$W/sub.real" "$W/sub"

# 3. a manifest path with ".."
CS=$X/sbx/changesets/$ID
cp "$CS/manifest" "$T/manifest.orig"
sed -i 's| sub/f$| ../outside/f|' "$CS/manifest"
wrun apply "$ID"
check "'..': refused before anything is written (125), naming the path" \
	sh -c '[ "$1" = 125 ] && grep -q "has an empty, .\.. or .\.\.. component" "$2"' _ "$rc" "$T/err"
check "'..': nothing written outside" grep -qx same "$OUT/f"

# 4. a tampered manifest (the meta file edited to match): the log refuses
sed "s|^entry \(f:[0-9a-f]*\) f:[0-9a-f]* |entry \1 f:$(printf 'evil\n' | sha256sum | cut -d' ' -f1) |; s| ../outside/f$| sub/f|" \
	"$T/manifest.orig" > "$CS/manifest"
printf 'evil\n' > "$CS/files/0"
sed -i "s|^sha256 .*|sha256 $(sha256sum < "$CS/manifest" | cut -d' ' -f1)|" "$CS/meta"
wrun apply "$ID"
check "tampered manifest: refused by the audit log (77), nothing written" \
	sh -c '[ "$1" = 77 ] && grep -q "does not vouch for this changeset (changeset differs from the run" "$2" && grep -qx same "$3/sub/f"' \
	_ "$rc" "$T/err" "$W"
A=$(record_of "$ID")
check "tampered manifest: recorded as refused, with the check's words" \
	[ "$(field "$A" apply_result) $(field "$A" apply_check)" = "refused changeset differs from the run's" ]

# 5. a tampered stored file: the first entry is written, the second is not
wrun run --json --workspace "$W" -c 'open("/work/k1", "w").write("one\n"); open("/work/k2", "w").write("two\n")'
ID=$(jget id)
CS=$X/sbx/changesets/$ID
n2=$(awk '$NF == "k2" { print $5 }' "$CS/manifest")
printf 'forged\n' > "$CS/files/$n2"
wrun apply "$ID"
check "stored content forged: stops there, exit 1, says which and why" \
	sh -c '[ "$1" = 1 ] && grep -q "k2: writing the new content: stored content does not match the changeset; 1 of 2" "$2"' _ "$rc" "$T/err"
check "stored content forged: k1 applied, k2 untouched (no temporary left)" \
	sh -c 'grep -qx one "$1/k1" && grep -qx keep "$1/k2" && ! ls -a "$1" | grep -q sbx-apply' _ "$W"
A=$(record_of "$ID")
check "stored content forged: recorded as partial with the entry written" \
	[ "$(field "$A" apply_result) $(field "$A" apply_files) $(field "$A" apply_paths)" = "partial 1 k1" ]

# 6. the workspace moved
wrun run --json --workspace "$W" -c 'open("/work/k2", "w").write("moved\n")'
ID=$(jget id)
mv "$W" "$W.old" && mkdir "$W" && chown sbxtest:sbxtest "$W"
wrun apply "$ID"
check "moved workspace: refused, naming it" \
	sh -c '[ "$1" = 125 ] && grep -q "is not the directory the run saw (moved or replaced)" "$2"' _ "$rc" "$T/err"
rmdir "$W" && mv "$W.old" "$W"

# 7. another user's changeset: not in their state directory, and the log
# does not vouch for it when they copy it
Y=$T/state2
mkdir -p "$Y/sbx/changesets" && cp -r "$X/sbx/changesets/$ID" "$Y/sbx/changesets/"
chown -R sbxtest2 "$Y" && chmod -R go-w "$Y" && chmod 0700 "$Y"
chown -R sbxtest2 "$W"
run_as sbxtest2 env XDG_STATE_HOME="$Y" "$SBX" apply "$ID" >"$T/out" 2>"$T/err" </dev/null
rc=$?
check "another user's run: the log refuses it (77), nothing written" \
	sh -c '[ "$1" = 77 ] && grep -q "another user.s run" "$2" && ! grep -q moved "$3/k2"' _ "$rc" "$T/err" "$W"
chown -R sbxtest "$W"
run_as sbxtest2 env XDG_STATE_HOME="$X" "$SBX" apply "$ID" >"$T/out" 2>"$T/err" </dev/null
rc=$?
check "another user's changeset directory: refused" [ "$rc" != 0 ]

# 8. workspace_size caps the changes; 0 refuses the workspace
wrun run --json --policy ws91-small --workspace "$W" -c 'import errno
try:
    open("/work/big", "wb").write(b"x" * (4 << 20))
    print("wrote")
except OSError as e:
    print(errno.errorcode[e.errno])'
check "workspace_size 1M: a 4M write meets ENOSPC" \
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["stdout"].strip() != "ENOSPC")' "$T/out"
check "workspace_size 1M: the workspace on disk has no big file" [ ! -e "$W/big" ]
wrun run --json --policy ws91-none --workspace "$W" -c 'pass'
check "workspaces = no: refused (77) naming the policy key" \
	sh -c '[ "$1" = 77 ] && grep -q "workspaces = no" "$2"' _ "$rc" "$T/out"
check "workspaces = no: no changeset directory left behind" sh -c '! ls -a "$1/sbx/changesets" | grep -q "^.new-"' _ "$X"
wrun run --json --workspace "$T/nonexistent" -c 'pass'
check "a workspace that does not exist: one line naming it (125)" \
	sh -c '[ "$1" = 125 ] && grep -q "nonexistent" "$2"' _ "$rc" "$T/out"

# 9. sparse files: 40 of 60 MiB each cost the 64M upper tmpfs nothing; the
# collector used to copy every apparent byte (2.4 GB) into files/N
wrun run --json --workspace "$W" -c 'for i in range(40):
    with open("/work/s%d" % i, "wb") as f:
        f.truncate(60 << 20)
print("made")'
ID=$(jget id)
CS=$X/sbx/changesets/$ID
diag "sparse: rc $rc, changeset $(jget changeset), $(du -sk "$CS" 2>&1)"
check "sparse: the run's changeset is incomplete and says why" \
	sh -c 'printf "%s\n" "$1" | grep -q "^incomplete: the sizes of the files the run wrote exceed workspace_size (64M): sparse files or hard links"' _ "$(jget changeset.missing)"
check "sparse: the changeset directory holds at most about workspace_size (du < 80 MiB)" \
	sh -c '[ -f "$1/manifest" ] && [ "$(du -sk "$1" | cut -f1)" -lt 81920 ]' _ "$CS"
wrun apply "$ID"
check "sparse: sbx apply refuses it, nothing written" \
	sh -c '[ "$1" != 0 ] && grep -q "the changeset is incomplete (the sizes of the files the run wrote exceed workspace_size" "$2" && [ ! -e "$3/s0" ]' \
	_ "$rc" "$T/err" "$W"
"$AUDIT" show --json "$ID" > "$T/show"
check "sparse: END signs changeset_missing with the reason" python3 -c 'import json,sys
ends = [r for r in json.load(open(sys.argv[1]))["records"] if r.get("kind") == "end"]
sys.exit(not (len(ends) == 1 and "exceed workspace_size" in (ends[0].get("changeset_missing") or "")))' "$T/show"
rm -rf "$CS"
# hard links: one inode of 30 MiB under three names, each stored as a file
wrun run --json --workspace "$W" -c 'import os
open("/work/h0", "wb").write(b"h" * (30 << 20))
os.link("/work/h0", "/work/h1")
os.link("/work/h0", "/work/h2")'
CS=$X/sbx/changesets/$(jget id)
check "hard links: three names of a 30 MiB file exceed workspace_size 64M: incomplete, du < 80 MiB" \
	sh -c 'printf "%s\n" "$1" | grep -q "exceed workspace_size (64M): sparse files or hard links" &&
		[ "$(du -sk "$2" | cut -f1)" -lt 81920 ]' _ "$(jget changeset.missing)" "$CS"
rm -rf "$CS"

# 10. END's entry count: 16000 added directories, lines of 24 bytes after
# a 53-byte header, so that lines begin 3 bytes before the recorder's 2nd
# and 5th 64 KiB read boundary (the count per read missed both)
wrun run --json --workspace "$W" -c 'import os
os.umask(0o022)
for i in range(16000):
    os.mkdir("/work/d%05d" % i, 0o755)'
ID=$(jget id)
CS=$X/sbx/changesets/$ID
ne=$(grep -c '^entry ' "$CS/manifest")
diag "entries: result $(jget changeset.entries), manifest $ne, END $(audit_field "$ID" records.1.changeset_entries)"
check "entries: the manifest has the 16000 directories, complete" \
	sh -c '[ "$1" = 16000 ] && tail -n1 "$2" | grep -qx "end complete"' _ "$ne" "$CS/manifest"
check "entries: the result's changeset.entries is the manifest's entry lines" [ "$(jget changeset.entries)" = "$ne" ]
"$AUDIT" show --json "$ID" > "$T/show"
check "entries: END's changeset_entries is the manifest's entry lines" python3 -c 'import json,sys
ends = [r for r in json.load(open(sys.argv[1]))["records"] if r.get("kind") == "end"]
sys.exit(not (len(ends) == 1 and ends[0].get("changeset_entries") == int(sys.argv[2])))' "$T/show" "$ne"
rm -rf "$CS"
finish
