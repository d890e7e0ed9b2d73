#!/bin/sh
# SPDX-License-Identifier: ISC
# Runs as root inside the cgroup v2 VM (no systemd) before outcomes.t:
# finding the delegated subtree without configuration. It first attacks
# the marker /run/sbx/cgroup (missing, caller-owned, in a caller-writable
# directory, a symlink, naming a path outside /sys/fs/cgroup, naming a
# cgroup that is gone or not delegated), then does what sbx-cgroup.service
# does under systemd (a Delegate=yes cgroup under system.slice with the
# controllers enabled above it, the keeper started in it) and checks that
# runs land below it. Prints TAP lines; init2 numbers them and adds the plan.
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
check() { d=$1; shift; if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi; }
as_tester() { su -s /bin/sh tester -c "cd /home/tester && $*"; }
run() { as_tester "sbx run --lang sh --policy vm -c 'echo hi' > /tmp/d.out 2> /tmp/d.err"; rc=$?; }
err_has() { grep -qF -- "$1" /tmp/d.err || { sed 's/^/# stderr: /' /tmp/d.err; false; }; }
# refused TEXT...: the last run failed (125) with every TEXT in its error
refused() { [ "$rc" = 125 ] || { echo "# rc=$rc"; return 1; }; for t; do err_has "$t" || return 1; done; }
CG=/sys/fs/cgroup
M=/run/sbx/cgroup
FIX="start sbx-cgroup.service (systemctl enable --now sbx-cgroup.service) or set cgroup_root in /etc/sbx/sbx.conf"
SVC=$CG/system.slice/sbx-cgroup.service
mkdir -p /run

rm -rf /run/sbx
run
check "no marker: the run fails (125)" [ "$rc" = 125 ]
check "no marker: one line naming the marker and what to start or configure" \
	err_has "sbx-helper: cgroup v2: no delegated subtree ($M does not exist): $FIX"
check "no marker: exactly one error line" [ "$(wc -l < /tmp/d.err)" = 1 ]
as_tester "sbx doctor > /tmp/d.out 2>&1"
check "no marker: sbx doctor exits 1 with the problem and its fix" \
	sh -c "[ $? = 1 ] && grep -qF 'problem: cgroup-subtree: cgroup v2: no delegated subtree' /tmp/d.out && grep -qF '; fix: $FIX' /tmp/d.out"

# a cgroup that would work, to point forged markers at
mkdir -p $CG/forged
mkdir -p /run/sbx; chmod 0755 /run/sbx
echo $CG/forged > $M
chown 1000 $M
run
check "marker owned by the caller: refused" refused 'must be owned by root'
chown 0 $M
chmod 0666 $M
run
check "marker writable by others: refused" refused 'must be owned by root and not writable'
chmod 0644 $M
chmod 0777 /run/sbx
run
check "marker in a directory others may write: refused" refused 'directory must be owned by root and not writable by others'
chmod 0755 /run/sbx
mv $M /run/sbx/real
ln -s real $M
run
check "marker is a symlink: refused" refused "cgroup v2: $M"
rm -f $M /run/sbx/real
for bad in /tmp /sys/fs/cgroup /sys/fs/cgroup/../../tmp /sys/fs/cgroup//forged "/sys/fs/cgroup/forged
/tmp"; do
	printf '%s\n' "$bad" > $M
	run
	check "marker naming '$(echo "$bad" | tr '\n' ' ')': refused" refused 'does not name a directory under /sys/fs/cgroup/'
done
echo $CG/gone > $M
run
check "marker naming a cgroup that is gone: says to restart the service" \
	refused "delegated subtree /sys/fs/cgroup/gone (named in $M) is gone: restart sbx-cgroup.service"
ls -d $CG/forged/sbx/run-* >/dev/null 2>&1
check "no forged marker led to a run cgroup" [ $? != 0 ]

# not delegated: a cgroup with a process in it cannot enable controllers
# for children (cgroup v2 "no internal processes")
mkdir -p $CG/busy
sh -c "echo \$\$ > $CG/busy/cgroup.procs; exec sleep 600" </dev/null >/dev/null 2>&1 &
busy=$!
sleep 0.2
echo $CG/busy > $M
run
check "marker naming a cgroup that is not delegated: one clear error" \
	refused 'cgroup v2: cannot enable memory, pids and cpu in /sys/fs/cgroup/busy' "not a delegated subtree; $FIX"
kill $busy
rm -f $M

# what systemd does for sbx-cgroup.service (Delegate=yes), then the keeper
echo "+memory +pids +cpu" > $CG/cgroup.subtree_control
mkdir -p $SVC
echo "+memory +pids +cpu" > $CG/system.slice/cgroup.subtree_control
# (its output must not hold the TAP pipe open)
sh -c "echo \$\$ > $SVC/cgroup.procs; exec /usr/libexec/sbx/sbx-cgroup-keeper /run/sbx" </dev/null >/dev/null 2>&1 &
keeper=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -e $M ] && break; sleep 0.2; done
check "keeper: names its cgroup in $M" [ "$(cat $M 2>/dev/null)" = "$SVC" ]
check "keeper: the marker is root's, mode 0644" [ "$(stat -c '%u %a' $M 2>/dev/null)" = "0 644" ]
check "keeper: sits in the leaf keeper/, the unit's cgroup holds no process" \
	sh -c "grep -qx $keeper $SVC/keeper/cgroup.procs && [ -z \"\$(cat $SVC/cgroup.procs)\" ]"

run
check "delegated subtree found without configuration: the run works" sh -c "[ $rc = 0 ] && [ \"\$(cat /tmp/d.out)\" = hi ]"
# the run's cgroup, looked for while it lives (emulated CPUs are slow to start it)
run_cgroup() {
	i=0
	while [ $i -lt 50 ]; do ls -d "$1"/sbx/run-* >/dev/null 2>&1 && return 0; sleep 0.2; i=$((i + 1)); done
	return 1
}
as_tester "sbx run --lang sh --policy vm -c 'sleep 8' >/dev/null 2>&1" &
check "the run's cgroup is below the delegated subtree" run_cgroup "$SVC"
wait $!
check "and is removed after the run" sh -c "! ls -d $SVC/sbx/run-* >/dev/null 2>&1"
as_tester "sbx doctor > /tmp/d.out 2>&1"
rc=$?
grep '^problem' /tmp/d.out | sed 's/^/# /'
check "sbx doctor: cgroup v2 and the delegated subtree usable" \
	sh -c "grep -q '^ok: cgroup-mode: v2, controllers: ' /tmp/d.out && grep -qF 'ok: cgroup-subtree: v2: run cgroups with memory, pids and cpu limits can be created under $SVC/sbx' /tmp/d.out"
check "sbx doctor: exit 0" [ "$rc" = 0 ]

# cgroup_root in sbx.conf still wins over the marker
cp /etc/sbx/sbx.conf /tmp/sbx.conf.orig
sed -i 's|^#cgroup_root = .*|cgroup_root = /sys/fs/cgroup|' /etc/sbx/sbx.conf
as_tester "sbx run --lang sh --policy vm -c 'sleep 8' >/dev/null 2>&1" &
only_under_root() { run_cgroup "$CG" && ! ls -d "$SVC"/sbx/run-* >/dev/null 2>&1; }
check "cgroup_root in sbx.conf overrides the marker" only_under_root
wait $!
cp /tmp/sbx.conf.orig /etc/sbx/sbx.conf
