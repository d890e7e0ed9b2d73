#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx-image build, ls, show, verify: a real image built with mmdebstrap
# from this host's apt sources; its layout; its digest recomputed
# independently (the Python program of docs/image-digest.md); a rebuild
# giving the same digest; and the bad inputs: names, packages, a package
# apt does not have, an interrupted build, a non-root caller.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-image.sh"
plan 41

# --- bad input, refused before anything is built ----------------------
img build 'Bad/Name' --packages python3-minimal
check "a bad image name: exit 2" [ "$rc" = 2 ]
check "... one line naming the rule" sh -c "[ \$(wc -l <'$T/img.err') = 1 ] && grep -q \"'Bad/Name' is not an image name: \\[a-z0-9\\]\" '$T/img.err'"
img build ok --packages 'python3;rm -rf /'
check "a bad package name: exit 2, one line" sh -c "[ $rc = 2 ] && [ \$(wc -l <'$T/img.err') = 1 ] && grep -q 'is not a Debian package name' '$T/img.err'"
img build ok
check "no --packages: exit 2" [ "$rc" = 2 ]
run_as sbxtest "$IMG" ls >"$T/out" 2>"$T/err"; urc=$?
check "not root: exit 2, says so" sh -c "[ $urc = 2 ] && grep -q 'must be run as root' '$T/err'"
img frobnicate
check "an unknown command: exit 2" [ "$rc" = 2 ]
env PATH=/nonexistent "$IMG" build nommdeb --packages python3-minimal >"$T/out" 2>"$T/err"; mrc=$?
check "mmdebstrap not installed: exit 1, one line saying which package to install" \
	sh -c "[ $mrc = 1 ] && [ \$(wc -l <'$T/err') = 1 ] && grep -q 'mmdebstrap is not installed (apt install mmdebstrap)' '$T/err'"
img show nosuch
check "show of no such image: exit 3" [ "$rc" = 3 ]
check "none of them left an image or a working directory" sh -c "! ls -d '$STORE'/ok '$STORE'/.build-* 2>/dev/null"

# --- a build -----------------------------------------------------------
img_build tiny
check "build: exit 0" [ "$rc" = 0 ]
diag "$(tail -3 "$T/img.err")"
d=$STORE/tiny
check "the image directory is root's, 0755" [ "$(stat -c '%u %a' "$d")" = "0 755" ]
check "image.erofs, stamp, manifest, tree: root's, 0644" sh -c "for f in image.erofs stamp manifest tree; do [ \"\$(stat -c '%u %a' $d/\$f)\" = '0 644' ] || exit 1; done"
check "mounted read-only as erofs from a loop device" sh -c "findmnt -n -o FSTYPE,OPTIONS,SOURCE '$d/root' | grep -Eq '^erofs +ro,.*nosuid.*nodev.* /dev/loop'"
check "no working directory left in the store" sh -c "! ls -d '$STORE'/.build-* 2>/dev/null"
dig=$(img_digest tiny)
check "the stamp's digest is sha256:64 hex" sh -c "echo '$dig' | grep -Eq '^sha256:[0-9a-f]{64}$'"
check "the Python reference recomputes the same digest" [ "$(doc_digest "$d/root")" = "$dig" ]
check "... which is the SHA-256 of the kept listing" [ "sha256:$(sha256sum <"$d/tree" | cut -d' ' -f1)" = "$dig" ]
check "the listing starts with its header and lists /" sh -c "head -2 '$d/tree' | tr '\n' '|' | grep -q '^sbx-image-tree 1|d 0755 0 0 /|$'"
check "the manifest's File-SHA256 is the file's" [ "$(sed -n 's/^File-SHA256: //p' "$d/manifest")" = "$(sha256sum <"$d/image.erofs" | cut -d' ' -f1)" ]
check "no device node, no host resolv.conf or hostname in the image" sh -c "[ -z \"\$(ls -A '$d/root/dev')\" ] && [ ! -e '$d/root/etc/resolv.conf' ] && [ ! -e '$d/root/etc/hostname' ]"
check "no man pages, copyrights kept" sh -c "[ -z \"\$(find '$d/root/usr/share/man' -type f 2>/dev/null | head -1)\" ] && [ -f '$d/root/usr/share/doc/python3-tabulate/copyright' ]"

img ls
check "ls: tiny, ok, with its digest" sh -c "awk '\$1 == \"tiny\" && \$2 == \"ok\"' '$T/img.out' | grep -q '$dig'"
check "ls: the package count of the manifest" sh -c "awk '\$1 == \"tiny\" { print \$4 }' '$T/img.out' | grep -qx \"\$(sed -n 's/^Packages: //p' '$d/manifest')\""
img show tiny
check "show: every package with its version" sh -c "grep -Eq '^python3-tabulate	[^	]+	all$' '$T/img.out' && grep -Eq '^python3.11-minimal	3\\.11' '$T/img.out'"
n_pk=$(grep -c '	' "$T/img.out")
check "show: as many package lines as 'Packages:' says" [ "$n_pk" = "$(sed -n 's/^Packages: //p' "$T/img.out")" ]
check "show: the digest and the packages asked for" sh -c "grep -qx 'Digest: $dig' '$T/img.out' && grep -qx 'Requested: python3-minimal python3-tabulate' '$T/img.out'"
run_as sbxtest "$IMG" show tiny >"$T/out" 2>&1
check "show works for other users" grep -qx "Digest: $dig" "$T/out"
img verify tiny
check "verify: ok" sh -c "[ $rc = 0 ] && grep -q '^tiny: ok, $dig' '$T/img.out'"

# --- reproducibility: a rebuild with the same package versions ---------
ino1=$(stat -c %i "$d/image.erofs")
img_build tiny
check "rebuild: exit 0" [ "$rc" = 0 ]
check "rebuild: a new image file replaced the old" [ "$(stat -c %i "$d/image.erofs")" != "$ino1" ]
dig2=$(img_digest tiny)
diag "digests: $dig $dig2"
check "rebuild: the same digest" [ "$dig2" = "$dig" ]
check "rebuild: the old image's loop device is gone" sh -c "! losetup -a | grep -q ':$ino1 '"

# --- a package apt does not have ---------------------------------------
img build nopkg --packages python3-minimal,python3-no-such-package-sbx --cache "$IMG_CACHE"
diag "$(cat "$T/img.err")"
check "a package that does not exist: exit 5" [ "$rc" = 5 ]
check "... one line naming it" sh -c "[ \$(grep -c 'failed' '$T/img.err') = 1 ] && grep -q 'Unable to locate package python3-no-such-package-sbx' '$T/img.err'"
check "... and no image, no working directory" sh -c "[ ! -e '$STORE/nopkg' ] && ! ls -d '$STORE'/.build-* 2>/dev/null"

# --- an interrupted build: no half image is ever usable ------------------
"$IMG" build half --packages "$TEST_PKGS" --cache "$IMG_CACHE" >"$T/half.out" 2>"$T/half.err" &
pid=$!
i=0
while [ $i -lt 300 ] && ! pgrep -f "mmdebstrap.*build-half-" >/dev/null; do sleep 0.1; i=$((i + 1)); done
sleep 2
kill -INT $pid
wait $pid; hrc=$?
diag "$(cat "$T/half.err")"
check "interrupted build: exit 130 and says nothing was installed" sh -c "[ $hrc = 130 ] && grep -q 'interrupted.*nothing was installed' '$T/half.err'"
sleep 1
check "... no image, no working directory left" sh -c "[ ! -e '$STORE/half' ] && ! ls -d '$STORE'/.build-* 2>/dev/null"
check "... no mmdebstrap left running" sh -c "! pgrep -f '[m]mdebstrap.*build-half-' >/dev/null"
check "... no mount left from it" sh -c "! findmnt -rn -o TARGET | grep -q 'build-half-'"

# killed outright: the build stops with it, and the next sbx-image removes
# what it left
"$IMG" build killed --packages "$TEST_PKGS" --cache "$IMG_CACHE" >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 300 ] && ! pgrep -f "mmdebstrap.*build-killed-" >/dev/null; do sleep 0.1; i=$((i + 1)); done
sleep 2
kill -KILL $pid
wait $pid
i=0
while [ $i -lt 300 ] && pgrep -f "mmdebstrap.*build-killed-" >/dev/null; do sleep 0.1; i=$((i + 1)); done
check "killed build: mmdebstrap stopped with it" sh -c "! pgrep -f '[m]mdebstrap.*build-killed-' >/dev/null"
sleep 1
img ls
check "... the next sbx-image removes its working directory and says so" \
	sh -c "grep -q 'build-killed-.*left by an interrupted build' '$T/img.err' && ! ls -d '$STORE'/.build-* 2>/dev/null && [ ! -e '$STORE/killed' ]"

finish
