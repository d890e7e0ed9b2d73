#!/bin/sh
# SPDX-License-Identifier: ISC
# The RPM: `make rpm` (rpmbuild --nodeps on Debian) builds it, and its file
# list has the setuid helper, the audit directory, the conffiles and the
# sysusers.d file with the right modes and owners. Not installed here.
. "$(dirname "$0")/lib.sh"
plan 7
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
finish
