#!/bin/sh
# SPDX-License-Identifier: ISC
# Runs inside the cgroup v2 VM as an unprivileged member of group sbx:
# every outcome on the v2 code path, with its exit status and accounting,
# in the subtree delegation.t set up the way sbx-cgroup.service does.
cd /home/tester || exit 1
n=0; fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
check() { d=$1; shift; if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi; }
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" out.json | head -1 | tr -d '"'; }
run() { sbx run --json --policy vm "$@" > out.json 2> err.txt; rc=$?; }
# The whole result on one line too (stdout and stderr cut at 60
# characters): the log then shows every outcome's result JSON on v2
# (docs/outcomes.md sets them beside v1's).
show() {
	echo "# rc=$rc outcome=$(field outcome) wall_ms=$(field wall_ms) cpu_ms=$(field cpu_ms) peak=$(field memory_peak_bytes) limit=$(field limit)"
	echo "# result: $(tr -d '\n' < out.json | sed 's/  */ /g; s/\("std[a-z]*": "[^"]\{60\}\)[^"]\{1,\}"/\1[...]"/g')"
}
P=/usr/lib/sbx-vm
echo "1..17"

check "host is cgroup v2 only" sh -c 'grep -q memory /sys/fs/cgroup/cgroup.controllers && [ "$(cat /proc/self/cgroup)" = "0::/" ]'

run --lang sh -c 'echo hello'
show
check "ok: exit 0 and outcome ok" [ "$rc/$(field outcome)" = "0/ok" ]
check "ok: cgroup accounting read (memory peak > 0)" [ "$(field memory_peak_bytes)" -gt 0 ]

run --lang sh -c 'exit 3'
show
check "error: exit 3, outcome error" [ "$rc/$(field outcome)" = "3/error" ]

run --lang sh --timeout 2s -c 'sleep 30'
show
check "timeout: 124, outcome timeout" [ "$rc/$(field outcome)" = "124/timeout" ]

run --lang sh -c "exec $P/memhog"
show
check "memory: 137, outcome memory_limit (memory.events oom_kill)" [ "$rc/$(field outcome)" = "137/memory_limit" ]
check "memory: memory.peak near the 64M limit" [ "$(field memory_peak_bytes)" -gt 50000000 ]

run --lang sh -c "exec $P/forkbomb"
show
check "fork bomb: outcome pids_limit (pids.events max)" [ "$(field outcome)" = pids_limit ]

run --lang sh -c "exec $P/spin 1 20000"
show
check "cpu: 124, outcome cpu_limit (cpu.stat usage_usec)" [ "$rc/$(field outcome)" = "124/cpu_limit" ]
check "cpu: cpu_ms at least the 4 s cpu_time" [ "$(field cpu_ms)" -ge 4000 ]

run --lang sh -c "exec $P/spin 2 1000"
show
check "cpus=1 quota: two threads of 1 s CPU take >= 1.8 s wall (cpu.max)" [ "$rc" = 0 -a "$(field wall_ms)" -ge 1800 ]

run --lang sh -c 'kill -SEGV $$'
show
check "signal: 139, outcome signal" [ "$rc/$(field outcome)" = "139/signal" ]

run --lang sh -c 'yes sbx'
show
check "output flood: outcome output_limit" [ "$(field outcome)" = output_limit ]
check "output flood: stdout_truncated" [ "$(field stdout_truncated)" = true ]

run --lang sh -c 'i=0; while head -c 1048576 /dev/zero > /tmp/f$i 2>/dev/null; do i=$((i+1)); done; exit 2'
show
check "/tmp filled: outcome stays error (exit 2), limit tmp_size, disk_full [/tmp]" \
	sh -c '[ "$0" = "2/error/tmp_size" ] && grep -A1 "\"disk_full\"" out.json | grep -q "\"/tmp\""' "$rc/$(field outcome)/$(field limit)"

D=$(cat /run/sbx/cgroup)
check "no run-* cgroup left under the delegated subtree ($D/sbx)" sh -c "[ -d $D/sbx ] && ! ls -d $D/sbx/run-* /sys/fs/cgroup/sbx/run-* 2>/dev/null | grep -q ."
check "the sandbox sees its own cgroup namespace root" sh -c 'sbx run --policy vm --lang sh -c "cat /proc/self/cgroup" | grep -qx "0::/"'
[ "$fails" = 0 ]
