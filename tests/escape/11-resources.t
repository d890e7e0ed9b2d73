#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 11: resources that outlive or escape the cgroup.
# - Many sequential runs each fill their /tmp tmpfs, a SysV shm segment
#   (never IPC_RMID'd) and a POSIX message queue (tests/escape/bin/kobj.c
#   "fill 8": 8 MiB each): the host's shared memory (Shmem in
#   /proc/meminfo) returns to its level before. The issue asks for 1,000
#   runs; here one run costs 110-220 ms (two cores shared with other
#   builds), so 1,000 would take 2-4 minutes against a ~90 s budget for all
#   escape scripts. The default is as many runs as fit in 15 s, at least
#   30 and at most 120: a leak of even one of the three objects per run
#   would show as >= 240 MiB, far above the 64 MiB allowed for other
#   activity on the host. The cap keeps the test within sbx.conf's
#   max_requests_per_minute (600 by default): on a machine where a run
#   takes 50 ms, 15 s of runs plus the test before them passed 600 in one
#   minute, and every run after that was refused (CI failed test 1 so).
#   The user's request counters are reset first, as at boot, for the
#   same reason. SBX_ESCAPE_FILL_RUNS=1000 runs the issue's count, with
#   max_requests_per_minute raised for the test's duration.
# - A shell fork bomb that goes on forking is stopped at the pids limit
#   (pids_limit: 50 refused starts), and none of its processes is
#   left on the host (found by a marker in their command line).
# - A double-forked orphan that ignores SIGTERM/SIGHUP/SIGINT and leaves
#   its session dies when the payload exits normally (pid 1 of the
#   namespace exits with it) and when the wall limit fires.
# - An output flood (`yes`, 10 GB wanted) under output_action = kill is stopped at the policy's output
#   cap with outcome output_limit, and no sbx-helper process (supervisor,
#   recorder) grows with the flood: VmHWM sampled from /proc while the run
#   goes on. Measured here: 3.7 MiB for a run without output; with a cap of
#   1, 8 and 32 MiB the recorder peaked at 9.5, 52 and 164 MiB, i.e. about
#   six copies of the captured output (capture buffer, UTF-8 sanitised
#   copy, JSON string, json_dumps text, the result frame): bounded by the
#   cap, not by the flood; the bound asserted is 8 x cap + 16 MiB.
# - The CPU affinity mask (ceil(cpus) CPUs, sbx.policy(5) cpus) cannot be
#   widened from inside: os.sched_setaffinity, the raw system call from a
#   thread, taskset(1) on the payload and on pid 1 all fail, and the mask a
#   child process starts with is still the run's.
#
# Defences checked by removing them:
# - CLONE_NEWIPC dropped from clone_sandbox() (main.c): the SysV segments
#   piled up in the host's IPC namespace (24 x 8 MiB before the run was
#   stopped; removed by hand with ipcrm) and from the second run on the
#   fill hung on the POSIX message queue the previous run had left full,
#   until the wall limit: test 1 failed (every fill run also carries a 5 s
#   timeout since, so this shows in seconds).
# - the REC_KILL_OUTPUT message (recorder.c capture) not sent: the flood
#   ran to the wall limit (exit 124, 921 MB written), tests 10 and 11
#   failed; the recorder's memory stayed bounded (test 12 passed) because
#   it still stores no more than the cap.
# - "sched_setaffinity" dropped from the seccomp filter's denied list
#   (helper/seccomp.c): every widening attempt succeeded and the mask held
#   both CPUs of the host: test 13 failed.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 14
POL=$P/etc/sbx/policies.d
CONF=$P/etc/sbx/sbx.conf
STATE=$P/run/sbx/users/$(id -u sbxtest)
cp -p "$CONF" "$T/conf.save"
trap 'cp -p "$T/conf.save" "$CONF"; rm -f "$STATE"; rm -rf "$T" "$POL/flood.policy"' EXIT
# counters afresh (no run of sbxtest is going): the runs of the tests
# before this one do not count against this one's minute
rm -f "$STATE"
if [ "${SBX_ESCAPE_FILL_RUNS:-0}" -gt 120 ]; then
	sed -i '/^max_requests_per_minute *=/d
		s/^\[sbx\]$/[sbx]\nmax_requests_per_minute = 100000/' "$CONF"
fi
shmem() { awk '/^Shmem:/ {print $2}' /proc/meminfo; }

bin_payload "$T/fill.sh" kobj fill 8
ipc_before=$(ipcs -m | grep -c "^0x")
s0=$(shmem)
t0=$(date +%s)
cat > "$T/loop.sh" <<EOF2
n=0; fails=0; end=\$(( \$(date +%s) + 15 ))
while [ \$n -lt \${SBX_ESCAPE_FILL_RUNS:-100000} ]; do
	[ -z "\${SBX_ESCAPE_FILL_RUNS:-}" ] && [ \$n -ge 30 ] && { [ \$(date +%s) -ge \$end ] || [ \$n -ge 120 ]; } && break
	# the first failures' reasons to the TAP output (stderr), to be told apart
	err=\$("$SBX" run --lang sh --timeout 5s "$T/fill.sh" 2>&1 > /dev/null) || {
		fails=\$((fails + 1))
		[ \$fails -le 3 ] && printf '# fill run %s failed: %.300s\\n' \$n "\$err" >&2
	}
	n=\$((n + 1))
done
echo \$n \$fails
EOF2
chmod 0755 "$T/loop.sh"
set -- $(run_as sbxtest env SBX_ESCAPE_FILL_RUNS="${SBX_ESCAPE_FILL_RUNS:-}" sh "$T/loop.sh")
runs=$1 fillfails=$2
sleep 0.5
s1=$(shmem)
diag "$runs fill runs in $(( $(date +%s) - t0 )) s; Shmem before ${s0} kB, after ${s1} kB"
check "$runs sequential runs filled /tmp, SysV shm and an mqueue without failing" [ "$fillfails" = 0 -a "$runs" -ge 30 ]
check "host shared memory back to its level (within 64 MiB)" [ "$s1" -lt $((s0 + 65536)) ]
check "no SysV segment left on the host" [ "$(ipcs -m | grep -c "^0x")" -le "$ipc_before" ]
check "the last fill run audited (ok)" [ "$(end_outcome "$(last_id)")" = ok ]

# fork bomb in sh, with a marker in every command line
mark=bomb$$
# (the main shell sleeps instead of waiting: a payload that exits on its
# own after its forks hit pids.max is recorded as what it exited with).
# bash, not dash: dash exits when a fork fails, so a dash bomb dies out by
# itself after a few dozen refused forks and is then a program that met
# the limit and carried on (tests/integration/42-cpus-threads.t); bash
# retries the fork, as a bomb that goes on does.
printf 'bash -c "b() { b | b & }; b" %s &\nexec sleep 30\n' "$mark" > "$T/$mark.sh"; chmod 0644 "$T/$mark.sh"
sbx_run run --json --lang sh --timeout 20s "$T/$mark.sh"
diag "fork bomb: $(jget outcome) after $(jget wall_ms) ms, pids_peak $(jget pids_peak)"
check "sh fork bomb: outcome pids_limit well before the wall limit" [ "$(jget outcome)" = pids_limit -a "$(jget wall_ms)" -lt 15000 ]
sleep 0.2
check "sh fork bomb: not one of its processes left, no cgroup, audited" \
	sh -c '[ -z "$1" ] && [ "$2" = pids_limit ] && ! ls -d /sys/fs/cgroup/*/sbx/run-$3 2>/dev/null | grep -q .' \
	_ "$(marked "$mark")" "$(end_outcome "$(jget id)")" "$(jget id)"

# double-forked orphans that ignore SIGTERM, SIGHUP and SIGINT
orph=orphan$$
cat > "$T/$orph.sh" <<EOF2
( trap '' TERM HUP INT; setsid sh -c 'exec sleep 1000 $orph-a' & ) &
( trap '' TERM HUP INT; setsid sh -c 'exec sleep 1000 $orph-b' & ) &
sleep 0.3
echo spawned
EOF2
chmod 0644 "$T/$orph.sh"
sbx_run run --json --lang sh "$T/$orph.sh"
sleep 0.2
check "payload exits 0 leaving SIGTERM-proof orphans: outcome ok, orphans gone" \
	sh -c '[ "$1" = ok ] && [ -z "$2" ]' _ "$(jget outcome)" "$(marked "$orph-")"
echo 'sleep 1000' >> "$T/$orph.sh"
sbx_run run --json --lang sh --timeout 1s "$T/$orph.sh"
sleep 0.2
check "the same at the wall limit: outcome timeout, orphans gone" \
	sh -c '[ "$1" = timeout ] && [ -z "$2" ]' _ "$(jget outcome)" "$(marked "$orph-")"
check "both orphan runs audited, no cgroup left" sh -c '[ "$1" = timeout ] && ! ls -d /sys/fs/cgroup/*/sbx/run-$2 2>/dev/null | grep -q .' _ "$(end_outcome "$(jget id)")" "$(jget id)"

# output flood: 10 GB wanted, 8 MiB allowed
sed 's/^output *=.*/output = 8M/; s/^output_action *=.*/output_action = kill/; s/^wall_time *=.*/wall_time = 10s/' "$POL/default.policy" > "$POL/flood.policy"
chmod 0644 "$POL/flood.policy"
printf 'yes | head -c 10000000000\n' > "$T/flood.sh"; chmod 0644 "$T/flood.sh"
cat > "$T/hwm.py" <<'PY'
import os, subprocess, sys, time
helper = os.path.realpath(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak, seen = 0, set()
while p.poll() is None:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/exe" % pid) != helper:
                continue
            for l in open("/proc/%s/status" % pid):
                if l.startswith("VmHWM:"):
                    peak = max(peak, int(l.split()[1])); seen.add(pid)
        except OSError:
            pass
    time.sleep(0.002)
print(p.returncode, len(seen), peak)
PY
set -- $(python3 "$T/hwm.py" "$HELPER" setpriv --reuid=sbxtest --regid=sbxtest --init-groups \
	"$SBX" run --policy flood --lang sh "$T/flood.sh")
frc=$1 fprocs=$2 fpeak=$3
fid=$(last_id)
fbytes=$("$AUDIT" show --json "$fid" | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["stdout_bytes"])')
diag "flood: exit $frc, $fprocs helper processes sampled, peak VmHWM $fpeak kB, $fbytes bytes of stdout seen"
check "output flood: stopped at the cap (output_limit, exit 137), audited" [ "$frc $(end_outcome "$fid")" = "137 output_limit" ]
check "output flood: stopped within moments (< 64 MiB written of 10 GB)" [ "$fbytes" -lt $((64 << 20)) ]
case ${SBX_MAKEFLAGS:-} in
*SANITIZE=1*) # ASan's shadow and quarantine memory, not the flood, set the peak there
	ok 0 "output flood: helper memory bounded by the cap # SKIP sanitizer build" ;;
*) check "output flood: helper memory bounded by the cap, not the flood (VmHWM < 8 x cap + 16 MiB)" \
	[ "$fprocs" -ge 1 -a "$fpeak" -lt $(( (8 * 8 + 16) * 1024 )) ] ;;
esac

# the CPU affinity mask cannot be widened from inside
cat > "$T/affinity.py" <<'PY'
import ctypes, os, subprocess, threading
allcpus = set(range(64))
r = []
def attempt(f):
    try:
        f(); r.append("widened")
    except OSError as e:
        r.append(os.strerror(e.errno))
attempt(lambda: os.sched_setaffinity(0, allcpus))
libc = ctypes.CDLL(None, use_errno=True)
def raw():
    mask = ctypes.c_uint64(0xffffffffffffffff)
    tid = threading.get_native_id()
    if libc.syscall(203, tid, 8, ctypes.byref(mask)) != 0:  # SYS_sched_setaffinity, x86_64
        raise OSError(ctypes.get_errno(), "raw")
t = threading.Thread(target=lambda: attempt(raw)); t.start(); t.join()
for pid in ("self", "1"):
    p = subprocess.run(["taskset", "-p", "ffff", str(os.getpid()) if pid == "self" else pid],
                       capture_output=True, text=True)
    r.append("taskset " + pid + (" widened" if p.returncode == 0 else " refused"))
child = subprocess.run(["python3", "-c", "import os; print(len(os.sched_getaffinity(0)))"],
                       capture_output=True, text=True).stdout.strip()
print(r, len(os.sched_getaffinity(0)), child)
PY
chmod 0644 "$T/affinity.py"
sbx_run run --json "$T/affinity.py"
diag "affinity: $(jget stdout)"
check "sched_setaffinity (directly, raw from a thread) and taskset on the payload and pid 1 are refused" \
	[ "$(jget stdout)" = "['Operation not permitted', 'Operation not permitted', 'taskset self refused', 'taskset 1 refused'] 1 1" ]
check "the affinity run is audited (ok)" [ "$(end_outcome "$(jget id)")" = ok ]
finish
