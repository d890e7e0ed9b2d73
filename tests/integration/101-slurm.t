#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx inside Slurm jobs (issue 21 item 2): a real single-node Slurm from
# Debian's packages (munged, slurmctld, slurmd; own configuration in a
# temporary directory, ports of its own) started by this test, with the
# cgroup task plugin on cgroup v1 (proctrack/cgroup, task/cgroup,
# ConstrainRAMSpace=yes, jobacct_gather/cgroup). Checked:
#   - srun --mem=200M: a sandbox allocating 300M gets memory_limit although
#     the policy allows 512M; the result and END name memory as tightened
#     and the run's cgroup is nested beneath the step's task cgroup;
#   - sstat of the running step sees the sandbox's memory and CPU;
#   - sbatch scripts calling sbx are bound the same way;
#   - scancel kills the sandbox and the run is recorded (END with an
#     outcome), and Slurm's and sbx's cgroups are all gone afterwards.
# sacct is not checked: it needs slurmdbd and a MariaDB/MySQL server
# (accounting_storage/none answers "Slurm accounting storage is
# disabled"); what slurmdbd would store for a step is the same
# jobacct_gather/cgroup data sstat reads.
. "$(dirname "$0")/lib.sh"
for b in munged slurmctld slurmd srun sbatch sstat scancel sinfo; do
	command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] || {
		echo "1..0 # SKIP $b missing (tools/install-deps test group: slurmd slurmctld slurm-client munge)"; exit 0; }
done
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	echo "1..0 # SKIP cgroup v2 host: this test configures Slurm's cgroup/v1 plugin (docs/slurm.md: on v2 sbx caps, tests/vm/allocation.t)"; exit 0
fi
for c in memory freezer cpuacct; do
	[ -d /sys/fs/cgroup/$c ] || { echo "1..0 # SKIP no cgroup v1 $c hierarchy for Slurm"; exit 0; }
done
PATH=$PATH:/usr/sbin
H=$(hostname -s)
if [ -e /sys/fs/cgroup/memory/slurm_$H ] || [ -e /sys/fs/cgroup/memory/slurm ] || pgrep -x slurmd >/dev/null; then
	echo "1..0 # SKIP a Slurm is already running on this host (its cgroups exist)"; exit 0
fi
plan 18
S=$(mktemp -d /tmp/sbx-slurm.XXXXXX)
chmod 0755 "$S"
mkdir "$S/state" "$S/spool" "$S/log"
PORT=$((30000 + $$ % 20000))
export SLURM_CONF=$S/slurm.conf

stop_slurm() {
	scancel --full --quiet -u sbxtest 2>/dev/null
	for d in slurmd slurmctld munged; do
		[ -s "$S/$d.bgpid" ] && kill "$(cat "$S/$d.bgpid")" 2>/dev/null
	done
	for d in slurmd slurmctld munged; do
		[ -s "$S/$d.bgpid" ] || continue
		i=0; while kill -0 "$(cat "$S/$d.bgpid")" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$(cat "$S/$d.bgpid")" 2>/dev/null
	done
	# what task/cgroup and proctrack/cgroup leave at the top of each hierarchy
	for d in /sys/fs/cgroup/*/slurm_"$H" /sys/fs/cgroup/*/slurm; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
}
trap 'stop_slurm; rm -rf "$S" "$T"' EXIT

dd if=/dev/urandom of="$S/munge.key" bs=128 count=1 2>/dev/null
chmod 0600 "$S/munge.key"
munged -F --force --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge.seed" >"$S/log/munged.out" 2>&1 &
echo $! > "$S/munged.bgpid"
cat > "$S/slurm.conf" <<EOF
ClusterName=sbxtest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=task=1
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
KillWait=10
PlugStackConfig=$S/plugstack.conf
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=2048 State=UNKNOWN
PartitionName=test Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
: > "$S/plugstack.conf"
cat > "$S/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
EOF
chmod 0644 "$S"/*.conf
i=0; while [ ! -S "$S/munge.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
slurmctld -D -f "$S/slurm.conf" >"$S/log/slurmctld.out" 2>&1 &
echo $! > "$S/slurmctld.bgpid"
slurmd -D -f "$S/slurm.conf" >"$S/log/slurmd.out" 2>&1 &
echo $! > "$S/slurmd.bgpid"
i=0; while [ "$(sinfo -h -o %t 2>/dev/null)" != idle ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$(sinfo -h -o %t 2>/dev/null)" != idle ]; then
	diag "$(tail -5 "$S/log/slurmctld.log" "$S/log/slurmd.log" "$S/log/slurmd.out" 2>&1)"
	echo "Bail out! the test's Slurm did not come up (logs above)"; exit 1
fi
ok 0 "single-node Slurm (slurmctld, slurmd, munged) up with task/cgroup on cgroup v1"

# as the job's user, from $T (readable by sbxtest)
as_user() { run_as sbxtest env SLURM_CONF="$SLURM_CONF" "$@"; }
cat > "$T/big.py" <<'EOF'
b = bytearray(300 * 1024 * 1024)
for i in range(0, len(b), 4096): b[i] = 1
print("allocated 300M")
EOF
cat > "$T/hold.py" <<'EOF'
import time
b = bytearray(150 * 1024 * 1024)
for i in range(0, len(b), 4096): b[i] = 1
t = time.time()
while time.time() - t < 20: pass
EOF
printf 'import time\ntime.sleep(300)\n' > "$T/sleep.py"
chmod 0644 "$T"/*.py

as_user srun --mem=200M "$SBX" run --json "$T/big.py" >"$T/out" 2>"$T/err"; rc=$?
keep_results "$T/out"
id=$(jget id)
check "srun --mem=200M, 300M payload: outcome memory_limit" [ "$(jget outcome)" = memory_limit ]
check "the policy's 512M was capped to the job's 200M" [ "$(jget limits.memory_bytes)" = 209715200 ]
check "the result names memory as tightened by the allocation" [ "$(jget allocation.tightened)" = "['memory']" ]
check "the run's cgroup was nested in the job's memory, cpuacct and freezer cgroups" \
	[ "$(jget allocation.nested)" = "['memory', 'cpuacct', 'freezer']" ]
check "the message names the allocation, not the policy" \
	[ "$(jget error.message)" = "memory limit of 200M (the caller's cgroup allocation) reached" ]
check "END: memory_limit, memory tightened" \
	[ "$(audit_field "$id" end.outcome)/$(audit_field "$id" end.allocation_tightened)" = memory_limit/memory ]
check "srun's status is the payload's (137)" [ "$rc" = 137 ]

as_user srun --mem=1G "$SBX" run --json --lang sh -c 'echo hi' >"$T/out" 2>"$T/err"
check "a 1G job: the policy's 512M, nothing tightened, still nested" \
	[ "$(jget outcome)/$(jget limits.memory_bytes)/$(jget allocation.tightened)" = "ok/536870912/[]" ]

# sbatch: a batch script calling sbx
printf '#!/bin/sh\nexec %s run --json %s\n' "$SBX" "$T/big.py" > "$T/job.sh"
chmod 0755 "$T/job.sh"
as_user sbatch --wait --mem=200M -o "$T/batch.out" "$T/job.sh" >"$T/sbatch.out" 2>&1
cp "$T/batch.out" "$T/out" 2>/dev/null
check "sbatch --mem=200M script: memory_limit" [ "$(jget outcome)/$(jget limits.memory_bytes)" = memory_limit/209715200 ]

# sstat sees the sandbox while the step runs (jobacct_gather/cgroup reads
# the task cgroup, whose memory.stat and cpuacct.stat include the run's)
as_user srun --mem=400M "$SBX" run --json "$T/hold.py" >"$T/hold.json" 2>"$T/hold.err" &
srun_pid=$!
i=0 rss=0
while [ $i -lt 150 ]; do
	job=$(squeue -h -u sbxtest -o %i | head -1)
	if [ -n "$job" ]; then
		rss=$(sstat -n -P -j "$job.0" --format=MaxRSS 2>/dev/null | head -1 | tr -d K)
		case $rss in ''|*[!0-9]*) rss=0 ;; esac
		[ "$rss" -ge 140000 ] && break
	fi
	sleep 0.2; i=$((i + 1))
done
diag "sstat -j $job.0: MaxRSS ${rss}K, AveCPU $(sstat -n -P -j "$job.0" --format=AveCPU 2>/dev/null)"
check "sstat of the running step sees the sandbox's 150M (MaxRSS >= 140000K)" [ "$rss" -ge 140000 ]
wait $srun_pid
cp "$T/hold.json" "$T/out"
keep_results "$T/out"
check "... and the run ended ok" [ "$(jget outcome)" = ok ]

# scancel: the sandbox is killed and the run recorded
as_user srun --mem=400M "$SBX" run --json "$T/sleep.py" >"$T/cancel.json" 2>"$T/cancel.err" &
srun_pid=$!
i=0
while ! pgrep -u sbxtest -f '^/usr/bin/python3 .*/code/sleep.py' >/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
check "the sandboxed payload runs under the step" sh -c "pgrep -u sbxtest -f '^/usr/bin/python3 .*/code/sleep.py' >/dev/null"
job=$(squeue -h -u sbxtest -o %i | head -1)
scancel "$job"
wait $srun_pid
cp "$T/cancel.json" "$T/out"
keep_results "$T/out"
id=$(jget id)
check "scancel: the payload is gone" sh -c "! pgrep -u sbxtest -f '/code/sleep.py'"
check "scancel: the result says it was killed (outcome signal)" [ "$(jget outcome)" = signal ]
check "scancel: END is in the log with that outcome" [ "$(audit_field "$id" end.outcome)" = signal ]
i=0; while [ -n "$(squeue -h -u sbxtest)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "no run cgroup of sbx left anywhere under Slurm's" \
	sh -c "! find /sys/fs/cgroup/*/slurm_$H /sys/fs/cgroup/*/slurm -name 'sbx-run-*' 2>/dev/null | grep -q ."
check "no sbx run cgroup of these runs left" no_cgroup_of "$id"
finish
