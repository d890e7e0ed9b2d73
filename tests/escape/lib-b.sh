# SPDX-License-Identifier: ISC
# Shared by the escape tests 07-11 and 13-15 (sourced after
# tests/integration/lib.sh). The test programs from tests/escape/bin/ are
# built by `make escape-bins` and installed by setup.sh into
# $P/lib/sbx-escape; a run of a single script without them compiles them.
# the system interpreter: a version manager's shim in PATH costs 0.5 s a call
if [ -x /usr/bin/python3 ]; then python3() { /usr/bin/python3 "$@"; }; fi
HELPER=$P/libexec/sbx/sbx-helper
EB=$T/ebin
mkdir -p "$EB"
chmod 0755 "$EB"
for prog in kobj rawexec; do
	if [ -x "$P/lib/sbx-escape/$prog" ]; then
		cp "$P/lib/sbx-escape/$prog" "$EB/$prog"
	else
		cc -O2 -D_GNU_SOURCE -pthread -o "$EB/$prog" "$SBX_SRCDIR/tests/escape/bin/$prog.c" || exit 1
	fi
	chmod 0755 "$EB/$prog"
done

# bin_payload FILE PROG ARGS...: write a sh payload to FILE that unpacks
# the test program into the sandbox's /tmp (the host's test paths are not
# visible inside) and execs it. Only /usr, /lib* and friends are bound, so
# the program is dynamically linked against the host's libc like any
# interpreter there.
bin_payload() {
	f=$1; prog=$2; shift 2
	{
		echo 'base64 -d > /tmp/p <<"SBXEOF"'
		base64 "$EB/$prog"
		echo 'SBXEOF'
		echo 'chmod 755 /tmp/p'
		echo "exec /tmp/p $*"
	} > "$f"
	chmod 0644 "$f"
}

# The newest run in this install's audit log (other helpers' runs go to
# their own prefixes) and its END outcome ("incomplete" without END).
last_id() { "$AUDIT" list --limit 1 --json | python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[-1]["id"] if l else "")'; }
runs_count() { "$AUDIT" list --limit 0 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
end_outcome() { "$AUDIT" list --limit 0 --json | python3 -c 'import json,sys
for r in json.load(sys.stdin):
    if r["id"] == sys.argv[1]: print(r["outcome"])' "$1"; }
# run ids whose recorded argv holds STRING (the code's file name)
ids_for() { "$AUDIT" list --limit 50 --json | python3 -c 'import json,subprocess,sys
for r in json.load(sys.stdin):
    d = json.loads(subprocess.run([sys.argv[1], "show", "--json", r["id"]], capture_output=True, text=True).stdout or "{}")
    if any(sys.argv[2] in a for a in (d.get("start") or {}).get("argv") or []): print(r["id"])' "$AUDIT" "$1"; }
# no cgroup directory of run ID in any hierarchy
cg_gone() { ! ls -d /sys/fs/cgroup/*/sbx/run-"$1" /sys/fs/cgroup/sbx/run-"$1" 2>/dev/null | grep -q .; }
# host processes whose command line contains MARKER (never this shell's)
marked() { pgrep -f -- "$1" | grep -vx "$$" || true; }
# drive CASES.json: run sbx-helper directly as sbxtest once per case
# (tests/escape/drive.py); one JSON line per case in $T/drive.out
cp "$SBX_SRCDIR/tests/escape/drive.py" "$T/drive.py"
chmod 0755 "$T/drive.py"
# and a summary in $T/drive.tsv: name, rc, stderr lines, whether stderr is
# one "sbx-helper: " line, result frames, outcome, run id
drive() {
	chmod 0644 "$1"
	run_as sbxtest /usr/bin/python3 "$T/drive.py" "$HELPER" "$EB/rawexec" "$1" > "$T/drive.out"
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l); e = d["stderr"]; r = d["result"] or {}
    one = len(e.splitlines()) == 1 and e.startswith("sbx-helper: ") and e.endswith("\n")
    print(d["name"], d["rc"], len(e.splitlines()), "one" if one else "not-one", d["frames"],
          r.get("outcome", "-"), r.get("id", "-"), sep="\t")' "$T/drive.out" > "$T/drive.tsv"
}
# dcol NAME COLUMN: one column of drive.tsv (2 rc, 4 one-line, 5 frames, 6 outcome, 7 id)
dcol() { awk -F'\t' -v n="$1" -v c="$2" '$1 == n {print $c}' "$T/drive.tsv"; }
# dget NAME FIELD: a field of one case's result line ("result.outcome"...)
dget() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["name"] != sys.argv[2]: continue
    for k in sys.argv[3].split("."):
        d = d.get(k) if isinstance(d, dict) else None
    print("null" if d is None else d)' "$T/drive.out" "$1" "$2"; }
# runs_by_code MARK: "FILE ID OUTCOME WALL_MS" for the newest 100 runs whose
# code file name (argv) holds MARK; OUTCOME "incomplete" without END
runs_by_code() { "$AUDIT" list --limit 100 --json | python3 -c 'import json,subprocess,sys
for r in json.load(sys.stdin):
    d = json.loads(subprocess.run([sys.argv[1], "show", "--json", r["id"]], capture_output=True, text=True).stdout or "{}")
    for a in (d.get("start") or {}).get("argv") or []:
        if sys.argv[2] in a:
            print(a.rsplit("/", 1)[-1], r["id"], r["outcome"], r.get("wall_ms"))' "$AUDIT" "$1"; }
