#!/bin/sh
# SPDX-License-Identifier: ISC
# Where run cgroups go, on this (cgroup v1 or hybrid) host: without
# cgroup_root the helper uses the v1 hierarchies and ignores the cgroup v2
# marker of sbx-cgroup.service even when one is there; a cgroup_root that
# is wrong fails the run quickly with one line naming it, still audited.
# (The v2 side, marker attacks included, is tests/vm/delegation.t.)
. "$(dirname "$0")/lib.sh"
plan 13
CONF=$P/etc/sbx/sbx.conf
cp "$CONF" "$T/sbx.conf.orig"
trap 'cp "$T/sbx.conf.orig" "$CONF"; rm -f "$P/run/sbx/cgroup"; rm -rf "$T"' EXIT

if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	echo "1..0 # SKIP this host is cgroup v2 (tests/vm covers it)"; exit 0
fi
check "the shipped sbx.conf leaves cgroup_root unset" sh -c "! grep -q '^cgroup_root' '$CONF'"
sbx_run run --json --lang sh -c 'echo hi'
check "v1 without configuration: the run works" [ "$rc/$(jget outcome)/$(jget stdout)" = "0/ok/hi" ]
run_as sbxtest "$P/libexec/sbx/sbx-helper" --check >"$T/check" 2>&1
check "v1 without configuration: --check probes the v1 subtrees" \
	grep -q '^ok: cgroup-subtree: v1: run cgroups can be created in the sbx/ subtrees of /sys/fs/cgroup/' "$T/check"

# a root-owned marker as sbx-cgroup.service writes it: not consulted on v1
install -d -m 0755 "$P/run/sbx"
echo /sys/fs/cgroup/unified > "$P/run/sbx/cgroup"
sbx_run run --json --lang sh -c 'cat /proc/self/cgroup >/dev/null; echo hi'
check "v1 with a cgroup v2 marker present: still the v1 path, the run works" [ "$rc/$(jget outcome)" = 0/ok ]
check "no run cgroup appeared under the marker's directory" sh -c "! ls -d /sys/fs/cgroup/unified/sbx/run-$(jget id) 2>/dev/null | grep -q ."
rm -f "$P/run/sbx/cgroup"

printf '[sbx]\ncgroup_root = /nonexistent/cg\n[language.sh]\ncommand = /bin/sh\nextension = .sh\n' > "$CONF"
start=$(date +%s)
sbx_run run --json --lang sh -c 'echo hi'
check "cgroup_root that does not exist: 125 at once" sh -c "[ $rc = 125 ] && [ $(( $(date +%s) - start )) -lt 10 ]"
check "cgroup_root that does not exist: the error names it" \
	[ "$(jget error.message)" = "cgroup: cgroup_root /nonexistent/cg (sbx.conf): No such file or directory" ]
check "cgroup_root that does not exist: the attempt is audited (END sandbox_error)" \
	[ "$(audit_field "$(jget id)" end.outcome)" = sandbox_error ]

mkdir -p "$T/cg"
printf '[sbx]\ncgroup_root = %s/cg\n[language.sh]\ncommand = /bin/sh\nextension = .sh\n' "$T" > "$CONF"
sbx_run run --lang sh -c 'echo hi'
check "cgroup_root without v1 hierarchies: one line naming the missing one" \
	sh -c "[ $rc = 125 ] && [ \$(wc -l < '$T/err') = 1 ] && grep -q 'sbx-helper: cgroup: no memory hierarchy at $T/cg/memory (check cgroup_root in sbx.conf)' '$T/err'"
run_as sbxtest "$SBX" doctor >"$T/out" 2>&1
check "sbx doctor reports the broken cgroup_root with a fix" \
	grep -q "^problem: cgroup-subtree: cgroup: no memory hierarchy at $T/cg/memory.*; fix: set cgroup_root in " "$T/out"

# the unit make install puts in UNITDIR, with the install's own paths
U=$P/lib/systemd/system/sbx-cgroup.service
check "sbx-cgroup.service installed: Delegate=yes, the install's keeper and run directory" \
	sh -c "grep -qx 'Delegate=yes' '$U' && grep -qx 'ExecStart=$P/libexec/sbx/sbx-cgroup-keeper $P/run/sbx' '$U'"
if command -v systemd-analyze >/dev/null; then
	timeout 30 systemd-analyze verify --man=no "$U" >"$T/verify" 2>&1; vrc=$?
	diag "$(cat "$T/verify")"
	check "systemd-analyze verify accepts the unit" [ "$vrc" = 0 ]
else
	ok 0 "# SKIP systemd-analyze missing"
fi
"$P/libexec/sbx/sbx-cgroup-keeper" "$T/run" >"$T/out" 2>&1
check "the keeper on a host without cgroup v2: exits 1 saying so, writes no marker" \
	sh -c "[ $? = 1 ] && grep -q 'is not cgroup v2; sbx uses the v1 hierarchies here' '$T/out' && [ ! -e '$T/run' ]"
finish
