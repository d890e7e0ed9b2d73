#!/bin/sh
# SPDX-License-Identifier: ISC
# The README's first command on a fresh Debian 12, as a new administrator
# would run it: a root made with mmdebstrap (mkroot.sh; nothing on this
# host changes), the source as the README says (the `make dist` tarball
# unpacked), `./quickstart.sh` as root with no sudo installed. It must
# install only the run group (no test tool), build, install, run the main
# job (a sandboxed Python run, its result and its audit record) and end by
# telling the user to log in again; the user's first run after logging in
# works; `make uninstall` then leaves only the audit log and its key.
# Package counts and sizes of the run group go to the diagnostics.
. "$(dirname "$0")/lib.sh"
case ${SBX_MAKEFLAGS:-} in *SANITIZE=1*) echo "1..0 # SKIP the README's commands build a release: tested in the plain suite"; exit 0 ;; esac
plan 8
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }
R=$T/root
MK=$SBX_SRCDIR/tests/integration/mkroot.sh
trap '"$MK" --leave "$R" 2>/dev/null; rm -rf "$T"' EXIT
in_root() { "$MK" --run "$R" "$@"; }

"$SBX_SRCDIR/packaging/make-dist" "$T/dist" >"$T/dist.log" 2>&1
tarball=$(tail -n 1 "$T/dist.log")
"$MK" "$R" >"$T/mk" 2>&1; mrc=$?
[ "$mrc" = 0 ] || diag "$(tail -n 20 "$T/mk")"
check "a fresh Debian 12 root (mmdebstrap minbase) and the release tarball" sh -c '[ "$1" = 0 ] && [ -f "$2" ]' _ "$mrc" "$tarball"
[ "$mrc" = 0 ] || { echo "Bail out! no root"; exit 1; }
"$MK" --enter "$R"
cp "$tarball" "$R/root/"
v=$(cat "$SBX_SRCDIR/VERSION")
qstart=$(date +%s)
in_root sh -c "cd /root && tar xzf sbx-$v.tar.gz && cd sbx-$v && ! command -v sudo && ./quickstart.sh" >"$T/q" 2>&1; qrc=$?
qs=$(( $(date +%s) - qstart ))
diag "quickstart.sh took ${qs} s (apt from the mirror, build, install, the main job)" "$(grep -E 'newly installed|Need to get|After this operation' "$T/q")" "$(tail -n 12 "$T/q")"
check "./quickstart.sh as root, without sudo: exit 0" [ "$qrc" = 0 ]
check "... ran the main job: the plot's output, outcome ok, its artifact and its audit record" sh -c '
	grep -q "^== outcome: ok, exit 0" "$1" && grep -q "^== artifact: .*plot.png (image/png" "$1" && grep -q "^== audit record" "$1" &&
	grep -Eq "^ *user +sbxdemo" "$1"' _ "$T/q"
check "... and ended by telling the user to log in again" sh -c 'tail -n 4 "$1" | grep -q "log in again (or run: newgrp sbx)"' _ "$T/q"
in_root dpkg-query -W -f '${Package}\n' >"$T/pkgs"
bad=$(grep -xE 'clang.*|cppcheck|qemu-system.*|linux-image.*|lintian|npm|nodejs|chromium|libcmocka-dev|mmdebstrap|sudo|rpm|debhelper|mandoc|python3-jsonschema' "$T/pkgs" | tr '\n' ' ')
check "only the run group was installed (no test tool: ${bad:-none})" [ -z "$bad" ]
in_root su - sbxdemo -c "sbx run -c 'import numpy, pandas; print(6*7)'" >"$T/u" 2>&1; urc=$?
diag "$(cat "$T/u")"
check "the user's first run after logging in (su - sbxdemo): 42" [ "$urc:$(tail -n 1 "$T/u")" = "0:42" ]
in_root sh -c "cd /root/sbx-$v && make -s uninstall" >"$T/un" 2>&1; unrc=$?
left=$(in_root sh -c 'ls /usr/local/bin /usr/local/libexec /usr/local/share/sbx /usr/local/share/doc /usr/local/lib/python3/dist-packages 2>/dev/null | grep -c sbx')
check "make uninstall: exit 0, nothing of sbx left under /usr/local" [ "$unrc:$left" = "0:0" ]
check "... the audit log and its key kept, and said so" sh -c '[ -f "$1/var/lib/sbx-signer/audit.key" ] && [ -f "$1/var/lib/sbx/audit.db" ] &&
	grep -q "kept: /var/lib/sbx (the audit log" "$2" && grep -q "kept: /var/lib/sbx-signer (the audit log.s signing key" "$2"' _ "$R" "$T/un"
finish
