#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 45, the walk race (review finding F2 of issue 21's change):
# the run's memory, pids and cpus are capped by every level of the
# caller's cgroup path (helper/cgcaller.c), read from /proc/self/cgroup
# and then walked one directory at a time. A caller who owns a level's
# parent (Slurm chowns a job's cgroup directory to its user) renames the
# level below it in between: the walk cannot reach the levels under it,
# whose limits (here the step's 100M, tighter than the job's 200M) would
# be lost. The hooked helper pauses in that window (TEST_HOOK
# "cgroup-caller-walk", helper/cgcaller.c cgroup_caller_cap, before the
# walks) and the caller renames its
# step there.
#
# Defence checked by removing it: walk() returning -1 when a level is gone
# (cgroup_caller_cap then refuses the run); with it returning 0 the run
# went ahead (started, recorded as an ordinary run) without the step's
# 100M: tests 2-4 failed.
. "$(dirname "$0")/lib.sh"
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || [ ! -d /sys/fs/cgroup/memory ]; then
	echo "1..0 # SKIP needs the cgroup v1 memory hierarchy"; exit 0
fi
plan 4
A=/sys/fs/cgroup/memory/sbx-e47-$$
cleanup() {
	[ -d "$A/job/step-moved" ] && mv "$A/job/step-moved" "$A/job/step"
	find "$A" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$A" "$A/job" "$A/job/step"
echo 300M > "$A/memory.limit_in_bytes"
echo 200M > "$A/job/memory.limit_in_bytes"
echo 100M > "$A/job/step/memory.limit_in_bytes"
chown sbxtest:sbxtest "$A/job" "$A/job/step" # Slurm's shape: the directories only
(
	echo 0 > "$A/job/step/cgroup.procs" || exit 99
	hook_run cgroup-caller-walk "mv $A/job/step $A/job/step-moved"
)
diag "phases: $(hook_field phases) acted: $(hook_field acted) outcome: $(hook_field result.outcome)"
diag "error: $(hook_field result.error) limits.memory_bytes: $(hook_field result.limits.memory_bytes)"
check "the caller renamed its step's cgroup in the window (the attack ran)" [ "$(hook_field acted)" = 0 ]
check "the run is refused: the caller's cgroup changed while the run was set up" \
	sh -c '[ "$1" = sandbox_error ] && echo "$2" | grep -q "the caller.s cgroup changed"' _ \
	"$(hook_field result.outcome)" "$(hook_field result.error)"
check "no sandbox was started" \
	sh -c 'case "$1" in *sandbox-cloned*|*supervisor-cgroup*) exit 1 ;; esac' _ "$(hook_field phases)"
id=$(hook_field result.id)
check "the refusal is recorded (START and END)" audited "$id" sandbox_error
finish
