#!/bin/sh
# SPDX-License-Identifier: ISC
# Running code with `image = NAME`: the image's /usr, not the host's (a
# module only the image has imports, one only the host has does not); what
# the sandbox sees of it; and every way the image can be wrong, each refused
# at the next run with one line and audited: a byte changed, the file's
# times touched (until sbx-image verify), not mounted, missing, renamed,
# writable by others, owned by a user, reached through a symlink (sbx-image
# rm of an image in use: the end of 72, so that 72 reuses this image).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-image.sh"
plan 40

check "precondition: the host has numpy" /usr/bin/python3 -c 'import numpy'
check "precondition: the host has no tabulate" sh -c "! /usr/bin/python3 -c 'import tabulate' 2>/dev/null"
ensure_image tiny
check "the test image is there" [ -d "$STORE/tiny/root/usr" ]
img_policy tiny tiny
dig=$(img_digest tiny)

# --- sbx policies says which policy runs with which image -----------------
sbx_run policies
check "sbx policies: a line naming the policy's image" grep -Eq "^ +image: tiny \(sbx-image show tiny lists its packages\)$" "$T/out"
sbx_run policies --json
check "sbx policies --json: image tiny, and null for the host's /usr" python3 -c '
import json, sys
p = {o["name"]: o for o in json.load(open(sys.argv[1]))}
assert p["tiny"]["image"] == "tiny" and p["default"]["image"] is None, p' "$T/out"

# --- the image's stack, not the host's ----------------------------------
sbx_run run --policy tiny -c 'import tabulate; print(tabulate.__version__)'
check "a module only the image has imports" sh -c "[ $rc = 0 ] && grep -Eq '^[0-9]+\\.[0-9]' '$T/out'"
sbx_run run --policy tiny -c 'import numpy'
check "a module only the host has does not" sh -c "[ $rc = 1 ] && grep -q \"ModuleNotFoundError: No module named 'numpy'\" '$T/err'"
check "... the hint names the image and the package to rebuild it with" \
	grep -q "^sbx: hint: the module 'numpy' is not in the image 'tiny' this policy runs with.*Debian package python3-numpy added to its --packages (sbx-image show tiny" "$T/err"
sbx_run run -c 'import numpy, sys; print("host ok")'
check "without the image key the host's /usr, as before" sh -c "[ $rc = 0 ] && grep -q 'host ok' '$T/out'"
sbx_run run -c 'import tabulate'
check "... where tabulate is missing" [ "$rc" = 1 ]
check "... and the hint speaks of the host's Python, not an image" sh -c "grep -q \"^sbx: hint: the module 'tabulate' is not installed in the sandbox\" '$T/err' && ! grep -q 'image' '$T/err'"

cat >"$T/probe.py" <<'PY'
import hashlib, os
mounts = {}
for line in open("/proc/self/mountinfo"):
    f = line.split()
    mounts[f[4]] = (f[f.index("-") + 1], f[5])
print("usr", *mounts.get("/usr", ("none", "")))
try:
    open("/usr/sbx-write-test", "w")
    print("write ok")
except OSError as e:
    print("write", e.strerror)
print("stage", os.path.exists("/.sbx-image"))
print("ldcache", hashlib.sha256(open("/etc/ld.so.cache", "rb").read()).hexdigest())
print("lib", os.readlink("/lib") if os.path.islink("/lib") else "dir")
PY
cp "$T/probe.py" "$T/probe-in.py"; chmod 0644 "$T/probe-in.py"
sbx_run run --policy tiny "$T/probe-in.py"
diag "$(cat "$T/out" "$T/err")"
check "the sandbox's /usr is the image's erofs, read-only" grep -Eq '^usr erofs ro,' "$T/out"
check "writing to it fails (read-only file system)" grep -q '^write Read-only file system' "$T/out"
check "the staging mount is gone before the code runs" grep -q '^stage False' "$T/out"
check "/etc/ld.so.cache is the image's" grep -q "^ldcache $(sha256sum <"$STORE/tiny/root/etc/ld.so.cache" | cut -d' ' -f1)" "$T/out"
check "/lib is the image's merged-/usr symlink" grep -q '^lib usr/lib' "$T/out"
sbx_run run --policy tiny --dry-run -c 'print(1)'
check "--dry-run names the image and its digest" grep -q "^image: tiny $dig " "$T/out"

# --- a byte changed in the image is refused at the next run -------------
f=$STORE/tiny/image.erofs
cp "$f" "$T/image.orig"
printf 'X' | dd of="$f" bs=1 seek=4096000 conv=notrunc 2>/dev/null
sbx_run run --policy tiny -c 'print("ran")'
diag "$(cat "$T/err")"
check "a changed byte: refused (125), nothing ran" sh -c "[ $rc = 125 ] && [ ! -s '$T/out' ]"
check "... one line naming the image and what changed" sh -c "[ \$(wc -l <'$T/err') = 1 ] && grep -q \"image 'tiny' was modified after it was built (image.erofs: written to at \" '$T/err'"
sbx_run run --json --policy tiny -c 'print("ran")'
msg=$(jget error.message)
check "... the result says so too" sh -c "[ $rc = 125 ] && echo \"\$1\" | grep -q \"image 'tiny' was modified\"" _ "$msg"
id=$(jget id)
check "... and audited as sandbox_error with that reason" sh -c "'$AUDIT' show '$id' | grep -q \"image 'tiny' was modified\""
img ls
check "ls: modified" sh -c "awk '\$1 == \"tiny\" { print \$2 }' '$T/img.out' | grep -qx modified"
img verify tiny
check "verify: the contents changed (exit 6)" sh -c "[ $rc = 6 ] && grep -q 'tiny: modified: image.erofs has SHA-256' '$T/img.err'"
img mount tiny
check "mount refuses it too (exit 6)" [ "$rc" = 6 ]
# the same bytes again, new times: still refused until verify renews the stamp
cat "$T/image.orig" >"$f"
sbx_run run --policy tiny -c 'print("ran")'
check "restored bytes, new times: still refused" sh -c "[ $rc = 125 ] && grep -q 'was modified' '$T/err'"
img verify tiny
check "verify: ok, stamp renewed" sh -c "[ $rc = 0 ] && grep -q 'stamp renewed' '$T/img.out'"
sbx_run run --policy tiny -c 'import tabulate; print("ran")'
check "... and runs are accepted again" sh -c "[ $rc = 0 ] && grep -qx ran '$T/out'"
chmod 0664 "$f"
sbx_run run --policy tiny -c 'print(1)'
check "image.erofs writable by its group: refused" sh -c "[ $rc = 125 ] && grep -q 'must be owned by root and not writable by group or others' '$T/err'"
chmod 0644 "$f"
sbx_run run --policy tiny -c 'print(1)'
check "... mode back, but the change time moved: refused" sh -c "[ $rc = 125 ] && grep -q 'its inode changed at' '$T/err'"
img verify tiny
check "... verify renews it" [ "$rc" = 0 ]

# --- not mounted (after a reboot), missing, renamed, symlinked, not root's
umount "$STORE/tiny/root"
img ls
check "ls: not mounted" sh -c "awk '\$1 == \"tiny\"' '$T/img.out' | grep -q 'not mounted'"
sbx_run run --policy tiny -c 'print(1)'
check "not mounted: refused, says to run sbx-image mount" sh -c "[ $rc = 125 ] && grep -q \"image 'tiny' is not mounted as sbx-image mounts it (it is not mounted): run sbx-image mount tiny\" '$T/err'"
img mount --all
sbx_run run --policy tiny -c 'print("ran")'
check "mount --all: runs again" sh -c "[ $rc = 0 ] && grep -qx ran '$T/out'"
img mount tiny
check "mount of a mounted image: nothing to do, exit 0" sh -c "[ $rc = 0 ] && [ \$(findmnt -rn -o TARGET | grep -c '^$STORE/tiny/root\$') = 1 ]"

img_policy ghost nosuchimage
sbx_run run --policy ghost -c 'print(1)'
check "an image that does not exist: refused, one line" sh -c "[ $rc = 125 ] && [ \$(wc -l <'$T/err') = 1 ] && grep -q \"image 'nosuchimage' of policy 'ghost' does not exist\" '$T/err'"
rm -f "$POLICIES/ghost.policy"

mv "$STORE/tiny" "$STORE/other"
img_policy other other
sbx_run run --policy other -c 'print(1)'
check "an image directory renamed by hand: refused (its stamp names another)" sh -c "[ $rc = 125 ] && grep -q \"its stamp is image 'tiny'\" '$T/err'"
mv "$STORE/other" "$STORE/tiny"
rm -f "$POLICIES/other.policy"

ln -s tiny "$STORE/alias"
img_policy alias alias
sbx_run run --policy alias -c 'print(1)'
check "an image reached through a symlink: refused" sh -c "[ $rc = 125 ] && grep -q 'symlinks are not followed' '$T/err'"
rm -f "$STORE/alias" "$POLICIES/alias.policy"

chown sbxtest "$STORE/tiny"
sbx_run run --policy tiny -c 'print(1)'
check "an image directory owned by a user: refused" sh -c "[ $rc = 125 ] && grep -q 'directory must be owned by root and not writable by others' '$T/err'"
chown root "$STORE/tiny"
chmod 0775 "$STORE"
sbx_run run --policy tiny -c 'print(1)'
check "the images directory writable by its group: refused" sh -c "[ $rc = 125 ] && grep -q 'must be owned by root and not writable' '$T/err'"
chmod 0755 "$STORE"
sbx_run run --policy tiny -c 'print("ran")'
check "all put back: runs" sh -c "[ $rc = 0 ] && grep -qx ran '$T/out'"

rm -f "$POLICIES/tiny.policy"

finish
