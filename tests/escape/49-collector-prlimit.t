#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 49: an artifact list emptied by the caller's prlimit(2) and
# reported complete. The collector runs as the caller (all four uids), and
# prlimit(2) on another process asks only that the uids and gids match
# (kernel/sys.c check_prlimit_permission: no ptrace or dumpable check), so
# the caller may lower the collector's limits at any moment, as it may
# kill it (27-collector-kill.t). With RLIMIT_NOFILE 5 (fds 0-4 are its
# own) the collector could not open /out itself (EMFILE): for /out, unlike
# its subdirectories, it named nothing, then sent SBX_COLLECT_DONE, and
# the run said outcome ok, "artifacts": [], "skipped": [] for five files
# (test 1), the END record no word of it (test 2). A collector that could
# not tell the recorder of every file (/out unread, a readdir(3) error, a
# message not sent) now ends without SBX_COLLECT_DONE: the list is
# incomplete ("." incomplete).
# The same limit in a --workspace run lost the deletions an opaque
# directory stands for (the payload removed a directory of the workspace
# and made it again): the lower directory's listing could not be opened
# (dup, fdopendir: EMFILE) and the changeset said "end complete" with none
# of them, signed into END (tests 5-6); now, at whatever limit, the
# changeset either has both deletions or says it is incomplete.
# The hooked helper pauses the collector at collector-dropped; the caller
# finds it as the child of the helper it started and lowers its limit.
. "$(dirname "$0")/lib.sh"
plan 6

cat > "$T/lower.py" <<'PY'
# lower.py PID: the collector among the helper's children (the helper is
# a child of PID, the hookrun.py that runs us), RLIMIT_NOFILE 5
import os, resource, sys
def ppid(p):
    try:
        return int(open("/proc/%s/status" % p).read().split("PPid:")[1].split()[0])
    except (OSError, IndexError):
        return -1
pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
helpers = [p for p in pids if ppid(p) == int(sys.argv[1])]
done = 0
for p in pids:
    if ppid(p) in helpers and open("/proc/%d/comm" % p).read().startswith("sbx-collector"):
        resource.prlimit(p, resource.RLIMIT_NOFILE, (5, 5))
        done += 1
print("lowered", done)
sys.exit(0 if done == 1 else 1)
PY
chmod 0644 "$T/lower.py"
cat > "$T/code.py" <<'PY'
for i in range(5):
    open("/out/f%d.txt" % i, "w").write("x")
PY
chmod 0644 "$T/code.py"
# hook_run's code is print('RAN'): this test needs files in /out
cp "$ESC/hookrun.py" "$T/hookrun.py"
sed -i "s|m = F.memfd(b\"print('RAN')\")|m = F.memfd(open('$T/code.py', 'rb').read())|" "$T/hookrun.py"
chmod 0755 "$T/hookrun.py"
run_as sbxtest /usr/bin/python3 "$T/hookrun.py" "$HOOKED" collector-dropped \
	"/usr/bin/python3 $T/lower.py \$PPID >&2" -- run --lang python --code-fd 3 --result-fd 4 \
	> "$T/hook.json" 2> "$T/hook.err"
diag "$(cat "$T/hook.err")" "acted $(hook_field acted) result: $(pj "$T/hook.json" '(d["result"]["outcome"], d["result"]["artifacts"], d["result"]["skipped"])')"
id=$(hook_field result.id)
check "the collector's RLIMIT_NOFILE was lowered, and the list is said incomplete" \
	[ "$(hook_field acted) $(pj "$T/hook.json" '[s for s in d["result"]["skipped"] if s["reason"] == "incomplete"]')" = "0 [{'path': '.', 'reason': 'incomplete'}]" ]
"$AUDIT" show --json "$id" > "$T/show" 2>&1
check "the END record says the list is incomplete" \
	[ "$(pj "$T/show" '[r.get("artifacts_incomplete") for r in d["records"] if r.get("kind") == "end"]')" = "['the collector ended before it had walked /out']" ]
# not lowered: the same code returns its five files, complete
cp "$ESC/hookrun.py" "$T/hookrun.py"
sed -i "s|m = F.memfd(b\"print('RAN')\")|m = F.memfd(open('$T/code.py', 'rb').read())|" "$T/hookrun.py"
run_as sbxtest /usr/bin/python3 "$T/hookrun.py" "$HOOKED" collector-dropped true -- \
	run --lang python --code-fd 3 --result-fd 4 > "$T/hook.json" 2> "$T/hook.err"
check "not lowered: five artifacts, nothing skipped" \
	[ "$(pj "$T/hook.json" 'len(d["result"]["artifacts"]), d["result"]["skipped"]')" = "(5, [])" ]
audited_unchanged() { audited "$id" ok && host_unchanged; }
check "the run is audited (ok), the host unchanged" audited_unchanged

# a --workspace run: the workspace's d/a and d/b removed, d made again
W=$T/ws
mkdir -p "$W/d" "$T/cs"
echo a > "$W/d/a"
echo b > "$W/d/b"
chown -R sbxtest:sbxtest "$W" "$T/cs"
cat > "$T/wsrun.py" <<'PY'
# wsrun.py HOOKED WS CS LIMIT: a --workspace run of the hooked helper; at
# collector-dropped the collector's RLIMIT_NOFILE is set to LIMIT (0: left)
import json, os, resource, socket, subprocess, sys, threading
import sbxframes as F
hooked, ws, cs, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = F.memfd(b"import os, shutil\nshutil.rmtree('/work/d')\nos.mkdir('/work/d')\n")
res, peer = socket.socketpair()
fds = {3: m, 4: peer.fileno(), 5: os.open(ws, os.O_RDONLY | os.O_DIRECTORY),
       6: os.open(cs, os.O_RDONLY | os.O_DIRECTORY)}
def setup():
    F.place_fds(fds)
p = subprocess.Popen([hooked, "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4",
                      "--workspace-fd", "5", "--changeset-fd", "6"], stdin=subprocess.PIPE,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=setup, close_fds=False)
peer.close()
got = []
th = threading.Thread(target=lambda: got.append(F.read_all(res, 60)))
th.start()
lowered = 0
for raw in p.stderr:
    w = raw.decode(errors="replace").split()
    if len(w) >= 3 and w[0] == "sbx-test-hook:":
        if w[1] == "collector-dropped" and limit:
            resource.prlimit(int(w[2]), resource.RLIMIT_NOFILE, (limit, limit))
            lowered = 1
        p.stdin.write(b"x")
        p.stdin.flush()
p.wait(timeout=60)
th.join()
r = F.result(got[0]) or {}
cs = r.get("changeset") or {}
print(json.dumps({"limit": limit, "lowered": lowered, "entries": cs.get("entries"), "missing": cs.get("missing")}))
PY
chmod 0644 "$T/wsrun.py"
: > "$T/ws.runs"
for lim in 0 9 10 11 12 13 14 15 16; do
	rm -rf "$T/cs"/* 2>/dev/null
	run_as sbxtest /usr/bin/python3 "$T/wsrun.py" "$HOOKED" "$W" "$T/cs" "$lim" >> "$T/ws.runs" 2>&1
done
diag "$(cat "$T/ws.runs")"
check "unlimited: the changeset has both deletions, complete" \
	[ "$(head -n1 "$T/ws.runs" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["entries"], d["missing"])')" = "2 None" ]
check "at every lowered limit: both deletions, or the changeset says it is incomplete" \
	python3 -c 'import json,sys
runs = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(runs) == 9 and all(r["entries"] == 2 or r["missing"] for r in runs) else 1)' "$T/ws.runs"
finish
