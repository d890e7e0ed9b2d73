/* SPDX-License-Identifier: ISC */
/*
 * --workspace (sbx(1) WORKSPACES, docs/workspace.md): /work is an overlay
 * whose lower layer is the caller's directory, read-only, and whose upper
 * layer is a tmpfs of the policy's workspace_size. The payload sees the
 * directory read-write; nothing it does reaches the disk. After the
 * sandbox is dead the collector (the caller's uid, changeset.c) reads the
 * upper layer and writes the changeset.
 *
 * Root's part is check_workspace: the client opened the directory as the
 * caller and passed the fd; root checks it is a directory and clones its
 * mount (open_tree(2), as check_work does for --session) read-only,
 * nosuid, nodev and private, without resolving any path in it. Everything
 * else happens in the sandbox child, as the caller, inside the sandbox's
 * own user and mount namespaces: the overlay is an unprivileged mount
 * there (overlayfs FS_USERNS_MOUNT, Linux >= 5.11), with "userxattr" so
 * that its private xattrs are user.overlay.* (trusted.* needs
 * CAP_SYS_ADMIN in the initial user namespace; Documentation/filesystems/
 * overlayfs.rst). overlayfs keeps private clones of its layers
 * (clone_private_mount), so the staging mounts are detached once it is
 * mounted: the payload can reach neither layer, only the overlay.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#include "helper.h"

/* staging, in the new root before pivot_root; gone before the payload runs */
#define WS_STAGE "/.sbx-ws"

int sandbox_ws_upper = -1;

int check_workspace(struct run *r, char *err, size_t errlen)
{
	struct statx sx;
	int t;

	if (r->ws_fd < 0)
		return 0;
	if (!r->policy.workspaces) {
		snprintf(err, errlen, "policy '%s' does not allow workspaces (workspaces = no)", r->policy.name);
		return -1;
	}
	/* the inode cache only: a FUSE daemon is not asked (inputs.c) */
	if (statx(r->ws_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_UID | STATX_INO, &sx) < 0) {
		snprintf(err, errlen, "--workspace-fd: %s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sx.stx_mode)) {
		snprintf(err, errlen, "--workspace-fd: the workspace is not a directory");
		return -1;
	}
	/* what START binds: which directory was the lower layer */
	r->ws_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	r->ws_ino = sx.stx_ino;
	if (statx(r->cs_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_UID, &sx) < 0 ||
	    !S_ISDIR(sx.stx_mode) || sx.stx_uid != r->uid) {
		snprintf(err, errlen, "--changeset-fd: not a directory of yours");
		return -1;
	}
	t = (int)syscall(SYS_open_tree, r->ws_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0) {
		snprintf(err, errlen, "--workspace-fd: cannot clone the workspace's mount: %s", strerror(errno));
		return -1;
	}
	/* flags only ever added (attr_clr = 0); read-only: the lower layer */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				  .propagation = MS_PRIVATE};
	if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		snprintf(err, errlen, "--workspace-fd: cannot make the workspace's mount read-only: %s",
			 strerror(errno));
		close(t);
		return -1;
	}
	r->ws_tree = t;
	return 0;
}

static int stage_fail(char *err, size_t errlen, const char *what)
{
	int e = errno;

	if (e == EINVAL || e == ENODEV || e == EPERM)
		snprintf(err, errlen, "workspace: this kernel cannot mount an overlay in a user namespace (%s: %s; "
			 "Linux >= 5.11 with overlayfs is needed, docs/workspace.md)", what, strerror(e));
	else
		snprintf(err, errlen, "workspace: %s: %s", what, strerror(e));
	return -1;
}

/* In the sandbox child, as the caller with capabilities in its own user
 * namespace only; root is the new root's path (before pivot_root). */
int mount_workspace(const struct run *r, const char *root, int *upper, char *err, size_t errlen)
{
	char stage[64], lower[80], up[80], work[80], dir[80];
	char opts[3 * 80 + 64], tmpopts[128];
	struct statfs sf;

	*upper = -1;
	if (r->ws_tree < 0)
		return 0;
	if (fstatfs(r->ws_tree, &sf) < 0 || !session_fs((long)sf.f_type)) {
		snprintf(err, errlen, "workspace is not on a disk, network or tmpfs filesystem: refused");
		return -1;
	}
	if (strlen(root) + sizeof(WS_STAGE) > sizeof(stage)) {
		snprintf(err, errlen, "workspace: new root path too long");
		return -1;
	}
	snprintf(stage, sizeof(stage), "%s" WS_STAGE, root);
	snprintf(lower, sizeof(lower), "%s/lower", stage);
	snprintf(up, sizeof(up), "%s/up/upper", stage);
	snprintf(work, sizeof(work), "%s/up/work", stage);
	snprintf(dir, sizeof(dir), "%s/work", root);
	/* the upper layer's pages count against the run's memory limit too
	 * (the child is in its cgroup) */
	snprintf(tmpopts, sizeof(tmpopts), "mode=0700,uid=%u,gid=%u,size=%llu,nr_inodes=%llu", (unsigned)r->uid,
		 (unsigned)r->gid, (unsigned long long)r->limits.workspace_bytes,
		 tmpfs_inodes(r->limits.workspace_bytes));
	if (mkdir(stage, 0700) < 0 || mkdir(lower, 0700) < 0)
		return stage_fail(err, errlen, "staging directory");
	snprintf(up, sizeof(up), "%s/up", stage);
	if (mkdir(up, 0700) < 0 || mount("tmpfs", up, "tmpfs", MS_NOSUID | MS_NODEV, tmpopts) < 0)
		return stage_fail(err, errlen, "upper tmpfs");
	snprintf(up, sizeof(up), "%s/up/upper", stage);
	if (mkdir(up, 0755) < 0 || mkdir(work, 0700) < 0 || mkdir(dir, 0755) < 0)
		return stage_fail(err, errlen, "upper directories");
	if (syscall(SYS_move_mount, r->ws_tree, "", AT_FDCWD, lower, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return stage_fail(err, errlen, "lower layer");
	/* userxattr: whiteouts and opaque directories as user.overlay.*;
	 * no redirect_dir, metacopy or index (their defaults, and refused
	 * with userxattr): a copied-up file is its whole content */
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, up, work);
	if (mount("overlay", dir, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
		return stage_fail(err, errlen, "overlay on /work");
	*upper = open(up, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*upper < 0)
		return stage_fail(err, errlen, "upper layer");
	snprintf(up, sizeof(up), "%s/up", stage);
	if (umount2(lower, MNT_DETACH) < 0 || umount2(up, MNT_DETACH) < 0 || rmdir(lower) < 0 || rmdir(up) < 0 ||
	    rmdir(stage) < 0)
		return stage_fail(err, errlen, "detaching the layers");
	return 0;
}
