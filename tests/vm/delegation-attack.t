#!/bin/sh
# SPDX-License-Identifier: ISC
# Runs as root inside the cgroup v2 VM after delegation.t (the keeper's
# subtree is in place): the caller's own delegated subtree against the
# helper's processes (issue 11, finding 1; tests/escape/19 does the same
# on this host's hybrid and v1 hierarchies). The subtree is made the way
# systemd makes user@UID.service (docs/CGROUP_DELEGATION.md: the directory,
# cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to the
# user, controllers enabled above it); tester then creates its own
# app.slice/*.scope below it. Root places each client in a scope, as
# systemd places a session, and tester attacks mid-run:
#   kill      echo 1 > cgroup.kill
#   freeze    echo 1 > cgroup.freeze, the payload's wall time is 4 s
#   migrate   the supervisor's pid into a frozen scope of tester's
#   pids      pids.max of the client's scope set to what it holds, so that
#             no process in it can fork: the collector must still run
# No root or _sbx process may be in tester's subtree; each run ends by its
# own limits with its END record; artifacts are collected.
#
# Defence checked by removing it: leave_caller_cgroups() (helper/main.c)
# not called, as on main before the fix: the supervisor and recorder sat
# in tester's scope (test 1), cgroup.kill killed them (START without END:
# test 2), the frozen or migrated supervisor let the payload run on past
# its wall time (tests 3-5), and with pids.max reached the collector could
# not be forked: the file in /out was lost, reported as nothing skipped
# (test 6). Prints TAP lines; init2 numbers them.
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
check() { d=$1; shift; if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi; }
CG=/sys/fs/cgroup
U=$CG/user.slice/user-1000.slice/user@1000.service
A=$U/app.slice
as_tester() { su -s /bin/sh tester -c "$*"; }

for d in $CG/user.slice $CG/user.slice/user-1000.slice; do
	mkdir -p $d
	echo "+memory +pids +cpu" > $d/cgroup.subtree_control
done
mkdir -p $U
chown 1000 $U $U/cgroup.procs $U/cgroup.subtree_control $U/cgroup.threads
as_tester "echo '+memory +pids +cpu' > $U/cgroup.subtree_control && mkdir $A &&
	echo '+memory +pids +cpu' > $A/cgroup.subtree_control &&
	for s in kill freeze migrate jail pids; do mkdir $A/\$s.scope; done && echo 1 > $A/jail.scope/cgroup.freeze"

# helpers: pid, uid and cgroup of every sbx-helper process (one ls: a
# readlink per process is slow under TCG)
helpers() {
	for p in $(ls -l /proc/[0-9]*/exe 2>/dev/null | awk '$NF ~ /^\/usr\/libexec\/sbx\/sbx-/ {split($(NF-2), a, "/"); print a[3]}'); do
		echo "$p $(awk '/^Uid:/ {print $2}' /proc/$p/status 2>/dev/null) $(cat /proc/$p/cgroup 2>/dev/null)"
	done
}
no_helpers() { [ -z "$(helpers)" ]; }
# start SCOPE ARGS: `sbx run ARGS` as tester, placed by root in SCOPE;
# returns once the client is in SCOPE and its supervisor runs
start() {
	for i in $(seq 100); do no_helpers && break; sleep 0.1; done
	echo "cd /home/tester && exec sbx run --json --policy vm $2 > /tmp/att.$1 2>&1" > /tmp/att.$1.sh
	sh -c "echo \$\$ > $A/$1.scope/cgroup.procs && exec su -s /bin/sh tester -c 'sh /tmp/att.$1.sh'" &
	client=$!
	# supervisor, recorder and sandbox init: START is committed
	for i in $(seq 100); do [ "$(helpers | wc -l)" -ge 3 ] && break; sleep 0.1; done
	grep -qx "$client" $A/$1.scope/cgroup.procs || echo "# $1: the client is not in its scope"
}
# stage NAME: what the client printed
said() { echo "# $1: $(tr -d '\n' < /tmp/att.$1 | head -c 200)"; }
last_id() { sbx-audit list --limit 1 | awk 'END {print $1}'; }
before=$(last_id)
has_end() { sbx-audit show "$1" 2>/dev/null | grep -q "^END" && { [ -z "${2:-}" ] || sbx-audit show "$1" | grep -Eq "^  outcome +$2 "; }; }

start kill "--lang sh --timeout 8s -c 'sleep 6'"
helpers > /tmp/att.where
sed 's/^/# /' /tmp/att.where
check "no helper process in the caller's delegated subtree" sh -c '! grep -q user.slice /tmp/att.where && [ -s /tmp/att.where ]'
as_tester "echo 1 > $A/kill.scope/cgroup.kill"
wait $client
for i in $(seq 100); do no_helpers && break; sleep 0.1; done
new_run_ended() { id=$(last_id); [ "$id" != "$before" ] && has_end "$id"; }
check "cgroup.kill: only the client died; the run got its END record" new_run_ended

start freeze "--lang sh --timeout 4s -c 'sleep 30'"
as_tester "echo 1 > $A/freeze.scope/cgroup.freeze"
sleep 1
echo "# freeze: $(tr '\n' ' ' < $A/freeze.scope/cgroup.events) procs: $(tr '\n' ' ' < $A/freeze.scope/cgroup.procs)"
helpers | sed 's/^/# /'
sleep 7
check "cgroup.freeze: the payload did not outlive its wall time" no_helpers
check "cgroup.freeze: the run is recorded as a timeout" has_end "$(last_id)" timeout
echo 0 > $A/freeze.scope/cgroup.freeze
wait $client
said freeze

start migrate "--lang sh --timeout 4s -c 'sleep 30'"
sup=$(helpers | awk '$2 == 0 {print $1; exit}')
as_tester "echo $sup > $A/jail.scope/cgroup.procs" 2>/dev/null
echo "# migrate: supervisor $sup now in $(cat /proc/$sup/cgroup 2>/dev/null)"
sleep 7
check "migration into a frozen scope: refused, the payload did not outlive its wall time" no_helpers
echo 0 > $A/jail.scope/cgroup.freeze
wait $client
said migrate

start pids "--lang sh -c 'echo x > /out/kept.txt; sleep 2'"
as_tester "cat $A/pids.scope/pids.current > $A/pids.scope/pids.max"
wait $client
echo "# $(tr -d '\n' < /tmp/att.pids | head -c 300)"
check "pids.max reached in the caller's scope: the artifact is still collected" grep -q '"name": *"kept.txt"' /tmp/att.pids
echo max > $A/pids.scope/pids.max
for i in $(seq 50); do no_helpers && break; sleep 0.1; done
check "no helper process left" no_helpers
