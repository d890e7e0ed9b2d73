# SPDX-License-Identifier: ISC
# Shared by the escape tests (sourced): the integration helpers
# (run_as, sbx_run, jget, check...) plus what every attack class asserts:
# the host is unchanged and the run is in the audit log.
. "$(dirname "$0")/../integration/lib.sh"
# the system interpreter: a version manager's shim in PATH costs 0.5 s a call
if [ -x /usr/bin/python3 ]; then python3() { /usr/bin/python3 "$@"; }; fi
ESC=$(cd "$(dirname "$0")" && pwd)
BIN=$P/lib/sbx-escape              # attacker programs (tests/escape/bin)
HOOKED=$P/libexec/sbx/sbx-helper-hooked

# A root-owned canary directory the caller must never see changed.
CANARY=$T/canary
mkdir -m 0755 "$CANARY"
echo "canary-secret-$$" > "$CANARY/secret"
chmod 0600 "$CANARY/secret"
echo "canary-public-$$" > "$CANARY/public"

host_state() {
	sha256sum /etc/passwd /etc/shadow /etc/group "$P/libexec/sbx/sbx-helper" "$HOOKED" \
		"$P/etc/sbx/sbx.conf" "$P/etc/sbx/audit.pub" "$P"/etc/sbx/policies.d/* "$CANARY"/* 2>&1
	find "$CANARY" "$P/etc" "$P/libexec" -printf '%p %U %G %m %s\n' | sort
}
host_state > "$T/host.before"
# host_unchanged: nothing above changed since the script started
host_unchanged() {
	host_state > "$T/host.after"
	cmp -s "$T/host.before" "$T/host.after" || { diff "$T/host.before" "$T/host.after" | sed 's/^/# /'; return 1; }
}
# audited ID [OUTCOME]: START and END of run ID are in the log (sbx-audit
# list and show), with OUTCOME when given
audited() {
	case $1 in [0-9a-f]*) ;; *) return 1 ;; esac
	"$AUDIT" list --limit 200 | grep -q "^$1 " || return 1
	"$AUDIT" show "$1" > "$T/audit.show" 2>&1 || return 1
	grep -q "^START .* run $1" "$T/audit.show" && grep -q "^END .* run $1" "$T/audit.show" || return 1
	[ -z "${2:-}" ] || grep -Eq "^  outcome +$2 " "$T/audit.show"
}
# hook_run PHASE ACTION: the hooked helper run as sbxtest (a Python
# print), ACTION (a shell command, as sbxtest) done at its pause point
# PHASE (tests/escape/hookrun.py); its JSON in $T/hook.json.
# hook_field KEY[.KEY...]: a member of that JSON, or None.
hook_run() {
	cp "$ESC/hookrun.py" "$T/hookrun.py"
	chmod 0755 "$T/hookrun.py"
	run_as sbxtest /usr/bin/python3 "$T/hookrun.py" "$HOOKED" "$1" "$2" -- \
		run --lang python --code-fd 3 --result-fd 4 > "$T/hook.json" 2>"$T/hook.err"
}
hook_field() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print(d)' "$T/hook.json" "$1" 2>/dev/null; }
# procs [N]: while a run of this prefix's helper is going on, print its
# process tree as JSON (tests/escape/procs.py)
procs() { python3 "$ESC/procs.py" "$P/libexec/sbx/sbx-helper" "${1:-2}"; }
# Tools the caller runs are copied where sbxtest can read them.
cp "$ESC/ptyrun.py" "$T/ptyrun.py"
chmod 0644 "$T/ptyrun.py"
# pj FILE EXPR: EXPR evaluated with d = the JSON document in FILE
pj() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@" 2>/dev/null; }
