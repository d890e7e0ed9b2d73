#!/bin/sh
# SPDX-License-Identifier: ISC
# The Debian package end to end: `make deb` (dpkg-buildpackage + lintian),
# `apt-get install ./sbx_*.deb`, a sandboxed Python job from the installed
# package as a user in group sbx, remove, purge (what stays is what
# sbx(1)'s package notes and the README say), reinstall, purge with
# SBX_PURGE_AUDIT_LOG=yes.
#
# It installs system-wide (/usr/bin, /usr/libexec/sbx, /etc/sbx,
# /var/lib/sbx), so: one run at a time on a machine (flock); it refuses to
# run when an sbx package is installed or /usr/bin/sbx exists; an existing
# /etc/sbx, /var/lib/sbx and /var/lib/sbx-signer (a `make install` into
# /usr/local: its configuration, log and signing key) are moved aside and
# put back, and accounts it created are removed, whatever happens.
. "$(dirname "$0")/lib.sh"
plan 30
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }

exec 9>/run/lock/sbx-deb-test.lock
flock 9

H=/usr/libexec/sbx/sbx-helper
SAVE=$(mktemp -d /var/tmp/sbx-deb-save.XXXXXX)
had_accounts=
for a in "group sbx" "group sbx-audit" "passwd _sbx"; do
	getent $a >/dev/null && had_accounts="$had_accounts ${a#* }"
done

# known to dpkg in any state but not-installed
pkg_known() { case $(dpkg-query -W -f='${Status}' sbx 2>/dev/null) in "" | *not-installed) return 1 ;; esac; }

restore() {
	pkg_known && SBX_PURGE_AUDIT_LOG=yes dpkg --purge sbx >/dev/null 2>&1
	dpkg-statoverride --list "$H" >/dev/null 2>&1 && dpkg-statoverride --remove "$H"
	for d in etc/sbx var/lib/sbx var/lib/sbx-signer; do
		if [ -e "$SAVE/$(echo $d | tr / _)" ]; then
			rm -rf "/$d"
			mv "$SAVE/$(echo $d | tr / _)" "/$d"
		elif [ -e "$SAVE/created_$(echo $d | tr / _)" ]; then
			rm -rf "/$d"
		fi
	done
	case " $had_accounts " in *" _sbx "*) ;; *) getent passwd _sbx >/dev/null && userdel _sbx ;; esac
	for g in sbx sbx-audit _sbx; do
		case " $had_accounts " in *" $g "*) continue ;; esac
		getent group $g >/dev/null && groupdel $g
	done
	rm -rf "$SAVE" "$T"
}

# Preconditions: never clobber what is not ours.
if pkg_known || [ -e /usr/bin/sbx ] || [ -e /usr/bin/sbx-audit ] || [ -e /usr/libexec/sbx ]; then
	echo "Bail out! an sbx package or /usr/bin/sbx is already installed; not touching it"
	exit 1
fi
trap 'restore' EXIT
trap 'exit 1' INT TERM HUP

# 1. build and lint
"$SBX_SRCDIR/packaging/build-deb" "$T/pkg" >"$T/build" 2>&1; brc=$?
deb=$(tail -n 1 "$T/build")
[ "$brc" = 0 ] || diag "$(tail -n 30 "$T/build")"
check "make deb: dpkg-buildpackage and lintian clean" [ "$brc" = 0 ]
check "one .deb" [ -f "$deb" ]
[ -f "$deb" ] || { echo "Bail out! no package to install"; exit 1; }
diag "lintian: $(grep -v 'root privileges' "$T/pkg/lintian.log" | tr '\n' ' ')"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$T/conffiles" 2>/dev/null
check "policies and sbx.conf are conffiles" sh -c 'grep -qx /etc/sbx/sbx.conf "$1" && grep -qx /etc/sbx/policies.d/default.policy "$1"' _ "$T/conffiles"
check "the helper is not shipped setuid" sh -c 'dpkg-deb -c "$1" | grep -q "^-rwxr-xr-x root/root .* ./usr/libexec/sbx/sbx-helper$"' _ "$deb"
check "sbx-image, its page and sbx-images.service are in the package" sh -c 'dpkg-deb -c "$1" >"$2" &&
	grep -q "^-rwxr-xr-x root/root .* ./usr/sbin/sbx-image$" "$2" && grep -q " ./usr/share/man/man8/sbx-image.8.gz$" "$2" &&
	grep -q " ./lib/systemd/system/sbx-images.service$" "$2"' _ "$deb" "$T/contents"
dpkg-deb -c "$deb" | awk '{ print $NF }' >"$T/files"
check "/usr/share/doc/sbx: copyright (ISC), README, threat model, seccomp document, examples" sh -c '
	for f in copyright README.md threat-model.md seccomp.md examples/fixers/line-fixer examples/agents/openai_tools.py; do
		grep -qx "./usr/share/doc/sbx/$f" "$1" || exit 1
	done
	dpkg-deb --fsys-tarfile "$2" | tar -xO ./usr/share/doc/sbx/copyright | grep -qx "License: ISC"' _ "$T/files" "$deb"
mkdir -p "$T/ctrl" && dpkg-deb -e "$deb" "$T/ctrl"
check "upgrades never stop or restart sbx-cgroup.service (prerm stops only on remove)" sh -c '
	! grep -Eq "restart|try-restart" "$1/postinst" && grep -q "deb-systemd-invoke start" "$1/postinst" &&
	grep -B1 "deb-systemd-invoke stop" "$1/prerm" | grep -q "\"\$1\" = remove"' _ "$T/ctrl"
py=$(ls "$T"/pkg/python3-sbx_*_all.deb 2>/dev/null)
check "python3-sbx: the module in dist-packages, depending on sbx" sh -c '[ -n "$1" ] &&
	dpkg-deb -c "$1" | grep -q "./usr/lib/python3/dist-packages/sbx/__init__.py$" && dpkg-deb -f "$1" Depends | grep -q "sbx (>= "' _ "$py"

# 2. install (the existing configuration, log and key are moved aside)
for d in etc/sbx var/lib/sbx var/lib/sbx-signer; do
	if [ -e "/$d" ]; then mv "/$d" "$SAVE/$(echo $d | tr / _)"; else touch "$SAVE/created_$(echo $d | tr / _)"; fi
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$T/apt" 2>&1; arc=$?
[ "$arc" = 0 ] || diag "$(tail -n 20 "$T/apt")"
check "apt-get install ./sbx_*.deb" [ "$arc" = 0 ]
check "helper 4754 root:sbx" [ "$(stat -c '%a %U %G' $H 2>&1)" = "4754 root sbx" ]
check "helper mode is a dpkg-statoverride" sh -c 'dpkg-statoverride --list "$1" | grep -qx "root sbx 4754 $1"' _ $H
check "accounts _sbx, sbx, sbx-audit" sh -c '{ getent passwd _sbx && getent group sbx && getent group sbx-audit; } >/dev/null'
check "/var/lib/sbx _sbx:sbx-audit 2750" [ "$(stat -c '%a %U %G' /var/lib/sbx 2>&1)" = "2750 _sbx sbx-audit" ]
check "signing key _sbxsign 0400, public key 0644" sh -c '[ "$(stat -c "%a %U" /var/lib/sbx-signer/audit.key)" = "400 _sbxsign" ] && [ "$(stat -c %a /etc/sbx/audit.pub)" = 644 ]'

# 3. a sandboxed Python job from the package, as a user in group sbx
run_as sbxtest /usr/bin/sbx run --json -c 'import sys; print(6*7, sys.version_info[0])' >"$T/out" 2>"$T/err"; rc=$?
diag "$(cat "$T/err")"
check "sbx run from the package: exit 0, outcome ok" [ "$rc:$(jget outcome)" = 0:ok ]
[ "$rc:$(jget outcome)" = 0:ok ] || diag "exit $rc; the result: $(head -c 800 "$T/out")"
check "... printed 42 3" [ "$(jget stdout)" = "42 3" ]
id=$(jget id)
check "sbx-audit verify and show the run" sh -c '/usr/bin/sbx-audit verify | grep -qx "OK: 2 records (checkpoint at 2)" && /usr/bin/sbx-audit show "$1" | grep -q "user *sbxtest"' _ "$id"

# The pages in /usr/share/man, where mandoc -Tlint resolves references
# (linted uncompressed: this mandoc reads only plain files).
mkdir -p "$T/man"
for p in man1/sbx.1 man1/sbx-audit.1 man5/sbx.conf.5 man5/sbx.policy.5 man8/sbx-helper.8 man8/sbx-image.8; do
	zcat "/usr/share/man/$p.gz" >"$T/man/${p#*/}"
done
(cd "$T/man" && mandoc -Tlint sbx.1 sbx-audit.1 sbx.conf.5 sbx.policy.5 sbx-helper.8 sbx-image.8) 2>&1 | grep '^mandoc: sbx' |
	grep -Ev 'referenced manual not found: Xr (env|timeout|sqlite3|rm|seccomp|rename|flock|statx|syslog|cgroups|namespaces|systemd.resource-control|ausearch|chmod|mkfs.erofs|mmdebstrap) [0-9]' |
	grep -Ev 'STYLE: operating system explicitly specified: Os sbx \(NetBSD\)$' >"$T/lint" # the footer names sbx VERSION (20-man.t)
diag "$(cat "$T/lint")"
check "installed man pages: mandoc -Tlint clean, references resolved" [ ! -s "$T/lint" ]

# 4. remove: programs go, configuration stays
apt-get remove -y -q sbx >"$T/apt" 2>&1; arc=$?
check "apt-get remove" [ "$arc" = 0 ]
check "remove: programs gone, conffiles kept" sh -c '! [ -e /usr/bin/sbx ] && ! [ -e /usr/libexec/sbx ] && [ -f /etc/sbx/sbx.conf ]'

# 5. purge: only the audit log, its key and a copy of the public key stay
apt-get purge -y -q sbx >"$T/apt" 2>&1; arc=$?
check "apt-get purge" [ "$arc" = 0 ]
not_known() { ! pkg_known; }
check "purge: package unknown to dpkg" not_known
check "purge: /etc/sbx and the stat override gone" sh -c '! [ -e /etc/sbx ] && ! dpkg-statoverride --list "$1" >/dev/null' _ $H
left=$(cd / && find usr/bin usr/libexec usr/share -path '*sbx*' 2>/dev/null | grep -E '(^|/)sbx' | grep -v '^usr/local')
diag "left under /usr: ${left:-nothing}"
check "purge: nothing of the package left under /usr" [ -z "$left" ]
ls /var/lib/sbx 2>/dev/null | grep -Ev '^audit\.(db|db-wal|db-shm|key|pub)$' >"$T/extra"
check "purge: /var/lib/sbx keeps audit.db, audit.key, audit.pub and nothing else" \
	sh -c '[ -f /var/lib/sbx/audit.db ] && [ -f /var/lib/sbx-signer/audit.key ] && [ -f /var/lib/sbx/audit.pub ] && ! [ -s "$1" ]' _ "$T/extra"
check "purge: the kept log verifies with the kept public key" \
	sh -c '"$1" --db /var/lib/sbx/audit.db --pubkey /var/lib/sbx/audit.pub verify | grep -qx "OK: 2 records (checkpoint at 2)"' _ "$AUDIT"

# 6. reinstall over the kept log: the same key signs on
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$T/apt" 2>&1; arc=$?
check "reinstall after purge" [ "$arc" = 0 ]
run_as sbxtest /usr/bin/sbx run -c 'print(1)' >/dev/null 2>&1
/usr/bin/sbx-audit checkpoint --write >/dev/null # else the newest runs are an unsealed tail (exit 2)
check "reinstall: the kept log and the new runs verify together" sh -c '/usr/bin/sbx-audit verify | grep -qx "OK: 4 records (checkpoint at 4)"'

# 7. purge, asking for the log too
SBX_PURGE_AUDIT_LOG=yes apt-get purge -y -q sbx >"$T/apt" 2>&1; arc=$?
check "purge with SBX_PURGE_AUDIT_LOG=yes" [ "$arc" = 0 ]
check "... removes /var/lib/sbx" [ ! -e /var/lib/sbx ]
finish
