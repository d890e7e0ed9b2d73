#!/bin/sh
# SPDX-License-Identifier: ISC
# Thread pools sized to the policy (sbx.policy(5) cpus, pids): the run's
# affinity mask holds ceil(cpus) CPUs, so os.sched_getaffinity, nproc,
# os.cpu_count (the sandbox's Python start-up hook), joblib and OpenBLAS
# see them, not the host's; OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
# MKL_NUM_THREADS are set to that count. A program that meets the pids
# limit (EAGAIN from a thread start) and carries on keeps running, reported
# with limit "pids"; a fork bomb is still stopped with pids_limit. (That
# the payload cannot widen its mask: tests/escape/11-resources.t.)
. "$(dirname "$0")/lib.sh"
plan 10
POL=$P/etc/sbx/policies.d
host=$(nproc)
for c in 0.5 1.5; do
	name=cpus-$(echo "$c" | tr . _)
	printf '[policy]\ngroups = sbx\n[limits]\ncpus = %s\n' "$c" > "$POL/$name.policy"
	chmod 644 "$POL/$name.policy"
done

probe='import os, subprocess, multiprocessing, joblib
print(len(os.sched_getaffinity(0)), os.cpu_count(), multiprocessing.cpu_count(), joblib.cpu_count(),
      subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
      os.environ["OMP_NUM_THREADS"], os.environ["OPENBLAS_NUM_THREADS"], os.environ["MKL_NUM_THREADS"])'
sbx_run run -c "$probe"
check "cpus = 1 (default): affinity, os.cpu_count, multiprocessing, joblib, nproc and the thread variables say 1" \
	[ "$(cat "$T/out")" = "1 1 1 1 1 1 1 1" ]
sbx_run run --policy cpus-0_5 -c "$probe"
check "cpus = 0.5: one CPU" [ "$(cat "$T/out")" = "1 1 1 1 1 1 1 1" ]
if [ "$host" -ge 2 ]; then
	sbx_run run --policy cpus-1_5 -c "$probe"
	check "cpus = 1.5: two CPUs (ceil)" [ "$(cat "$T/out")" = "2 2 2 2 2 2 2 2" ]
else
	ok 0 "# SKIP one CPU on this host"
fi

threads='import numpy, numpy.linalg
a = numpy.random.rand(300, 300); (a @ a).sum()
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("Threads:")][0])'
sbx_run run -c "$threads"
check "numpy's BLAS starts no thread of its own under cpus = 1" [ "$(cat "$T/out")" = 1 ]

cat > "$T/threads.py" <<'PY'
import threading
ev, ts = threading.Event(), []
try:
    while True:
        t = threading.Thread(target=ev.wait)
        t.start()
        ts.append(t)
except RuntimeError as e:
    print("thread start refused after", len(ts), "threads:", e)
ev.set()
for t in ts:
    t.join()
print("finished")
PY
chmod 0644 "$T/threads.py"
sbx_run run --json "$T/threads.py"
diag "$(jget stdout)"
check "a program that catches the thread-start failure prints finished (outcome ok, exit 0)" \
	sh -c '[ "$1 $2" = "ok 0" ] && grep -q "finished" "$3"' _ "$(jget outcome)" "$rc" "$T/out"
check "and the result names the pids limit it met" [ "$(jget limit)" = pids ]
check "the audit END record says so too" [ "$(audit_field "$(jget id)" end.limit)" = pids ]

sbx_run run --json --timeout 20s -c 'import os
while True:
    try:
        os.fork()
    except OSError:
        pass'
diag "fork bomb: $(jget outcome) after $(jget wall_ms) ms"
check "a fork bomb that ignores EAGAIN is stopped: pids_limit, not the 20 s wall limit" \
	[ "$(jget outcome) $(jget limit) $rc" = "pids_limit pids 137" ]
sbx_run run --json --lang sh --timeout 20s -c 'bash -c ":(){ :|:& };:"; sleep 30'
check "a bash fork bomb is stopped: pids_limit" [ "$(jget outcome)" = pids_limit ]
check "no cgroup left behind" no_cgroups_left
rm -f "$POL"/cpus-*.policy
finish
