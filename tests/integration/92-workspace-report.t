#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx-audit report --applies (sbx-audit(1)): after real --workspace runs
# and sbx apply, the section lists a conflict, a subset (--only) and a full
# apply of one user's run, another user's full apply of theirs, and a
# tampered changeset the log refused, flagged as not the run's changeset;
# a begin whose end never came; the counts per result; --since; JSON, text, CSV and HTML forms; a log
# without the projected APPLY columns still reports; every section and
# --html include it.
. "$(dirname "$0")/lib.sh"
plan 23
DB=$P/var/lib/sbx/audit.db
X=$T/state
Y=$T/state2
W=$T/ws
V=$T/ws2
mkdir -p "$X" "$Y" "$W" "$V"
printf 'one\n' > "$W/a.txt"
printf 'two\n' > "$W/b.txt"
printf 'v\n' > "$V/v.txt"
chown -R sbxtest:sbxtest "$X" "$W"
chown -R sbxtest2:sbxtest2 "$Y" "$V"
chmod 0700 "$X" "$Y"
wrun() {
	u=sbxtest s=$X
	[ "$1" = --as ] && { u=$2; s=$Y; shift 2; }
	run_as "$u" env XDG_STATE_HOME="$s" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# rj ARGS... -- PYTHON-EXPR: report --format json ARGS over the live log,
# EXPR evaluated on d (the document) and A (its applies by run and result)
rj() {
	args=
	while [ "$1" != -- ]; do args="$args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	"$AUDIT" report --format json $args >"$T/r.json" 2>"$T/r.err" || { cat "$T/r.err" >&2; return 1; }
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
A={}
for r in d.get("applies", []):
    A.setdefault((r["run"], r["result"], r["subset"]), []).append(r)
r=eval(sys.argv[2])
if not r: print("# got:", json.dumps(d.get("applies"))[:3000], json.dumps(d.get("applies_by_result")))
sys.exit(0 if r else 1)' "$T/r.json" "$1" "$ID" "$ID2" "$ID3" "$ID4"
}
start=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)

# sbxtest's run: a.txt and b.txt changed, c.txt added (3 entries)
wrun run --json --workspace "$W" -c 'open("/work/a.txt", "w").write("ONE\n")
open("/work/b.txt", "w").write("TWO\n")
open("/work/c.txt", "w").write("three\n")'
ID=$(jget id)
SHA=$(jget changeset.sha256)
check "run 1 (sbxtest): a changeset of 3 entries" [ "$(jget changeset.entries)" = 3 ]
# a conflict: a.txt changed on disk since the run
printf 'edited\n' > "$W/a.txt"
wrun apply "$ID"
c1=$rc
printf 'one\n' > "$W/a.txt"
wrun apply "$ID" --only b.txt
c2=$rc
wrun apply "$ID"
check "sbx apply: a conflict (1), a subset (0), the rest (0)" [ "$c1 $c2 $rc" = "1 0 0" ]

# sbxtest2 applies a run of their own
mid=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
wrun --as sbxtest2 run --json --workspace "$V" -c 'open("/work/v.txt", "w").write("V\n")'
ID2=$(jget id)
wrun --as sbxtest2 apply "$ID2"
check "run 2 (sbxtest2): applied" [ "$rc" = 0 ]

# a tampered changeset (manifest and meta edited to agree): the log refuses
wrun run --json --workspace "$W" -c 'open("/work/b.txt", "w").write("honest\n")'
ID3=$(jget id)
CS=$X/sbx/changesets/$ID3
sed -i "s|^entry \(f:[0-9a-f]*\) f:[0-9a-f]* |entry \1 f:$(printf 'evil\n' | sha256sum | cut -d' ' -f1) |" "$CS/manifest"
printf 'evil\n' > "$CS/files/0"
sed -i "s|^sha256 .*|sha256 $(sha256sum < "$CS/manifest" | cut -d' ' -f1)|" "$CS/meta"
wrun apply "$ID3"
check "run 3: the tampered changeset is refused by the log (77)" [ "$rc" = 77 ]

# an apply killed after its begin (sbx apply's begin report, sent to the
# helper as sbx apply sends it, and no end): "begun"
wrun run --json --workspace "$W" -c 'open("/work/c.txt", "w").write("four\n")'
ID4=$(jget id)
SHA4=$(jget changeset.sha256)
cat > "$T/begin.py" <<'PY'
import os, socket, subprocess, sys
import sbxframes as F
helper, run, sha = sys.argv[1:4]
code = F.memfd(("sbx-apply 1\nphase begin\nrun %s\nchangeset %s\nsubset all\nresult begun\nfiles 1\npath c.txt\n"
                % (run, sha)).encode(), name="sbx-apply")
a, b = socket.socketpair()
p = subprocess.Popen([helper, "run", "--apply", "--code-fd", str(code), "--result-fd", str(b.fileno())],
                     pass_fds=(code, b.fileno()), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
b.close()
res = F.result(F.read_all(a, 20)) or {}
p.wait(timeout=20)
print(res.get("apply", {}).get("result"), res.get("apply", {}).get("check"))
PY
chmod 0644 "$T/begin.py"
run_as sbxtest /usr/bin/python3 "$T/begin.py" "$P/libexec/sbx/sbx-helper" "$ID4" "$SHA4" >"$T/out" 2>"$T/err"
check "run 4: a begin recorded without an end" grep -qx 'begun verified' "$T/out"

check "--applies: the conflict, sbxtest's run 1, all, 1 path, its digest matches" rj --applies -- \
	'[(r["user"], r["files"], r["entries"], r["matches_run"], r["changeset"], r["run_user"]) for r in A[(sys.argv[3], "conflict", "all")]] == [("sbxtest", 1, 3, "yes", "'"$SHA"'", "sbxtest")]'
check "--applies: the subset (--only b.txt) is marked only, 1 of 3 files" rj --applies -- \
	'[(r["user"], r["files"], r["entries"], r["matches_run"], r["check"]) for r in A[(sys.argv[3], "applied", "only")]] == [("sbxtest", 1, 3, "yes", "verified")]'
check "--applies: the full apply of the rest: all, 2 files, by sbxtest" rj --applies -- \
	'[(r["user"], r["files"], r["matches_run"], r["changeset"]) for r in A[(sys.argv[3], "applied", "all")]] == [("sbxtest", 2, "yes", "'"$SHA"'")]'
check "--applies: sbxtest2's own apply of run 2, with its uid and the run's code digest" rj --applies -- \
	'[(r["user"], r["uid"], r["run_user"], len(r["code_sha256"])) for r in A[(sys.argv[4], "applied", "all")]] == [("sbxtest2", '"$(id -u sbxtest2)"', "sbxtest2", 64)]'
check "--applies: the begin without an end is begun, its files to write" rj --applies -- \
	'[(r["user"], r["files"], r["matches_run"], r["check"]) for r in A[(sys.argv[6], "begun", "all")]] == [("sbxtest", 1, "yes", "verified")]'
check "--applies: the refusal: run 3, not the run's changeset, the log's words" rj --applies -- \
	'[(r["user"], r["matches_run"], r["check"]) for r in A[(sys.argv[5], "refused", "all")]] == [("sbxtest", "NO: not the run'"'"'s changeset", "changeset differs from the run'"'"'s")]'
check "--applies: one row per apply, oldest first (begin and end are one)" rj --applies -- \
	'[(r["run"], r["result"]) for r in d["applies"] if r["run"] in sys.argv[3:]] == [(sys.argv[3], "conflict"), (sys.argv[3], "applied"), (sys.argv[3], "applied"), (sys.argv[4], "applied"), (sys.argv[5], "refused"), (sys.argv[6], "begun")]'
"$AUDIT" show --json "$(python3 -c 'import json,sys; print([r["apply"] for r in json.load(open(sys.argv[1]))["applies"] if r["run"] == sys.argv[2] and r["subset"] == "only"][0])' "$T/r.json" "$ID")" > "$T/begin.json"
check "--applies: the subset's apply id is its begin record (sbx-audit show)" python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["records"][0]
sys.exit(not (r["apply_phase"] == "begin" and r["applied_run"] == sys.argv[2] and r["apply_subset"] == "only"))' "$T/begin.json" "$ID"
check "--applies: counts per result (since this test began)" rj --applies --since "$start" -- \
	'{r["result"]: (r["applies"], r["users"], r["subsets"], r["not_the_runs_changeset"]) for r in d["applies_by_result"]} == {"applied": (3, 2, 1, 0), "conflict": (1, 1, 0, 0), "refused": (1, 1, 0, 1), "begun": (1, 1, 0, 0)}'
cp "$T/r.json" "$T/full.json"
check "--applies --since: only what was applied after it" rj --applies --since "$mid" -- \
	'sorted(r["run"] for r in d["applies"]) == sorted(sys.argv[4:7])'
check "--applies --until: nothing from before this test's applies" rj --applies --until "$start" -- \
	'not any(r["run"] in sys.argv[3:] for r in d["applies"])'

"$AUDIT" report --applies --since "$start" --no-verify >"$T/r.txt" 2>&1
check "text: the refused row is flagged with '!' and NO, the others not" sh -c \
	'[ "$(grep -c "^! " "$1")" = 1 ] && grep "^! " "$1" | grep -q "$2.*refused.*NO: not the run" && grep -q "^  .*$3.*applied.*only.*yes" "$1"' \
	_ "$T/r.txt" "$ID3" "$ID"
"$AUDIT" report --applies --since "$start" --format csv >"$T/r.csv" 2>&1
check "csv: both tables, the subset row among them" python3 -c 'import csv,sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
sys.exit(not (rows[0][:3] == ["time", "apply", "user"] and any(r[4:8] == [sys.argv[2], "sbxtest", "applied", "only"] for r in rows) and ["result", "applies", "users", "runs", "subsets", "not_the_runs_changeset"] in rows))' "$T/r.csv" "$ID"

"$AUDIT" report --since "$start" --html "$T/r.html"
check "html: the applies section and the counts" sh -c \
	'grep -q "<section id=\"applies\">" "$1" && grep -q "<section id=\"applies_by_result\">" "$1" && grep -q "<td>$2</td>" "$1"' _ "$T/r.html" "$ID2"
check "html: the refused row is marked alert, no applied row is" python3 -c 'import re,sys
s = open(sys.argv[1]).read()
rows = re.findall(r"<tr( class=\"alert\")?>(.*?)</tr>", s[s.index("<section id=\"applies\">"):s.index("<section id=\"applies_by_result\">")])
bad = [r for a, r in rows if a]
sys.exit(not (len(bad) == 1 and sys.argv[2] in bad[0] and "refused" in bad[0] and any(sys.argv[3] in r and not a for a, r in rows)))' \
	"$T/r.html" "$ID3" "$ID2"
check "without a section option: the summary only, no applies" sh -c \
	'"$1" report --format json >"$2" && ! grep -q "\"applies\"" "$2"' _ "$AUDIT" "$T/def.json"

# a log without the APPLY columns (written before they were projected):
# the section reads the signed blobs, so the applies are still there
python3 - "$DB" "$T/old.db" <<'EOF'
import sqlite3, sys
src = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)
for c in ("applied_run", "apply_result", "changeset_sha256"):
    dst.execute("ALTER TABLE records DROP COLUMN %s" % c)
dst.commit()
EOF
"$AUDIT" --db "$T/old.db" report --applies --no-verify --since "$start" --format json >"$T/old.json" 2>"$T/old.err"
check "a log without applied_run, apply_result, changeset_sha256: reported, same rows" python3 -c 'import json,sys
a = json.load(open(sys.argv[1]))["applies"]; b = json.load(open(sys.argv[2]))
sys.exit(not (len(a) == 6 and a == b["applies"]))' "$T/old.json" "$T/full.json" ||
	cat "$T/old.err"
python3 "$SBX_SRCDIR/tests/integration/mkreportdb.py" "$DB" "$T/fx.db" <<'EOF'
2026-01-05T09:00:00Z alice default python ok - c1 - 1
EOF
"$AUDIT" --db "$T/fx.db" report --applies --no-verify --format json >"$T/fx.json" 2>&1
check "a log without applies: the section is there and empty" python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); sys.exit(not (d["applies"] == [] and d["applies_by_result"] == []))' "$T/fx.json"
finish
