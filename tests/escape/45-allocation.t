#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 45: loosening the caller's allocation (issue 21 item 1).
# The helper caps a run by the limits on the caller's cgroup path and, under
# sbx.conf's cgroup_nest, creates the run's cgroup beneath the caller's. A
# caller who owns part of that path tries to:
#   loosen  write a higher memory.limit_in_bytes into its own (delegated,
#           every file chowned, cgconfig "admin" style) child of a 100M
#           cgroup: the run must still get 100M;
#   place   make the helper create a run cgroup where the caller chose (a
#           cgroup whose files it owns, under a cgroup_nest pattern): the
#           run cgroup must not appear there;
#   rename  in a Slurm-shaped cgroup (root's files, the caller's directory:
#           task/cgroup chowns a step's), rename the run's nested cgroup
#           mid-run: the run must still be classified (memory_limit read
#           from the renamed cgroup), recorded, and its cgroup removed.
# A caller-chosen lower limit is allowed (tighten only) and is checked too.
#
# Defences checked by removing them, one at a time (then rebuilt):
#   read_level() in helper/cgcaller.c taking each level's value instead of
#   the minimum ("min_to" as an assignment): "loosen" tests 1-3 and
#   "tighten" 6 failed (the run got the policy's 512M and ended ok);
#   cgroup_nest_open() not checking the control files of each level
#   (cgroup_files_root_only skipped): "place" tests 4-5 failed (sbx-run-*
#   created in the caller's cgroup, allocation.nested = memory; the kernel
#   still held the 100M above it, so test 1 passes either way);
#   remove_dir() without the search by inode, and cg_open() by path instead
#   of through the directory fd: "rename" tests 8-10 failed (outcome
#   signal instead of memory_limit: oom_control unreadable by path; the
#   renamed cgroup left behind).
. "$(dirname "$0")/lib.sh"
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || [ ! -d /sys/fs/cgroup/memory ]; then
	echo "1..0 # SKIP needs the cgroup v1 memory hierarchy (the v2 cap is tests/vm/allocation.t)"; exit 0
fi
plan 11
CONF=$P/etc/sbx/sbx.conf
cp "$CONF" "$T/sbx.conf.orig"
A=/sys/fs/cgroup/memory/sbx-e45-$$
cleanup() {
	cp "$T/sbx.conf.orig" "$CONF"
	find "$A" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$A" "$A/own" "$A/step"
echo 100M > "$A/memory.limit_in_bytes"
chown -R sbxtest:sbxtest "$A/own"          # a full v1 delegation
chown sbxtest:sbxtest "$A/step"            # Slurm's shape: the directory only
awk -v nest="cgroup_nest = /sbx-e45-$$" '{print} /^\[sbx\]/{print nest}' "$T/sbx.conf.orig" > "$CONF"
grep -q '^cgroup_nest' "$CONF" || { echo "Bail out! sbx.conf has no [sbx] section"; exit 1; }

cat > "$T/big.py" <<'EOF'
import time
time.sleep(1.5)
b = bytearray(300 * 1024 * 1024)
for i in range(0, len(b), 4096): b[i] = 1
print("allocated 300M")
EOF
chmod 0644 "$T/big.py"

# sbx as sbxtest, from a shell root placed in cgroup CG
in_cg() {
	cg=$1; shift
	(
		echo 0 > "$cg/cgroup.procs" || exit 99
		run_as sbxtest "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	)
	rc=$?
	keep_results "$T/out"
}

# loosen: the caller's own child says 2G under the root-set 100M
run_as sbxtest sh -c "echo 2G > '$A/own/memory.limit_in_bytes'"
diag "caller's limit in its own cgroup: $(cat "$A/own/memory.limit_in_bytes")"
# a watcher, as root, for a run cgroup in the caller's own cgroup mid-run
( while [ ! -e "$T/done" ]; do find "$A/own" -name 'sbx-run-*' >> "$T/seen"; sleep 0.05; done ) &
watcher=$!
in_cg "$A/own" run --json "$T/big.py"
touch "$T/done"; wait $watcher
id=$(jget id)
check "loosen: the caller's 2G does not lift the 100M above it (memory_limit)" [ "$(jget outcome)" = memory_limit ]
check "loosen: the enforced limit is 100M" [ "$(jget limits.memory_bytes)" = 104857600 ]
check "loosen: START and END recorded" audited "$id" memory_limit
# place: a cgroup_nest match whose files are the caller's is never a parent
check "place: no run cgroup in the caller's own cgroup, during the run or after" \
	sh -c "! grep -q . '$T/seen' && ! find '$A' -name 'sbx-run-*' | grep -q ."
check "place: the result says nothing was nested" sh -c "case '$(jget allocation.nested)' in null|'[]') ;; *) exit 1 ;; esac"

# tighten: allowed
run_as sbxtest sh -c "echo 50M > '$A/own/memory.limit_in_bytes'"
in_cg "$A/own" run --json --lang sh -c 'echo hi'
check "tighten: the caller's own 50M applies" [ "$(jget outcome)/$(jget limits.memory_bytes)" = ok/52428800 ]

# rename: Slurm's shape; the run nests beneath $A/step; the caller renames it
run_as sbxtest sh -c '
	i=0
	while [ $i -lt 200 ]; do
		for d in "$1"/sbx-run-*; do
			[ -d "$d" ] && mv "$d" "$1/renamed-by-caller" && exit 0
		done
		sleep 0.05; i=$((i + 1))
	done
	exit 1' sh "$A/step" &
mover=$!
in_cg "$A/step" run --json "$T/big.py"
wait $mover; moved=$?
id=$(jget id)
check "rename: the caller could rename the nested run cgroup (the attack ran)" [ "$moved" = 0 ]
check "rename: still classified memory_limit (read through the held directory)" [ "$(jget outcome)" = memory_limit ]
check "rename: the renamed run cgroup was removed" sh -c "! find '$A/step' -mindepth 1 -type d | grep -q ."
check "rename: START and END recorded" audited "$id" memory_limit
cp "$T/sbx.conf.orig" "$CONF"
check "host unchanged" host_unchanged
finish
