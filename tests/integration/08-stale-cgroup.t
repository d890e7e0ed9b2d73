#!/bin/sh
# SPDX-License-Identifier: ISC
# A cgroup left by a supervisor that died (SIGKILL by root, a crash): the
# next run kills what is still in it and removes it. Simulated by creating
# a run-* directory nobody holds locked, with a process inside.
. "$(dirname "$0")/lib.sh"
plan 3

name=run-00000000000000000000000000$$
sleep 600 &
victim=$!
for h in memory pids cpu cpuacct freezer; do
	d=/sys/fs/cgroup/$h/sbx
	[ -d /sys/fs/cgroup/$h ] || continue
	mkdir -p "$d/$name"
	echo $victim > "$d/$name/cgroup.procs"
done
# only directories older than 10 s are considered abandoned
sleep 11
sbx_run run -c 'print(1)'
check "the next run works" [ "$rc" = 0 ]
sleep 0.2
check "the process left in the stale cgroup was killed" sh -c '! kill -0 $1 2>/dev/null' _ $victim
check "the stale cgroup is gone" sh -c '! ls -d /sys/fs/cgroup/*/sbx/$1 2>/dev/null | grep -q .' _ "$name"
wait $victim 2>/dev/null
finish
