#!/bin/sh
# SPDX-License-Identifier: ISC
# The START record commits while the sandbox is built (issue 15): the
# payload still runs only after the commit, a START that fails ends the
# built sandbox before any of the caller's code ran and leaves no cgroup,
# and the artifact collector is skipped for an empty /out without changing
# the result. The payload's proof of life is a file in a policy-approved
# writable bind, visible on the host.
#
# Defences checked by removing them:
# - the sandbox's wait for SBX_SANDBOX_EXEC (helper/sandbox.c): the marker
#   appeared while START was held back by the log's write lock (test 1).
# - start_refused's kill and cgroup removal (helper/main.c): the run-*
#   cgroup of the refused run stayed (test 5).
. "$(dirname "$0")/lib.sh"
plan 9
DB=$P/var/lib/sbx/audit.db
D=$P/var/lib/sbx
SD=$P/var/lib/sbx-signer
POL=$P/etc/sbx/policies.d
W=$(mktemp -d /var/tmp/sbx-t33.XXXXXX)
chown sbxtest "$W"
trap 'umount "$D" 2>/dev/null; umount "$SD" 2>/dev/null; rm -f "$POL/t33.policy"; rm -rf "$T" "$W"' EXIT
sed "s|^rw *=.*||; s|^\[filesystem\]|[filesystem]\nrw = $W|" "$POL/default.policy" > "$POL/t33.policy"
chmod 0644 "$POL/t33.policy"
printf 'open("%s/ran", "w").write("x")\n' "$W" > "$T/mark.py"
chmod 0644 "$T/mark.py"

runcgs() { find /sys/fs/cgroup -maxdepth 4 -path '*/sbx/run-*' -type d 2>/dev/null | sort; }
# new_cgroups_gone BEFORE: every run cgroup not in the list BEFORE is gone
# within 2 s (other runs on the host come and go)
new_cgroups_gone() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		runcgs | comm -13 "$1" - | grep -q . || return 0
		sleep 0.2
	done
	return 1
}
sbx_run run -c pass # the log exists, so the lock below holds a real one

# 1. START held back by another writer's lock (the recorder waits on its
# busy timeout): the sandbox is built meanwhile, the payload does not run.
# the holder is the log's owner, _sbx, like the recorder
setpriv --reuid=_sbx --regid="$(id -g _sbx)" --clear-groups /usr/bin/python3 - "$DB" 3 > "$T/lock" 2>&1 <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("ROLLBACK")
PY
lock=$!
t=0; until grep -q locked "$T/lock" || [ $t -ge 100 ]; do sleep 0.1; t=$((t + 1)); done
run_as sbxtest "$SBX" run --json --policy t33 "$T/mark.py" > "$T/out" 2> "$T/err" &
run=$!
sleep 1.5
check "START held back: the payload has not run (no marker after 1.5 s)" [ ! -e "$W/ran" ]
wait $lock
wait $run; rc=$?
check "START committed after the lock: the run completes (0, ok) and the payload ran" \
	[ "$rc $(jget outcome) $(cat "$W/ran" 2>/dev/null)" = "0 ok x" ]
id=$(jget id)
check "the run is audited, START and END" sh -c '"$1" show "$2" > "$3" && grep -q "^START seq" "$3" &&
	grep -q "^END   seq" "$3" && grep -q "^  outcome  *ok" "$3"' _ "$AUDIT" "$id" "$T/show"
rm -f "$W/ran"

# 2. START cannot be committed (the log's disk is full, as in 12): the
# sandbox built meanwhile is ended, the payload never runs, no cgroup stays.
cp -a "$SD/audit.key" "$T/audit.key.saved"
mount -t tmpfs -o size=1m,mode=2750,uid="$(id -u _sbx)",gid="$(getent group sbx-audit | cut -d: -f3)" tmpfs "$D"
mount -t tmpfs -o size=1m,mode=0700,uid="$(id -u _sbxsign)",gid="$(id -g _sbxsign)" tmpfs "$SD"
cp -a "$T/audit.key.saved" "$SD/audit.key"
sbx_run run -c 'print("first")'
dd if=/dev/zero of="$D/fill" bs=4096 2>/dev/null || true
runcgs > "$T/cgs.before"
sbx_run run --json --policy t33 "$T/mark.py"
check "START failed: exit 74, audit_unavailable" [ "$rc $(jget error.code)" = "74 audit_unavailable" ]
check "START failed: the payload did not run (no marker)" [ ! -e "$W/ran" ]
check "START failed: no run cgroup left" new_cgroups_gone "$T/cgs.before"
check "START failed: no process of the sandbox left" sh -c '! pgrep -u sbxtest -f "/code/main.py" >/dev/null'
rm -f "$D/fill"
umount "$D"; umount "$SD"

# 3. /out empty or not: the result is the same shape; only a non-empty /out
# needs the collector.
sbx_run run --json --artifacts "$T/a1" -c 'print(1)'
check "empty /out: ok, no artifacts" [ "$rc $(jget outcome) $(jget artifacts)" = "0 ok []" ]
sbx_run run --json --artifacts "$T/a2" -c 'open("/out/r.txt", "w").write("r")'
check "a file in /out: returned as before" [ "$rc $(jget artifacts.0.name) $(cat "$T/a2/r.txt" 2>/dev/null)" = "0 r.txt r" ]
finish
