#!/bin/sh
# SPDX-License-Identifier: ISC
# --workspace, sbx changes, sbx apply (sbx(1) WORKSPACES): a run edits,
# adds and deletes files and the directory on disk is unchanged; changes
# shows the diff; apply makes the directory what the run saw; a file
# changed on disk in between makes apply refuse; the APPLY records link to
# the run; --only applies a subset; sbx-audit search --applied.
. "$(dirname "$0")/lib.sh"
plan 32
X=$T/state
W=$T/ws
mkdir -p "$X" "$W/sub" "$W/deldir"
printf 'one\n' > "$W/a.txt"
printf 'two\n' > "$W/sub/b.txt"
printf 'bye\n' > "$W/gone.txt"
printf 'x\n' > "$W/deldir/y"
chown -R sbxtest:sbxtest "$X" "$W"
chmod 0700 "$X"
wrun() {
	run_as sbxtest env XDG_STATE_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# the tree as "type mode sha256 path" lines: files by content, links by target
LIST='import hashlib, os, sys
top = sys.argv[1] if len(sys.argv) > 1 else "/work"
for d, dirs, files in sorted(os.walk(top)):
    dirs.sort()
    for n in sorted(dirs + files):
        p = os.path.join(d, n); r = os.path.relpath(p, top); st = os.lstat(p)
        if os.path.islink(p): print("l", hashlib.sha256(os.readlink(p).encode()).hexdigest(), r)
        elif os.path.isdir(p): print("d", r)
        else: print("f", oct(st.st_mode & 0o777), hashlib.sha256(open(p, "rb").read()).hexdigest(), r)'
tree() { python3 -c "$LIST" "$1"; }
tree "$W" > "$T/before"

EDIT='import os, shutil
open("/work/a.txt", "w").write("ONE\n")
open("/work/new.txt", "w").write("new\n")
os.chmod("/work/new.txt", 0o755)
os.remove("/work/gone.txt")
shutil.rmtree("/work/deldir")
os.mkdir("/work/nd"); open("/work/nd/f", "w").write("f\n")
os.symlink("../a.txt", "/work/sub/lnk")
'
wrun run --json --workspace "$W" -c "$EDIT
$LIST"
check "run: ok" [ "$rc" = 0 ]
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stdout"], end="")' "$T/out" > "$T/seen"
ID=$(jget id)
check "run: the payload saw its edits at /work" grep -q ' new.txt$' "$T/seen"
tree "$W" > "$T/after-run"
check "run: the directory on disk is unchanged" cmp -s "$T/before" "$T/after-run"
check "result: changeset id is the run's id, 8 entries" [ "$(jget changeset.id) $(jget changeset.entries)" = "$ID 8" ]
SHA=$(jget changeset.sha256)
CS=$X/sbx/changesets/$ID
check "changeset: kept under XDG_STATE_HOME/sbx/changesets/ID, owned by the caller" \
	[ "$(stat -c %U "$CS/manifest")" = sbxtest ]
check "changeset: its manifest's SHA-256 is the result's" [ "$(sha256sum < "$CS/manifest" | cut -d' ' -f1)" = "$SHA" ]
check "audit: END signs the changeset digest" [ "$(audit_field "$ID" end.changeset_sha256)" = "$SHA" ]
check "audit: END counts 8 entries" [ "$(audit_field "$ID" end.changeset_entries)" = 8 ]

wrun changes "$ID"
check "changes: ok" [ "$rc" = 0 ]
check "changes: lists modified, added, deleted" sh -c 'grep -q "modified a.txt" "$1" && grep -q "added    new.txt" "$1" && grep -q "deleted  gone.txt" "$1" && grep -q "deleted  deldir/y" "$1"' _ "$T/out"
check "changes: unified diff of a.txt" sh -c 'grep -qx -- "-one" "$1" && grep -qx -- "+ONE" "$1" && grep -qx -- "--- a/a.txt" "$1"' _ "$T/out"
wrun changes "$ID" --json
check "changes --json: the symlink is a symlink" [ "$(python3 -c 'import json,sys; print([e["type"] for e in json.load(open(sys.argv[1]))["files"] if e["path"] == "sub/lnk"][0])' "$T/out")" = symlink ]

# a conflict: the file changed on disk since the run
printf 'changed\n' > "$W/a.txt"
chown sbxtest:sbxtest "$W/a.txt"
wrun apply "$ID"
check "apply: a file changed on disk makes it refuse (exit 1)" [ "$rc" = 1 ]
check "apply: the conflict is listed by path" grep -q 'conflict: a.txt: changed on disk since the run' "$T/err"
check "apply: nothing written on a conflict" sh -c '[ ! -e "$1/new.txt" ] && [ -e "$1/gone.txt" ] && grep -qx changed "$1/a.txt"' _ "$W"
printf 'one\n' > "$W/a.txt"

# --only: a subset, with the new directory it needs
wrun apply "$ID" --only nd/f
check "apply --only nd/f: ok" [ "$rc" = 0 ]
check "apply --only: nd/f written, the rest not" sh -c 'grep -qx f "$1/nd/f" && [ ! -e "$1/new.txt" ] && grep -qx one "$1/a.txt"' _ "$W"
wrun apply "$ID" --only nosuch
check "apply --only PATH not in the changeset: usage error (2)" [ "$rc" = 2 ]

wrun apply "$ID"
check "apply: ok" [ "$rc" = 0 ]
tree "$W" > "$T/after-apply"
# modes: the payload's umask decides new files' modes; new.txt was chmod'ed 0755
check "apply: the directory is now what the run saw" cmp -s "$T/seen" "$T/after-apply"
check "apply: files belong to the caller" [ "$(stat -c %U "$W/new.txt")" = sbxtest ]
check "apply: the symlink is a symlink with the run's target" [ "$(readlink "$W/sub/lnk")" = ../a.txt ]
check "apply: no temporary left behind" sh -c '! find "$1" -name ".sbx-apply-*" | grep -q .' _ "$W"
wrun apply "$ID"
check "apply again: nothing to do, ok" sh -c '[ "$2" = 0 ] && grep -q "nothing to apply" "$1"' _ "$T/out" "$rc"

# the APPLY records
# the APPLY records (the SQL columns the writer projects from each blob;
# sbx-audit verify checks them against it)
: > "$T/applies"
for a in $(python3 -c 'import sqlite3,sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
for (r,) in db.execute("SELECT run_id FROM records WHERE kind = '"'apply'"' AND applied_run = ? ORDER BY seq", (sys.argv[2],)): print(r)' "$P/var/lib/sbx/audit.db" "$ID"); do
	"$AUDIT" show --json "$a" | python3 -c 'import json,sys
d = json.load(sys.stdin)
r = f = d["records"][0]
print(f.get("apply_phase"), f.get("apply_result"), f.get("apply_check"), f.get("apply_subset"),
      f.get("applied_changeset_sha256") == sys.argv[1], r.get("user"))' "$SHA" >> "$T/applies"
done
check "audit: the conflict is recorded" grep -q '^end conflict verified all True sbxtest$' "$T/applies"
check "audit: the subset is recorded as such (begin and end)" sh -c 'grep -q "^begin begun verified only True" "$1" && grep -q "^end applied verified only True" "$1"' _ "$T/applies"
check "audit: the full apply is recorded, linked to the run and its digest" grep -q '^end applied verified all True sbxtest$' "$T/applies"
"$AUDIT" search --applied --format jsonl > "$T/applied" 2>&1
check "sbx-audit search --applied lists the run" grep -q "$ID" "$T/applied"

# a changeset id that does not exist, and one that is not a run id
wrun apply 0123456789abcdef0123456789abcdef
check "apply: an unknown changeset id is refused" sh -c '[ "$2" = 125 ] && grep -q "no such changeset" "$1"' _ "$T/err" "$rc"
wrun apply ../x
check "apply: an id that is not hex is a usage error (2)" [ "$rc" = 2 ]
# paths that look like the standard options: --only's value is a path, not
# --help (cli_std_opts skips an option's value; before, this printed usage)
W2=$T/ws2
mkdir -p "$W2"
chown sbxtest:sbxtest "$W2"
wrun run --json --workspace "$W2" -c 'open("/work/--help", "w").write("h\n"); open("/work/-h", "w").write("x\n")'
ID2=$(jget id)
wrun apply "$ID2" --only --help
check "apply --only --help: the file named --help is applied, not the usage printed" \
	sh -c '[ "$2" = 0 ] && grep -qx h "$1/--help" && [ ! -e "$1/-h" ] && ! grep -q "^usage" "$3"' _ "$W2" "$rc" "$T/out"
wrun apply "$ID2" --only -h
check "apply --only -h: the file named -h is applied" sh -c '[ "$2" = 0 ] && grep -qx x "$1/-h"' _ "$W2" "$rc"
[ -n "${DEBUG:-}" ] && { cat "$T/applies" "$T/err"; }
finish
