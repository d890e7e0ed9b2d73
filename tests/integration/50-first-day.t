#!/bin/sh
# SPDX-License-Identifier: ISC
# The first day, without touching this host's system directories:
# - the README's two commands are `./quickstart.sh` and the test command,
#   and .ci/run runs exactly that test command after apt-get update;
# - tools/install-deps: the run group (quickstart) holds only building and
#   running sbx plus the curated interpreters; the test group holds what
#   the suite needs (sudo for tests/escape/09-setuid-inside.t, ...);
# - `make install` into a fresh prefix, then `make uninstall` leaves only
#   the audit log's directory with a copy of the public key, the signer's
#   directory with the signing key,
#   keeps an edited policy, and says what it kept;
# - quickstart.sh ends by telling the user to log in again.
# The README's commands themselves run in a fresh Debian root in
# 58-fresh-debian.t.
. "$(dirname "$0")/lib.sh"
plan 13
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }
S=$SBX_SRCDIR

# 1. the README's commands and CI
sed -n '/^```sh$/,/^```$/p' "$S/README.md" | sed -n '2,3p' | sed 's/ *#.*//' >"$T/cmds"
first=$(sed -n 1p "$T/cmds") second=$(sed -n 2p "$T/cmds")
diag "README: [$first] [$second]"
check "README command 1 is ./quickstart.sh (as root, no sudo)" [ "$first" = "./quickstart.sh" ]
check "README command 2 installs the test toolchain itself, then runs make ci" \
	[ "$second" = "tools/install-deps test && make ci" ]
last=$(grep -v '^[[:space:]]*#' "$S/.ci/run" | grep -v '^[[:space:]]*$' | tail -n 1)
upd=$(grep -n '^apt-get update' "$S/.ci/run" | cut -d: -f1)
cmd=$(grep -nxF -- "$second" "$S/.ci/run" | cut -d: -f1)
check ".ci/run: apt-get update, then exactly the README's test command" \
	sh -c '[ "$1" = "$2" ] && [ -n "$3" ] && [ -n "$4" ] && [ "$3" -lt "$4" ]' _ "$last" "$second" "$upd" "$cmd"
check "no sudo in the README's commands or .ci/run" sh -c '! grep -qw sudo "$1" && ! grep -v "^#" "$2" | grep -qw sudo' _ "$T/cmds" "$S/.ci/run"
# the README is for a machine without sudo: its administrator commands
# run as root, and the tarball it names is this version's
check "README: no command uses sudo, its tarball is sbx-\$(cat VERSION)" sh -c '
	! grep -E "^sudo |\`sudo " "$1" && grep -qF "sbx-$(cat "$2").tar.gz" "$1"' _ "$S/README.md" "$S/VERSION"

# 2. the dependency groups
"$S/tools/install-deps" --list run >"$T/run"
"$S/tools/install-deps" --list test >"$T/test"
bad=$(grep -xE 'qemu.*|linux-image.*|clang.*|cppcheck|lintian|rpm.*|npm|nodejs|chromium|libcmocka-dev|mmdebstrap|sudo|debhelper|mandoc|python3-jsonschema|busybox-static|bubblewrap' "$T/run" | tr '\n' ' ')
check "run group: no test tool (${bad:-none})" [ -z "$bad" ]
check "run group: compiler, libraries, curated interpreters" sh -c '
	for p in gcc make pkg-config libseccomp-dev libsodium-dev libjansson-dev python3 python3-numpy python3-pandas python3-matplotlib; do
		grep -qx "$p" "$1" || exit 1
	done' _ "$T/run"
check "test group: the run group and what the tests use (sudo, jsonschema, mmdebstrap, rpmlint, cmocka)" sh -c '
	for p in $(cat "$1") sudo python3-jsonschema mmdebstrap rpmlint libcmocka-dev; do grep -qx "$p" "$2" || exit 1; done' _ "$T/run" "$T/test"
check "make deps-run, deps-test, deps name the groups" sh -c '
	grep -A1 "^deps-run:" "$1" | grep -q "install-deps run" && grep -A1 "^deps-test:" "$1" | grep -q "install-deps test" &&
	grep -A1 "^deps:" "$1" | grep -q "install-deps all"' _ "$S/Makefile"

# 3. install, then uninstall: what is left is the audit trail
P=$T/prefix
V="PREFIX=$P SYSCONFDIR=$P/etc LOCALSTATEDIR=$P/var LIBEXECDIR=$P/libexec RUNSTATEDIR=$P/run"
# shellcheck disable=SC2086
make -C "$S" --no-print-directory -s B="build-check-first-day" $V install >"$T/inst" 2>&1; irc=$?
[ "$irc" = 0 ] || diag "$(tail -n 20 "$T/inst")"
(cd "$P" && find . -mindepth 1 | sort) >"$T/installed"
echo "# edited" >>"$P/etc/sbx/policies.d/default.policy"
# shellcheck disable=SC2086
make -C "$S" --no-print-directory -s B="build-check-first-day" $V uninstall >"$T/un" 2>&1; urc=$?
diag "$(cat "$T/un")"
# files, and directories of sbx's own (the shared hierarchy, bin, share/man/man1
# and the like, stays as it is in /usr/local)
(cd "$P" && find . -mindepth 1 \( -type d -name '*sbx*' -o ! -type d \) | sort) >"$T/left"
diag "left: $(tr '\n' ' ' <"$T/left")"
check "make install ($(wc -l <"$T/installed") paths, python package and docs among them)" \
	sh -c '[ "$1" = 0 ] && grep -q "/sbx/__init__.py$" "$2" && grep -q "/doc/sbx/threat-model.md$" "$2" && grep -q "result.schema.json$" "$2"' _ "$irc" "$T/installed"
printf '%s\n' ./etc/sbx ./etc/sbx/policies.d/default.policy ./var/lib/sbx \
	./var/lib/sbx-signer ./var/lib/sbx-signer/audit.key ./var/lib/sbx/audit.pub >"$T/want"
check "make uninstall leaves only the audit key, a copy of the public key and the edited policy" \
	sh -c '[ "$1" = 0 ] && diff "$2" "$3" >&2' _ "$urc" "$T/want" "$T/left"
check "... and says so" sh -c 'grep -q "kept: .*/var/lib/sbx (the audit log, with a copy of the public key" "$1" &&
	grep -q "kept: .*/var/lib/sbx-signer (the audit log.s signing key" "$1" &&
	grep -q "kept (changed from the shipped version):.*default.policy" "$1"' _ "$T/un"

# 4. quickstart's last words
check "quickstart.sh tells the user to log in again (group sbx)" sh -c '
	tail -n 6 "$1" | grep -q "log in again (or run: newgrp sbx)" && tail -n 6 "$1" | grep -q "group sbx"' _ "$S/quickstart.sh"
rm -rf "$S/build-check-first-day"
finish
