#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 45, the race (found by the review of issue 21's change):
# under sbx.conf's cgroup_nest the run's cgroup v1 is made beneath the
# caller's, whose directory is the caller's own (Slurm chowns a step's).
# Between root's mkdirat(2) of sbx-run-ID and its open of that directory,
# the caller renames root's directory away and makes its own cgroup under
# the name: a cgroup the caller creates has files the caller owns, so it
# could lift the memory, pids and cpu limits root then writes there. The
# hooked helper pauses in that window (TEST_HOOK "cgroup-nested-made",
# helper/cgroup.c create_v1); the caller does the swap there.
#
# Defence checked by removing it: fresh_root_cgroup() in create_v1 (the
# opened directory must be root's, its files root's alone, no task in it):
# the run went ahead in the caller's cgroup (outcome ok, the limits written
# into the caller's cgroup): tests 2-5 failed. Root's own empty cgroup,
# renamed by the caller, is left where the caller put it (a residual:
# nothing tells it apart).
. "$(dirname "$0")/lib.sh"
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || [ ! -d /sys/fs/cgroup/memory ]; then
	echo "1..0 # SKIP needs the cgroup v1 memory hierarchy"; exit 0
fi
plan 5
CONF=$P/etc/sbx/sbx.conf
cp "$CONF" "$T/sbx.conf.orig"
A=/sys/fs/cgroup/memory/sbx-e46-$$
cleanup() {
	cp "$T/sbx.conf.orig" "$CONF"
	find "$A" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$A" "$A/step"
echo 200M > "$A/memory.limit_in_bytes"
chown sbxtest:sbxtest "$A/step" # Slurm's shape: the directory only
awk -v nest="cgroup_nest = /sbx-e46-$$" '{print} /^\[sbx\]/{print nest}' "$T/sbx.conf.orig" > "$CONF"
# the swap, as the caller: root's new directory away, one of its own in its place
cat > "$T/swap.sh" <<SWAP
for d in "$A/step"/sbx-run-*; do
	[ -d "\$d" ] || continue
	mv "\$d" "$A/step/renamed-by-caller" && mkdir "\$d" && exit 0
done
exit 1
SWAP
chmod 0755 "$T/swap.sh"
(
	echo 0 > "$A/step/cgroup.procs" || exit 99
	hook_run cgroup-nested-made "sh $T/swap.sh"
)
diag "phases: $(hook_field phases) acted: $(hook_field acted) outcome: $(hook_field result.outcome)"
diag "error: $(hook_field result.error)"
check "the caller swapped its own cgroup in under the run's name (the attack ran)" [ "$(hook_field acted)" = 0 ]
check "the run is refused: not the cgroup this run created" \
	sh -c '[ "$1" = sandbox_error ] && echo "$2" | grep -q "is not the cgroup this run created"' _ \
	"$(hook_field result.outcome)" "$(hook_field result.error)"
check "no sandbox was started (no phase after the refusal but the recorder's end)" \
	sh -c 'case "$1" in *sandbox-cloned*|*supervisor-cgroup*) exit 1 ;; esac' _ "$(hook_field phases)"
decoy=$(ls -d "$A/step"/sbx-run-* 2>/dev/null | head -1)
check "root wrote no limit into the caller's cgroup, nor removed it" \
	sh -c '[ -n "$1" ] && [ "$(cat "$1/memory.limit_in_bytes")" = "$(cat "$2/memory.limit_in_bytes")" ]' _ "$decoy" "$A/step/renamed-by-caller"
id=$(hook_field result.id)
check "the refusal is recorded (START and END)" audited "$id" sandbox_error
cp "$T/sbx.conf.orig" "$CONF"
finish
