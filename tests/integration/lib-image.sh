# SPDX-License-Identifier: ISC
# Shared by the image tests (tests/integration/70-74, sourced after lib.sh).
# The test image: the Essential:yes set, python3-minimal and python3-tabulate
# (pure Python, not on a host that tools/install-deps set up, so a module
# the host lacks), and no numpy (which the host has). Downloaded packages
# are kept in the source tree's build-image-cache/, shared by the normal and
# the sanitizer build, so only the first run of the suite downloads them.
IMG=$P/sbin/sbx-image
STORE=$P/var/lib/sbx-images
POLICIES=$P/etc/sbx/policies.d
IMG_CACHE=${SBX_IMAGE_CACHE:-${SBX_SRCDIR:?}/build-image-cache}
TEST_PKGS=python3-minimal,python3-tabulate
mkdir -p "$IMG_CACHE"

# img NAME ARGS...: sbx-image, stdout to $T/img.out, stderr to $T/img.err, status in $rc
img() { "$IMG" "$@" >"$T/img.out" 2>"$T/img.err"; rc=$?; }
# img_build NAME [ARGS...]: build the test image under NAME
img_build() {
	img_name=$1; shift
	img_t0=$(date +%s)
	img build "$img_name" --packages "$TEST_PKGS" --cache "$IMG_CACHE" "$@"
	diag "sbx-image build $img_name: exit $rc in $(($(date +%s) - img_t0)) s"
}
# img_digest NAME: the digest sbx-image recorded for NAME
img_digest() { sed -n 's/^digest //p' "$STORE/$1/stamp"; }
# ensure_image NAME: build NAME unless an intact one is there (an earlier test's)
ensure_image() {
	if [ "$("$IMG" ls 2>/dev/null | awk -v n="$1" '$1 == n { print $2 }')" != ok ]; then
		img_build "$1"
		[ "$rc" = 0 ] || { diag "$(cat "$T/img.err")"; return 1; }
	fi
}
# img_policy POLICY IMAGE: the default policy, with image = IMAGE
img_policy() {
	sed "s/^\[filesystem\]/[filesystem]\nimage = $2/" "$POLICIES/default.policy" >"$POLICIES/$1.policy"
	chmod 0644 "$POLICIES/$1.policy"
}
# The docs' reference recomputation of the digest (docs/image-digest.md),
# run as written there.
doc_digest() {
	sed -n '/^```python$/,/^```$/p' "$SBX_SRCDIR/docs/image-digest.md" | sed '1d;$d' >"$T/imgdigest.py"
	python3 "$T/imgdigest.py" "$1"
}
