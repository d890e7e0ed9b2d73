#!/bin/sh
# SPDX-License-Identifier: ISC
# The Debian package respects the administrator and never kills a running
# sandbox, tested in a fresh Debian 12 root made with mmdebstrap (mkroot.sh;
# nothing is installed on this host):
# - an existing dpkg-statoverride for the helper (here 4750 root:sbx) is
#   kept by install and upgrade, and by `sbx-postinst --helper-mode set`;
# - an upgrade (0.1.0 to 0.1.1, built from VERSION) while a sandbox runs:
#   the run finishes normally and is recorded, and the maintainer scripts
#   never stop or restart sbx-cgroup.service (a stand-in systemctl in the
#   root records every call and, on stop/restart, kills every sbx-helper
#   as the unit's KillMode=control-group would);
# - afterwards every version source says 0.1.1: sbx --version, sbx-audit
#   --version, the Python package, dpkg.
. "$(dirname "$0")/lib.sh"
# Release packages are built without sanitizers whatever the suite's
# build: running it again under `make check SANITIZE=1` would test nothing new.
case ${SBX_MAKEFLAGS:-} in *SANITIZE=1*) echo "1..0 # SKIP packages are release builds: tested in the plain suite"; exit 0 ;; esac
plan 16
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }
R=$T/root
cleanup() { "$SBX_SRCDIR/tests/integration/mkroot.sh" --leave "$R" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
H=/usr/libexec/sbx/sbx-helper
in_root() { "$SBX_SRCDIR/tests/integration/mkroot.sh" --run "$R" "$@"; }
as_alice() { in_root setpriv --reuid=alice --regid=alice --init-groups env -i PATH=/usr/bin:/bin HOME=/home/alice "$@"; }

# 1. the two versions, each from its own VERSION
export DEB_BUILD_OPTIONS=nocheck # the unit tests run in 21-deb.t's build
"$SBX_SRCDIR/packaging/build-deb" "$T/v1" >"$T/b1" 2>&1; b1=$?
old=$(cat "$SBX_SRCDIR/VERSION")
new=$(echo "$old" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')
mkdir -p "$T/src2"
(cd "$SBX_SRCDIR" && git ls-files -co --exclude-standard -z 2>/dev/null || find . -type f ! -path './build*' -print0) |
	(cd "$SBX_SRCDIR" && grep -zv -e '^build' -e '/node_modules/' | xargs -0 cp --parents -t "$T/src2")
echo "$new" >"$T/src2/VERSION"
"$T/src2/packaging/build-deb" "$T/v2" >"$T/b2" 2>&1; b2=$?
[ "$b1:$b2" = 0:0 ] || diag "$(tail -n 20 "$T/b1" "$T/b2")"
check "built $old and $new" [ "$b1:$b2" = 0:0 ]
check "the $new .deb says $new" [ "$(dpkg-deb -f "$T/v2/sbx_${new}_"*.deb Version 2>&1)" = "$new" ]

# 2. a fresh root with the runtime libraries, a stand-in systemctl
"$SBX_SRCDIR/tests/integration/mkroot.sh" "$R" python3 init-system-helpers libseccomp2 libcap2 \
	libsqlite3-0 libbsd0 libsodium23 libinih1 libjansson4 >"$T/mk" 2>&1; mrc=$?
[ "$mrc" = 0 ] || diag "$(tail -n 20 "$T/mk")"
check "mmdebstrap root" [ "$mrc" = 0 ]
[ "$mrc" = 0 ] || { echo "Bail out! no root"; exit 1; }
"$SBX_SRCDIR/tests/integration/mkroot.sh" --enter "$R"
mkdir -p "$R/run/systemd/system"
cat >"$R/usr/bin/systemctl" <<'SH'
#!/bin/sh
echo "$*" >>/var/log/systemctl.calls
case " $* " in *" stop "* | *" restart "* | *" try-restart "* | *" reload-or-restart "* | *" kill "*)
	for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = sbx-helper ] && kill -9 "${p#/proc/}"; done ;;
esac
exit 0
SH
chmod 0755 "$R/usr/bin/systemctl"
cp "$T"/v1/sbx_"$old"_*.deb "$T"/v1/python3-sbx_"$old"_all.deb "$T"/v2/sbx_"$new"_*.deb "$T"/v2/python3-sbx_"$new"_all.deb "$R/tmp/"

# 3. the administrator's override exists before the package
in_root sh -c "groupadd --system sbx && dpkg-statoverride --add root sbx 4750 $H && useradd -m -G sbx alice"
in_root sh -c "dpkg -i /tmp/sbx_${old}_*.deb /tmp/python3-sbx_${old}_all.deb" >"$T/i1" 2>&1; irc=$?
[ "$irc" = 0 ] || diag "$(tail -n 20 "$T/i1")"
check "install $old" [ "$irc" = 0 ]
check "install kept the administrator's override: helper 4750 root:sbx" \
	[ "$(in_root stat -c '%a %U %G' $H 2>&1)|$(in_root dpkg-statoverride --list $H)" = "4750 root sbx|root sbx 4750 $H" ]
as_alice sbx run --json -c 'print(6*7)' >"$T/out" 2>"$T/err"
check "a run as alice ($old)" [ "$(jget outcome):$(jget stdout)" = "ok:42" ]

# 4. upgrade while a sandbox runs
auid=$(in_root id -u alice)
as_alice sbx run --json -c "import time
time.sleep(8)
print('survived')" >"$T/long" 2>"$T/long.err" &
long=$!
i=0
until pgrep -u "$auid" -f "/code/main.py" >/dev/null || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
alive_before=$(pgrep -u "$auid" -f "/code/main.py" | wc -l)
: >"$R/var/log/systemctl.calls"
in_root sh -c "dpkg -i /tmp/sbx_${new}_*.deb /tmp/python3-sbx_${new}_all.deb" >"$T/i2" 2>&1; urc=$?
[ "$urc" = 0 ] || diag "$(tail -n 20 "$T/i2")"
check "upgrade to $new while a sandbox runs" [ "$urc" = 0 ]
wait "$long"; lrc=$?
cp "$T/long" "$T/out"
diag "sandboxes before the upgrade: $alive_before; systemctl calls: $(tr '\n' ';' <"$R/var/log/systemctl.calls")"
diag "$(cat "$T/long.err")" "long run: $(jget outcome) $(jget error.message)"
check "the sandbox was running during the upgrade" [ "$alive_before" -ge 1 ]
check "the running sandbox survived the upgrade: exit 0, outcome ok, its output" \
	[ "$lrc:$(jget outcome):$(jget stdout)" = "0:ok:survived" ]
check "the maintainer scripts took the systemd path (systemctl was called)" [ -s "$R/var/log/systemctl.calls" ]
check "... and never stopped or restarted sbx-cgroup.service" \
	sh -c '! grep -Eq "(^| )(stop|restart|try-restart|reload-or-restart|kill)( |$)" "$1"' _ "$R/var/log/systemctl.calls"
check "upgrade kept the override" \
	[ "$(in_root stat -c '%a %U %G' $H 2>&1)|$(in_root dpkg-statoverride --list $H)" = "4750 root sbx|root sbx 4750 $H" ]

# 5. one version everywhere
v="$(as_alice sbx --version)|$(in_root sbx-audit --version)|$(in_root python3 -c 'import sbx; print(sbx.__version__)')|$(in_root dpkg-query -W -f '${Version}' sbx)"
check "sbx, sbx-audit, python3-sbx and dpkg all say $new ($v)" [ "$v" = "sbx $new|sbx-audit $new|$new|$new" ]
in_root sbx-audit checkpoint --write >/dev/null 2>&1
in_root sbx-audit verify >"$T/verify" 2>&1
diag "$(cat "$T/verify")"
check "the audit log verifies across the upgrade (runs of both versions)" grep -qE "^OK: 4 records( \(checkpoint at 4\))?$" "$T/verify"
in_root /usr/share/sbx/sbx-postinst --helper-mode set >"$T/pi" 2>&1
check "sbx-postinst --helper-mode set keeps the override too, and says so" \
	sh -c '[ "$1" = "4750 root sbx" ] && grep -q "keeping the administrator.s dpkg-statoverride" "$2"' _ "$(in_root stat -c '%a %U %G' $H)" "$T/pi"

# 6. without an override, the package adds its own (4754 root:sbx)
in_root sh -c "dpkg --purge sbx python3-sbx >/dev/null; dpkg-statoverride --list $H >/dev/null && dpkg-statoverride --remove $H; dpkg -i /tmp/sbx_${new}_*.deb" >"$T/i3" 2>&1
check "fresh install without override: 4754 root:sbx, as a statoverride" \
	[ "$(in_root stat -c '%a %U %G' $H 2>&1)|$(in_root dpkg-statoverride --list $H)" = "4754 root sbx|root sbx 4754 $H" ]
finish
