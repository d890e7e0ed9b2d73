#!/bin/sh
# SPDX-License-Identifier: ISC
# Build and install sbx into a root-owned temporary prefix with the setuid
# helper, and create the unprivileged test users. Called by
# `make check-integration`; idempotent.
set -eu
src=${SBX_SRCDIR:?}
prefix=${SBX_CHECK_PREFIX:?}
[ "$(id -u)" = 0 ] || { echo "setup.sh: the integration tests need root (setuid install)" >&2; exit 1; }

# Images (sbx-image(8)) stay mounted below the prefix: unmount them first,
# deepest first, so that rm does not meet a read-only erofs.
findmnt -rn -o TARGET | grep "^$prefix/" | sort -r | while read -r m; do umount -l "$m"; done
rm -rf "$prefix"
install -d -m 0755 "$prefix"
make -C "$src" --no-print-directory -s B="build-check-$(basename "$prefix")" PREFIX="$prefix" SYSCONFDIR="$prefix/etc" \
	LOCALSTATEDIR="$prefix/var" LIBEXECDIR="$prefix/libexec" RUNSTATEDIR="$prefix/run" ${SBX_MAKEFLAGS:-} install >/dev/null
# For tests/escape: the attacker programs, and the test-only helper with
# pause points (never part of an install), setuid under its own name.
build="$src/build-check-$(basename "$prefix")"
make -C "$src" --no-print-directory -s B="build-check-$(basename "$prefix")" PREFIX="$prefix" SYSCONFDIR="$prefix/etc" \
	LOCALSTATEDIR="$prefix/var" LIBEXECDIR="$prefix/libexec" RUNSTATEDIR="$prefix/run" ${SBX_MAKEFLAGS:-} escape-bins >/dev/null
install -o root -g sbx -m 4754 "$build/sbx-helper-hooked" "$prefix/libexec/sbx/sbx-helper-hooked"
install -o root -g root -m 0755 "$build/sbx-recorder-hooked" "$prefix/libexec/sbx/sbx-recorder-hooked"
install -o root -g root -m 0711 "$build/sbx-collector-hooked" "$prefix/libexec/sbx/sbx-collector-hooked"
install -d -m 0755 "$prefix/lib/sbx-escape"
# RUNSTATEDIR (/run on a real host): the run slots live in sbx/users below it
install -d -m 0755 "$prefix/run"
for f in "$build"/tests/escape/*; do install -m 0755 "$f" "$prefix/lib/sbx-escape/"; done

# sbxtest: in group sbx (may run code); sbxtest2: a second user in group
# sbx (another user's runs, escape 26; the user who must not reach
# sbxtest's live sessions, 80-live-session.t); sbxout: not in group sbx;
# sbxpg: runs the egress tests' servers (PostgreSQL, listeners), not in
# group sbx.
for u in sbxtest sbxtest2 sbxout sbxpg; do
	getent passwd $u >/dev/null || useradd --no-create-home --home-dir /nonexistent --shell /bin/sh $u
done
usermod -a -G sbx sbxtest
usermod -a -G sbx sbxtest2
# where lib.sh keeps every result JSON the suite produces (59-result-schema.t)
rm -rf "$prefix/results"
install -d -m 0755 "$prefix/results"
