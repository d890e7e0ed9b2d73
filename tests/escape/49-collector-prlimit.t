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
# The hooked helper pauses the collector at collector-dropped; the caller
# finds it as the child of the helper it started and lowers its limit.
. "$(dirname "$0")/lib.sh"
plan 4

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
finish
