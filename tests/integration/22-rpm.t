#!/bin/sh
# SPDX-License-Identifier: ISC
# The RPM: `make rpm` (rpmbuild --nodeps on Debian) builds it from `make
# dist`'s tarball, and its file list has the setuid helper, the audit
# directory, the conffiles and the sysusers.d file with the right modes and
# owners; %license, %doc, the systemd preset, %check (the unit and Python
# tests ran), the python3-sbx subpackage, the version from VERSION, and
# rpmlint clean but for the justified entries of packaging/rpm/sbx.rpmlintrc.
# Not installed here.
. "$(dirname "$0")/lib.sh"
plan 15
"$SBX_SRCDIR/packaging/build-rpm" "$T/pkg" >"$T/list" 2>&1; rc=$?
[ "$rc" = 0 ] || diag "$(tail -n 20 "$T/list")"
check "make rpm: rpmbuild" [ "$rc" = 0 ]
rpm=$(tail -n 1 "$T/list")
check "helper -rwsr-xr-- root sbx" grep -Eq '^-rwsr-xr-- +[0-9]+ +root +sbx +[0-9]+ .* /usr/libexec/sbx/sbx-helper$' "$T/list"
check "/var/lib/sbx drwxr-s--- _sbx sbx-audit" grep -Eq '^drwxr-s--- +[0-9]+ +_sbx +sbx-audi.* /var/lib/sbx$' "$T/list"
rpm -qcp "$rpm" >"$T/conf" 2>/dev/null
check "policies and sbx.conf are %config" sh -c 'grep -qx /etc/sbx/sbx.conf "$1" && grep -qx /etc/sbx/policies.d/default.policy "$1"' _ "$T/conf"
check "sysusers.d file" grep -q ' /usr/lib/sysusers.d/sbx.conf$' "$T/list"
check "sbx-image, its page and sbx-images.service" sh -c 'grep -Eq "^-rwxr-xr-x .* /usr/sbin/sbx-image$" "$1" && grep -q /usr/share/man/man8/sbx-image.8 "$1" && grep -q "/sbx-images.service$" "$1"' _ "$T/list"
check "man pages and completion" sh -c 'grep -q /usr/share/man/man8/sbx-helper.8 "$1" && grep -q /usr/share/bash-completion/completions/sbx-audit "$1"' _ "$T/list"
ver=$(cat "$SBX_SRCDIR/VERSION")
check "version from VERSION ($ver)" [ "$(rpm -qp --qf '%{VERSION}' "$rpm" 2>/dev/null)" = "$ver" ]
check "%license LICENSE" sh -c 'rpm -qp --licensefiles "$1" 2>/dev/null | grep -q "/usr/share/licenses/sbx.*/LICENSE$"' _ "$rpm"
rpm -qp --docfiles "$rpm" >"$T/docs" 2>/dev/null
check "%doc: README, threat model, seccomp document, example fixers and agents" sh -c '
	for f in README.md threat-model.md seccomp.md examples/fixers/line-fixer examples/agents/openai_tools.py; do
		grep -qx "/usr/share/doc/sbx/$f" "$1" || exit 1
	done' _ "$T/docs"
check "systemd preset enables sbx-cgroup.service" sh -c 'grep -q " /usr/lib/systemd/system-preset/80-sbx.preset$" "$1" &&
	grep -qx "enable sbx-cgroup.service" "$2"' _ "$T/list" "$SBX_SRCDIR/packaging/systemd/80-sbx.preset"
check "upgrade scriptlets never restart sbx-cgroup.service" sh -c '! rpm -qp --scripts "$1" 2>/dev/null | grep -q "try-restart\|systemctl restart" &&
	! grep -q postun_with_restart "$2"' _ "$rpm" "$SBX_SRCDIR/packaging/rpm/sbx.spec.in"
check "%check ran the unit and Python tests" sh -c 'grep -q "^All tests successful" "$1" && grep -q "^OK$" "$1"' _ "$T/pkg/rpmbuild.log"
py=$(ls "$T"/pkg/rpmbuild/RPMS/noarch/python3-sbx-"$ver"-*.rpm 2>/dev/null)
check "python3-sbx: the module, requiring this sbx" sh -c '[ -n "$1" ] && rpm -qlp "$1" | grep -q "/sbx/__init__.py$" &&
	rpm -qRp "$1" | grep -q "^sbx = "' _ "$py"
rpmlint -r "$SBX_SRCDIR/packaging/rpm/sbx.rpmlintrc" "$T/pkg/rpmbuild/SPECS/sbx.spec" "$rpm" $py >"$T/lint" 2>&1
diag "$(grep -E ': [EW]: |checked' "$T/lint")"
check "rpmlint: spec and packages clean but for the justified filters" grep -q ' 0 errors, 0 warnings' "$T/lint"
finish
