#!/bin/sh
# SPDX-License-Identifier: ISC
# Runs stay inside the caller's allocation (issue 21 item 1), cgroup v1
# (this host; tests/vm covers v2 through the same code, cgcaller.c): a
# caller placed by root in a memory cgroup limited to 100M used to run
# bytearray(300 MiB) with outcome ok. Now the run's limits are capped by
# the caller's cgroups (memory, pids, cpu), the result and START/END say
# which were tightened, and under sbx.conf's cgroup_nest the run's cgroup
# is created beneath the caller's, so the allocation's accounting includes
# the run. The caller-delegated cases (a caller who owns its cgroup) are
# escape 45.
. "$(dirname "$0")/lib.sh"
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	echo "1..0 # SKIP this host is cgroup v2 (tests/vm covers it)"; exit 0
fi
for c in memory pids cpu; do
	[ -d /sys/fs/cgroup/$c ] || { echo "1..0 # SKIP no cgroup v1 $c hierarchy"; exit 0; }
done
plan 27
CONF=$P/etc/sbx/sbx.conf
cp "$CONF" "$T/sbx.conf.orig"
# top-level test cgroups of our own (never under another's subtree)
NAME=sbx-t100-$$
MEM=/sys/fs/cgroup/memory/$NAME PIDS=/sys/fs/cgroup/pids/$NAME CPU=/sys/fs/cgroup/cpu/$NAME
cleanup() {
	cp "$T/sbx.conf.orig" "$CONF"
	for d in "$MEM" "$PIDS" "$CPU"; do
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$MEM" "$PIDS" "$CPU" || { echo "Bail out! cannot create test cgroups"; exit 1; }

# in_cg DIR... -- ARGS: sbx ARGS as sbxtest, from a shell root moved into
# each DIR first (what a batch system does with a job's tasks)
in_cg() {
	(
		while [ "$1" != -- ]; do echo 0 > "$1/cgroup.procs" || exit 99; shift; done
		shift
		sbx_run "$@"
		exit $rc
	)
	rc=$?
	keep_results "$T/out"
}

py300='b = bytearray(300 * 1024 * 1024)
for i in range(0, len(b), 4096): b[i] = 1
print("allocated")'

echo 100M > "$MEM/memory.limit_in_bytes"
in_cg "$MEM" -- run --json --lang python -c "$py300"
id=$(jget id)
check "100M caller, 300M payload, 512M policy: outcome memory_limit (was ok)" [ "$(jget outcome)" = memory_limit ]
check "the effective memory limit is the caller's 100M" [ "$(jget limits.memory_bytes)" = 104857600 ]
check "the result says memory was tightened by the allocation" [ "$(jget allocation.tightened.0)" = memory ]
check "... and only memory" [ "$(jget allocation.tightened)" = "['memory']" ]
check "... outside cgroup_nest: not nested" [ "$(jget allocation.nested)" = "[]" ]
check "END says memory was tightened" [ "$(audit_field "$id" end.allocation_tightened)" = memory ]
check "START says so too" [ "$(audit_field "$id" start.allocation_tightened)" = memory ]
check "START's limits are the enforced ones" [ "$(audit_field "$id" start.limits.memory_bytes)" = 104857600 ]
check "the run cgroup is gone" no_cgroup_of "$id"

# a payload within the allocation is unaffected
in_cg "$MEM" -- run --json --lang python -c 'b = bytearray(20 * 1024 * 1024); print(len(b))'
check "20M under a 100M allocation: ok" [ "$(jget outcome)" = ok ]

# an allocation above the policy tightens nothing: no allocation member
echo 2G > "$MEM/memory.limit_in_bytes"
in_cg "$MEM" -- run --json --lang sh -c 'echo hi'
check "2G allocation, 512M policy: limits are the policy's, no allocation member" \
	[ "$(jget outcome)/$(jget limits.memory_bytes)/$(jget allocation)" = "ok/536870912/null" ]
check "... and no allocation field in END" [ "$(audit_field "$(jget id)" end.allocation_tightened)" = null ]

# pids and cpu: the caller's pids.max and CFS quota
echo 40 > "$PIDS/pids.max"
echo 100000 > "$CPU/cpu.cfs_period_us"
echo 50000 > "$CPU/cpu.cfs_quota_us"
in_cg "$PIDS" "$CPU" -- run --json --lang sh -c 'cat /sys/fs/cgroup/pids.max 2>/dev/null; echo hi'
check "pids.max 40 and a 0.5 CPU quota: pids 40, cpus 0.5" \
	[ "$(jget outcome)/$(jget limits.pids)/$(jget limits.cpus)" = "ok/40/0.5" ]
check "... both named as tightened" [ "$(jget allocation.tightened)" = "['pids', 'cpus']" ]
check "... END names them" [ "$(audit_field "$(jget id)" end.allocation_tightened)" = "pids cpus" ]
echo -1 > "$CPU/cpu.cfs_quota_us"
echo max > "$PIDS/pids.max"

# A limit higher up counts too: the caller in a child of the limited cgroup.
mkdir "$MEM/job"
echo 100M > "$MEM/memory.limit_in_bytes"
in_cg "$MEM/job" -- run --json --lang python -c "$py300"
check "limit on the parent of the caller's cgroup: memory_limit, 100M" \
	[ "$(jget outcome)/$(jget limits.memory_bytes)" = "memory_limit/104857600" ]

# cgroup_nest: the run's cgroup beneath the caller's (root-owned) one, so
# the allocation's own accounting sees the run
awk -v nest="cgroup_nest = /$NAME" '{print} /^\[sbx\]/{print nest}' "$T/sbx.conf.orig" > "$CONF"
grep -q '^cgroup_nest' "$CONF" || printf '[sbx]\ncgroup_nest = /%s\n' "$NAME" >> "$CONF"
echo 400M > "$MEM/memory.limit_in_bytes"
echo 0 > "$MEM/job/memory.max_usage_in_bytes" 2>/dev/null
in_cg "$MEM/job" -- run --json --lang python -c 'b = bytearray(200 * 1024 * 1024)
for i in range(0, len(b), 4096): b[i] = 1
print("ok")'
id=$(jget id)
check "nested: 200M under a 400M allocation runs ok" [ "$(jget outcome)" = ok ]
check "nested: the result names memory as nested" [ "$(jget allocation.nested.0)" = memory ]
check "nested: END says allocation_nested memory" [ "$(audit_field "$id" end.allocation_nested)" = memory ]
peak=$(cat "$MEM/job/memory.max_usage_in_bytes")
diag "caller's cgroup peak with the run nested: $peak bytes"
check "nested: the caller's cgroup accounting includes the run (peak >= 200M)" [ "$peak" -ge 209715200 ]
check "nested: no sbx-run-* left beneath the caller's cgroup" \
	sh -c "! find '$MEM' -name 'sbx-run-*' | grep -q ."
echo 100M > "$MEM/memory.limit_in_bytes"
in_cg "$MEM/job" -- run --json --lang python -c "$py300"
check "nested: 300M under a 100M allocation: memory_limit" [ "$(jget outcome)" = memory_limit ]

# SIGTERM from root (Slurm's scancel signals every process of a step, a
# shutdown): the supervisor ends the run, the recorder and the signer
# (SIGTERM too) stay until END is written
cp "$T/sbx.conf.orig" "$CONF"
tag=t100-term-$$
printf 'import time\nprint("up", flush=True)\ntime.sleep(120)\n' > "$T/$tag.py"
chmod 0644 "$T/$tag.py"
run_as sbxtest "$SBX" run --json "$T/$tag.py" >"$T/term.json" 2>"$T/term.err" </dev/null &
client=$!
i=0
while ! pgrep -u sbxtest -f "^/usr/bin/python3 .*/code/$tag.py" >/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
sup=$(pgrep -u root -f "sbx-helper run .*--name $tag.py" | head -1)
rec=$(pgrep -P "$sup" -u _sbx | head -1)
sig=$(pgrep -u _sbxsign | while read -r p; do [ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$rec" ] && echo "$p"; done | head -1)
diag "supervisor $sup, recorder $rec, signer $sig"
check "the run's supervisor, recorder and signer found" [ -n "$sup" ] && [ -n "$rec" ]
kill -TERM "$rec" ${sig:+"$sig"} "$sup"
wait $client
cp "$T/term.json" "$T/out"
keep_results "$T/out"
id=$(jget id)
check "SIGTERM to the supervisor: the run is killed (outcome signal)" [ "$(jget outcome)" = signal ]
check "... END's error says SIGTERM ended it" \
	[ "$(audit_field "$id" end.error)" = "run stopped: sbx-helper received SIGTERM (a job cancelled, a shutdown)" ]
check "... END is recorded with that outcome" [ "$(audit_field "$id" end.outcome)" = signal ]
check "... no payload left" sh -c "! pgrep -u sbxtest -f '/code/$tag.py' >/dev/null"
finish
