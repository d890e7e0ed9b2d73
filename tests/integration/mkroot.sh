#!/bin/sh
# SPDX-License-Identifier: ISC
# mkroot.sh DIR [PACKAGE...]: a fresh Debian 12 root in DIR made with
# mmdebstrap (variant minbase plus PACKAGEs), for the tests that install
# the packages or follow the README as a new user would (52-deb-upgrade,
# 58-fresh-debian). The first call with a given package list keeps a
# tarball in $SBX_ROOT_CACHE (default /var/cache/sbx-tests; a week at most)
# so later tests and runs unpack it instead of downloading again.
#
# mkroot.sh --enter DIR: bind /proc, /sys (with /sys/fs/cgroup), /dev and
# DIR itself (so that pivot_root(2) inside works: the root must be a mount
# point) for chroot DIR; mkroot.sh --leave DIR undoes it (lazily, whatever
# is still mounted). Both idempotent.
#
# mkroot.sh --run DIR CMD...: run CMD with DIR as its root after --enter.
# Not chroot(2): a chrooted process may not create user namespaces
# (clone(2), EPERM), so sandboxes could not start. CMD gets a private mount
# namespace whose root is DIR (pivot_root(2), as container managers do),
# with the mounts --enter made.
set -eu
case ${1:-} in
--run)
	r=$2
	shift 2
	exec unshare --mount --propagation private sh -c '
		cd "$1" && mkdir -p .oldroot && pivot_root . .oldroot && cd / && umount -l /.oldroot &&
		shift && exec "$@"' _ "$r" "$@" ;;
--enter)
	r=$2
	mountpoint -q "$r" || mount --bind "$r" "$r"
	for d in proc sys dev; do
		mkdir -p "$r/$d"
		mountpoint -q "$r/$d" || mount --rbind "/$d" "$r/$d"
		mount --make-rslave "$r/$d"
	done
	exit 0 ;;
--leave)
	r=$2
	for d in dev sys proc; do mountpoint -q "$r/$d" && umount -R -l "$r/$d"; done
	mountpoint -q "$r" && umount -l "$r"
	exit 0 ;;
esac
dir=${1:?usage: mkroot.sh DIR [PACKAGE...] | --enter DIR | --leave DIR}
shift
pkgs=$(printf '%s\n' "$@" | sort -u | tr '\n' ',' | sed 's/,$//')
cache=${SBX_ROOT_CACHE:-/var/cache/sbx-tests}
key=$(printf 'bookworm minbase %s' "$pkgs" | sha256sum | cut -c1-16)
tarball=$cache/root-$key.tar
mkdir -p "$cache" "$dir"
exec 8>"$cache/lock"
flock 8
find "$cache" -name 'root-*.tar' -mtime +7 -delete
if [ ! -s "$tarball" ]; then
	mmdebstrap --variant=minbase ${pkgs:+--include="$pkgs"} --aptopt='Acquire::Languages "none"' \
		--quiet bookworm "$cache/new-$key.tar" >&2
	mv "$cache/new-$key.tar" "$tarball"
fi
tar -C "$dir" -xf "$tarball"
