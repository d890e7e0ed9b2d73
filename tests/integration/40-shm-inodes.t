#!/bin/sh
# SPDX-License-Identifier: ISC
# /dev/shm and the inode caps (sbx.policy(5) shm_size, tmp_size). Each run
# has a private, size-capped /dev/shm tmpfs, so POSIX semaphores and shared
# memory work: multiprocessing.Pool, ProcessPoolExecutor, Queue and Lock,
# joblib's process pools. What the program puts there counts against its
# memory limit; a full /dev/shm is ENOSPC, reported in disk_full with the
# limit shm_size. /tmp and /dev/shm hold at most one file per 4 KiB of their
# size: a flood of empty files meets ENOSPC, not the memory limit.
# (Privacy of /dev/shm between runs and towards the host:
# tests/escape/10-kernel-objects.t.)
. "$(dirname "$0")/lib.sh"
plan 13
POL=$P/etc/sbx/policies.d
cat > "$POL/shm.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
wall_time = 30s
memory = 96M
shm_size = 8M
tmp_size = 4M
[env]
set = HOME=/tmp LANG=C.UTF-8 PATH=/usr/bin:/bin
EOF2
cat > "$POL/shmbig.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
wall_time = 30s
memory = 64M
shm_size = 256M
EOF2
chmod 644 "$POL/shm.policy" "$POL/shmbig.policy"
shmem() { awk '/^Shmem:/ {print $2}' /proc/meminfo; }
shm_before=$(shmem)

cat > "$T/pools.py" <<'PY'
import concurrent.futures as cf, multiprocessing as mp, warnings
def sq(x):
    return x * x
if __name__ == "__main__":
    warnings.simplefilter("error")  # joblib's fallback to serial is a warning
    with mp.Pool(2) as p:
        print("pool", sum(p.map(sq, range(100))))
    with cf.ProcessPoolExecutor(2) as ex:
        print("ppe", sum(ex.map(sq, range(100))))
    q, lock = mp.Queue(), mp.Lock()
    pr = mp.Process(target=q.put, args=("from child",))
    pr.start(); print("queue", q.get(timeout=10)); pr.join()
    with lock:
        print("lock ok")
    from joblib import Parallel, delayed
    print("joblib", sum(Parallel(n_jobs=2)(delayed(sq)(i) for i in range(100))))
PY
chmod 644 "$T/pools.py"
sbx_run run --json "$T/pools.py"
diag "$(jget stdout | tail -5)" "$(jget stderr | tail -3)"
check "Pool(2).map works" grep -q 'pool 328350' "$T/out"
check "ProcessPoolExecutor(2).map works" grep -q 'ppe 328350' "$T/out"
check "multiprocessing Queue between processes and Lock work" sh -c 'grep -q "queue from child" "$1" && grep -q "lock ok" "$1"' _ "$T/out"
check "joblib runs two processes without falling back to serial" sh -c 'grep -q "joblib 328350" "$1" && [ "$2" = ok ]' _ "$T/out" "$(jget outcome)"

sbx_run run --json --policy shm -c 'import os
st = os.statvfs("/dev/shm")
print(st.f_blocks * st.f_frsize, st.f_files)
try:
    with open("/dev/shm/big", "wb") as f:
        f.write(b"x" * (9 << 20))
except OSError as e:
    print("write", e.errno)'
diag "$(jget stdout)" "$(jget outcome) $(jget disk_full) $(jget limit)" "$(jget stderr | tail -2)"
check "/dev/shm is the policy's shm_size (8M) with 2048 inodes" [ "$(jget stdout | head -1)" = "8388608 2048" ]
check "writing past shm_size is ENOSPC; disk_full [/dev/shm], limit shm_size" \
	[ "$(jget stdout | grep write) $(jget outcome) $(jget disk_full) $(jget limit)" = "write 28 ok ['/dev/shm'] shm_size" ]

flood='import os
for d in ("/tmp", "/dev/shm"):
    n = 0
    try:
        while True:
            open("%s/f%d" % (d, n), "w").close(); n += 1
    except OSError as e:
        print(d, n, e.errno)'
sbx_run run --json --policy shm -c "$flood"
diag "$(jget stdout)" "$(jget outcome) $(jget disk_full) $(jget limit)"
jget stdout > "$T/flood"
check "an inode flood in /tmp (4M) ends in ENOSPC after 1023 files" grep -qx "/tmp 1023 28" "$T/flood"
check "an inode flood in /dev/shm (8M) ends in ENOSPC after 2047 files" grep -qx "/dev/shm 2047 28" "$T/flood"
check "the flood is reported: outcome ok, disk_full [/tmp, /dev/shm], limit tmp+shm_size" \
	[ "$(jget outcome) $(jget disk_full) $(jget limit)" = "ok ['/tmp', '/dev/shm'] tmp+shm_size" ]

# /dev/shm pages are the run's memory: 200M there under memory = 64M
sbx_run run --json --policy shmbig -c 'f = open("/dev/shm/big", "wb")
for i in range(200):
    f.write(b"x" * (1 << 20)); f.flush()
print("wrote 200M")'
check "what /dev/shm holds counts against the memory limit (memory_limit)" \
	[ "$(jget outcome) $(jget limit)" = "memory_limit memory" ]
check "and the run is audited as such" [ "$(audit_field "$(jget id)" end.outcome)" = memory_limit ]
check "no run's /dev/shm or /tmp is left on the host (Shmem within 16 MiB of before)" \
	[ "$(shmem)" -lt $((shm_before + 16384)) ]
sbx_run run --dry-run --policy shm -c pass
check "dry-run names the /dev/shm mount with its size and inode cap" \
	grep -qx 'mount: /dev/shm tmpfs rw,nosuid,nodev,noexec size=8388608 nr_inodes=2048' "$T/out"
rm -f "$POL/shm.policy" "$POL/shmbig.policy"
finish
