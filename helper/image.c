/* SPDX-License-Identifier: ISC */
/*
 * A policy's image (`image = NAME`, sbx.policy(5); built by sbx-image(8)):
 * the sandbox's /usr, /bin, /sbin, /lib* and /etc pieces come from it
 * instead of the host.
 *
 * As root, in the supervisor, image_open does no more than this: walk to
 * SBX_IMAGES_DIR/NAME/{root,stamp,image.erofs} as it walks to a policy
 * (root-owned, not writable by others, no symlink followed); clone the
 * mount on root/ (open_tree(2)); and check, without reading the image,
 * that image.erofs is the file sbx-image hashed (its stamp: inode, size,
 * modification and change times) and that the clone is that file's erofs
 * on a read-only loop device (sbx_image_check_mount). The kernel parses
 * the image; root code reads a 300-byte stamp. A change to the file fails
 * the next run; nothing is hashed per run, so the check costs microseconds
 * (docs/images.md "Why a stamp and not a hash per run").
 *
 * In the sandbox child, which holds capabilities only in its own user
 * namespace, image_bind attaches the clone below the new root, binds the
 * system paths out of it (resolved inside the image: RESOLVE_IN_ROOT) and
 * detaches it again before pivot_root.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bsd/string.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "fdio.h"
#include "helper.h"
#include "imgstamp.h"

/* Always from the image when it has them (the dynamic linker, its cache,
 * the interpreter and its libraries); a policy's ro entries below these or
 * below /etc come from the image too. */
static const char *const system_paths[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ssl",
};
/* Covered by the binds above: a ro entry below one is already visible. */
static const char *const covered[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

static bool below(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool image_provides(const struct run *r, const char *path)
{
	if (r->policy.image[0] == '\0')
		return false;
	if (below(path, "/etc"))
		return true;
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++)
		if (below(path, covered[i]))
			return true;
	return false;
}

void image_close(struct run *r)
{
	if (r->image_tree >= 0)
		close(r->image_tree);
	r->image_tree = -1;
}

static int read_stamp(const char *path, struct sbx_image_stamp *s, char *err, size_t errlen)
{
	char buf[SBX_IMAGE_STAMP_MAX + 1], why[128];
	int fd = open_trusted(path, err, errlen);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = sbx_read_full(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || (size_t)n > SBX_IMAGE_STAMP_MAX) {
		snprintf(err, errlen, "%.160s: %s", path, n < 0 ? strerror(errno) : "too large");
		return -1;
	}
	if (sbx_image_stamp_parse(buf, (size_t)n, s, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%.160s: %.90s", path, why);
		return -1;
	}
	return 0;
}

int image_open(struct run *r, char *err, size_t errlen)
{
	const char *name = r->policy.image;
	char path[PATH_MAX], e[256], why[160];
	struct sbx_image_stamp s;
	struct stat st;
	int root, tree = -1, file;

	r->image_tree = -1;
	if (name[0] == '\0')
		return 0;
	snprintf(path, sizeof(path), "%s/%s/%s", SBX_IMAGES_DIR, name, SBX_IMAGE_MOUNT);
	root = open_trusted_dir(path, e, sizeof(e));
	if (root == -2) {
		snprintf(err, errlen, "image '%s' of policy '%s' does not exist (sbx-image ls lists the images)",
			 name, r->policy.name);
		return -1;
	}
	if (root < 0) {
		snprintf(err, errlen, "image '%s': %s", name, e);
		return -1;
	}
	/* the clone first: everything checked below vouches for it */
	tree = (int)syscall(SYS_open_tree, root, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) {
		snprintf(err, errlen, "image '%s': cannot clone its mount: %s", name, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s/%s", SBX_IMAGES_DIR, name, SBX_IMAGE_STAMP);
	if (read_stamp(path, &s, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "image '%s': %s", name, e);
		goto fail;
	}
	if (strcmp(s.name, name) != 0) {
		snprintf(err, errlen, "image '%s': its stamp is image '%s''s (directories renamed by hand?)", name,
			 s.name);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s/%s", SBX_IMAGES_DIR, name, SBX_IMAGE_FILE);
	file = open_trusted(path, e, sizeof(e));
	if (file < 0) {
		snprintf(err, errlen, "image '%s': %s", name, e);
		goto fail;
	}
	if (fstat(file, &st) < 0) {
		snprintf(err, errlen, "image '%s': %s: %s", name, path, strerror(errno));
		close(file);
		goto fail;
	}
	close(file);
	if (!sbx_image_stamp_matches(&s, &st, why, sizeof(why))) {
		snprintf(err, errlen, "image '%s' was modified after it was built (%s: %s); "
			 "sbx-image verify %s says whether its contents changed", name, SBX_IMAGE_FILE, why, name);
		goto fail;
	}
	if (!sbx_image_check_mount(root, &st, &s, why, sizeof(why))) {
		snprintf(err, errlen, "image '%s' is not mounted as sbx-image mounts it (%s): run sbx-image mount %s",
			 name, why, name);
		goto fail;
	}
	/* add flags only (an erofs is read-only whatever a remount says);
	 * private, so nothing mounted in the sandbox propagates anywhere */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				  .propagation = MS_PRIVATE};
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		snprintf(err, errlen, "image '%s': cannot set ro,nosuid,nodev on its mount: %s", name, strerror(errno));
		goto fail;
	}
	close(root);
	r->image_tree = tree;
	strlcpy(r->image_digest, s.digest, sizeof(r->image_digest));
	return 0;
fail:
	if (tree >= 0)
		close(tree);
	close(root);
	return -1;
}

/* One path out of the image (imgroot) into newroot: a directory or file
 * bound, a symlink copied; one the image lacks is skipped. */
static int bind_one(int imgroot, const char *newroot, const char *path, char *err, size_t errlen)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	char dst[PATH_MAX], link[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	int fd, t;

	fd = (int)syscall(SYS_openat2, imgroot, path + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		goto fail;
	snprintf(dst, sizeof(dst), "%s%s", newroot, path);
	if (S_ISLNK(st.st_mode)) {
		/* merged /usr: /lib -> usr/lib, kept as the image has it */
		ssize_t n = readlinkat(fd, "", link, sizeof(link) - 1);
		if (n < 0)
			goto fail;
		link[n] = '\0';
		strlcpy(parent, path, sizeof(parent));
		*strrchr(parent, '/') = '\0';
		if (parent[0] && make_path(parent, false, err, errlen) < 0) {
			close(fd);
			return -1;
		}
		if (symlink(link, dst) < 0 && errno != EEXIST)
			goto fail;
		close(fd);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "mounts: %s in the image is not a directory or regular file", path);
		close(fd);
		return -1;
	}
	if (make_path(path, !S_ISDIR(st.st_mode), err, errlen) < 0) {
		close(fd);
		return -1;
	}
	t = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0 || syscall(SYS_move_mount, t, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		if (t >= 0)
			close(t);
		goto fail;
	}
	close(t);
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "mounts: %s from the image: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

int image_bind(const struct run *r, const char *newroot, char *err, size_t errlen)
{
	const struct sbx_policy *p = &r->policy;
	char stage[PATH_MAX];
	int imgroot, rc = 0;

	if (r->image_tree < 0)
		return 0;
	/* attached below the new root only while we bind out of it */
	snprintf(stage, sizeof(stage), "%s/.sbx-image", newroot);
	if (mkdir(stage, 0700) < 0 ||
	    syscall(SYS_move_mount, r->image_tree, "", AT_FDCWD, stage, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		snprintf(err, errlen, "mounts: image '%s': %s", p->image, strerror(errno));
		return -1;
	}
	/* r->image_tree stays open: the sandbox closes it with the other
	 * run_extra_fds once the mounts are made */
	imgroot = open(stage, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (imgroot < 0) {
		snprintf(err, errlen, "mounts: image '%s': %s", p->image, strerror(errno));
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(system_paths) / sizeof(system_paths[0]); i++)
		rc = bind_one(imgroot, newroot, system_paths[i], err, errlen);
	/* the policy's /etc pieces (matplotlibrc, fonts...), from the image */
	for (size_t i = 0; rc == 0 && i < p->n_ro; i++) {
		bool dup = false;
		if (!below(p->ro[i], "/etc"))
			continue;
		for (size_t j = 0; j < sizeof(system_paths) / sizeof(system_paths[0]); j++)
			dup = dup || strcmp(p->ro[i], system_paths[j]) == 0;
		if (!dup)
			rc = bind_one(imgroot, newroot, p->ro[i], err, errlen);
	}
	close(imgroot);
	if (rc == 0 && (umount2(stage, MNT_DETACH) < 0 || rmdir(stage) < 0)) {
		snprintf(err, errlen, "mounts: detaching image '%s': %s", p->image, strerror(errno));
		rc = -1;
	}
	return rc;
}
