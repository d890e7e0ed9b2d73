#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx doctor and sbx-helper --check: the test install passes; a broken
# install (helper without its setuid bit, audit log world-readable, key
# readable by its group) and a caller outside group sbx are reported, each
# with its fix; --check takes no other argument, runs no payload, writes no
# audit record and leaves no cgroup behind.
. "$(dirname "$0")/lib.sh"
plan 20
H=$P/libexec/sbx/sbx-helper
DB=$P/var/lib/sbx/audit.db
KEY=$P/var/lib/sbx/audit.key
# put back whatever a failed check leaves broken
trap 'chown root:sbx "$H"; chmod 4754 "$H"; [ -e "$DB" ] && chmod 0640 "$DB"; chmod 0400 "$KEY"; rm -rf "$T"' EXIT
doctor() { u=$1; shift; run_as "$u" "$SBX" doctor "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }

sbx_run run --lang sh -c 'true'   # the audit log exists from here on
doctor sbxtest
diag "$(cat "$T/out" "$T/err")"
check "doctor on the test install: exit 0" [ "$rc" = 0 ]
check "doctor: no problem line" sh -c "! grep -q '^problem' '$T/out'"
check "doctor: every line is ok: NAME: WHAT" sh -c "! grep -qv '^ok: [a-z-]*: ' '$T/out'"
check "doctor: reports the cgroup mode and controllers" grep -Eq '^ok: cgroup-mode: (v1|v2|hybrid), controllers: .*memory' "$T/out"
check "doctor: the helper's root-side checks are included (subtree probed, key, log)" \
	sh -c "grep -q '^ok: cgroup-subtree: ' '$T/out' && grep -q '^ok: audit-key: ' '$T/out' && grep -q '^ok: audit-log: .* is _sbx:sbx-audit mode 0640' '$T/out'"

doctor sbxtest --json
check "doctor --json: ok true, every check named with a status" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
assert d["ok"] is True and len(d["checks"]) >= 10
assert all(c["status"] == "ok" and c["fix"] is None and c["name"] and c["what"] for c in d["checks"])' "$T/out"

doctor sbxout
check "caller not in group sbx: exit 1" [ "$rc" = 1 ]
check "caller not in group sbx: problem with the usermod fix" \
	grep -q '^problem: caller-group: sbxout is not in group sbx.*; fix: as root: usermod -a -G sbx sbxout' "$T/out"

chmod 0755 "$H"
doctor sbxtest
diag "$(grep '^problem' "$T/out")"
check "helper without setuid bit: exit 1" [ "$rc" = 1 ]
check "helper without setuid bit: helper-mode problem with chmod 4754 fix" \
	grep -q "^problem: helper-mode: $H is uid 0 group sbx mode 0755.*; fix: as root: chown root:sbx $H && chmod 4754 $H" "$T/out"
check "helper without setuid bit: --check itself says it is not root" \
	grep -q '^problem: helper-root: sbx-helper runs as uid [0-9]*, not root.*; fix: chown root:sbx' "$T/out"
chmod 4754 "$H"

chmod 0644 "$DB"
chmod 0440 "$KEY"
doctor sbxtest --json
check "world-readable log, group-readable key: ok false" python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); assert d["ok"] is False' "$T/out"
check "the log's mode is a problem with its fix" python3 -c 'import json,sys
c={c["name"]: c for c in json.load(open(sys.argv[1]))["checks"]}["audit-log"]
assert c["status"] == "problem" and "mode 0644, want _sbx:sbx-audit mode 0640" in c["what"], c
assert c["fix"].startswith("chown _sbx:sbx-audit ") and "chmod 0640" in c["fix"], c' "$T/out"
check "the key's mode is a problem with its fix" python3 -c 'import json,sys
c={c["name"]: c for c in json.load(open(sys.argv[1]))["checks"]}["audit-key"]
assert c["status"] == "problem" and "mode 0440" in c["what"] and "chmod 0400" in c["fix"], c' "$T/out"
chmod 0640 "$DB"
chmod 0400 "$KEY"

doctor sbxtest --bogus
check "doctor: unknown argument is a usage error (2) naming it" \
	sh -c "[ $rc = 2 ] && grep -q '^sbx: --bogus: unknown argument' '$T/err'"

# sbx-helper --check, called directly by a member of group sbx
before=$("$AUDIT" list 2>/dev/null | wc -l)
run_as sbxtest "$H" --check >"$T/out" 2>"$T/err"
check "--check: exit 0 on the test install" [ "$?" = 0 ]
check "--check: wrote no audit record" [ "$("$AUDIT" list 2>/dev/null | wc -l)" = "$before" ]
probe=$(sed -n 's/^ok: cgroup-subtree: .*(probe \(run-[0-9a-f]*\) created and removed)$/\1/p' "$T/out")
check "--check: its probe cgroup ($probe) is gone" sh -c "[ -n '$probe' ] && ! ls -d /sys/fs/cgroup/*/sbx/$probe /sys/fs/cgroup/sbx/$probe 2>/dev/null | grep -q ."
run_as sbxtest "$H" --check --policy default >"$T/out" 2>"$T/err"
check "--check with another argument: refused (125)" sh -c "[ $? = 125 ] && grep -q 'usage: sbx-helper --check' '$T/err'"
run_as sbxtest env LD_PRELOAD=/nonexistent.so SBX_X=1 "$H" --check >"$T/out" 2>"$T/err"
check "--check ignores the caller's environment" sh -c "[ $? = 0 ] && ! grep -q . '$T/err'"
finish
