/* SPDX-License-Identifier: ISC */
/*
 * The caller's input files (/in) and session directory (/work). The client
 * opened them as the caller, so the caller's own permissions applied; the
 * helper only ever sees fds and never opens a path the caller names.
 *
 * The code and the inputs are sealed memfds (size and content fixed: F_SEAL_WRITE | SHRINK |
 * GROW), so a size checked here is the size copied later and nothing the
 * caller does can block this root process in read(2).
 *
 * The session directory is checked with statx(AT_STATX_DONT_SYNC), which
 * answers from the inode cache (a FUSE daemon is not asked, so it cannot
 * stall root here), then cloned as a detached mount (open_tree(2)) while we
 * are still in the caller's mount namespace, made private, nosuid and nodev
 * without clearing a flag it had (read-only stays read-only). The sandbox
 * child refuses kernel pseudo-filesystems and moves that
 * mount to /work (move_mount(2)) inside its own namespaces, as the caller:
 * no path inside the directory is ever resolved by root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/mount.h>

#include "helper.h"
#include "units.h"

#define SEALS_NEEDED (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

/* 0 when fd is a memfd sealed against writing, shrinking and growing
 * (F_GET_SEALS fails on anything but a memfd or shmem file), with its
 * size in *size; else -1 and what is wrong in *why. */
static int sealed_memfd(int fd, uint64_t *size, const char **why)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || seals < 0) {
		*why = "not a memfd";
		return -1;
	}
	if ((seals & SEALS_NEEDED) != SEALS_NEEDED) {
		*why = "memfd not sealed against writing, shrinking and growing";
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

int check_code(struct run *r, char *err, size_t errlen)
{
	const char *why;

	/* never read as root: the recorder hashes it, the sandbox copies it */
	if (sealed_memfd(r->code_fd, &r->code_len, &why) < 0) {
		snprintf(err, errlen, "--code-fd: %s", why);
		return -1;
	}
	if (r->code_len > SBX_CODE_MAX) {
		snprintf(err, errlen, "code larger than %u bytes", SBX_CODE_MAX);
		return -1;
	}
	r->code_checked = true;
	return 0;
}

int check_result_socket(const struct run *r, char *err, size_t errlen)
{
	int domain = 0, type = 0;
	socklen_t l1 = sizeof(domain), l2 = sizeof(type);

	if (getsockopt(r->result_fd, SOL_SOCKET, SO_DOMAIN, &domain, &l1) < 0 ||
	    getsockopt(r->result_fd, SOL_SOCKET, SO_TYPE, &type, &l2) < 0 || domain != AF_UNIX ||
	    type != SOCK_STREAM) {
		snprintf(err, errlen, "--result-fd: not an AF_UNIX SOCK_STREAM socket");
		return -1;
	}
	return 0;
}

int check_inputs(struct run *r, char *err, size_t errlen)
{
	uint64_t total = 0;

	for (size_t i = 0; i < r->n_inputs; i++) {
		struct run_input *in = &r->inputs[i];
		const char *why;

		if (sealed_memfd(in->fd, &in->size, &why) < 0) {
			snprintf(err, errlen, "--input-fd %d (%s): %s", in->fd, in->name, why);
			return -1;
		}
		/* a sparse memfd can claim any size: compare before adding, so
		 * the sum cannot wrap */
		if (in->size > r->limits.input_bytes - total) {
			total = UINT64_MAX;
			break;
		}
		total += in->size;
	}
	if (r->stdin_fd >= 0 && total != UINT64_MAX) {
		const char *why;

		if (sealed_memfd(r->stdin_fd, &r->stdin_size, &why) < 0) {
			snprintf(err, errlen, "--stdin-fd %d: %s", r->stdin_fd, why);
			return -1;
		}
		total = r->stdin_size > r->limits.input_bytes - total ? UINT64_MAX : total + r->stdin_size;
	}
	r->inputs_bytes = total;
	if (total > r->limits.input_bytes) {
		char a[32];

		sbx_format_size(r->limits.input_bytes, a, sizeof(a));
		snprintf(err, errlen, "input files%s: more than input_size %s (%llu bytes) of policy '%s'",
			 r->stdin_fd >= 0 ? " and standard input" : "", a, (unsigned long long)r->limits.input_bytes, r->policy.name);
		return -1;
	}
	return 0;
}

int check_work(struct run *r, char *err, size_t errlen)
{
	struct statx sx;
	int t;

	if (r->work_fd < 0)
		return 0;
	if (!r->policy.sessions) {
		snprintf(err, errlen, "policy '%s' does not allow sessions (sessions = no)", r->policy.name);
		return -1;
	}
	if (statx(r->work_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO,
		  &sx) < 0) {
		snprintf(err, errlen, "--work-fd: %s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sx.stx_mode)) {
		snprintf(err, errlen, "--work-fd: session is not a directory");
		return -1;
	}
	/* what START binds (issue 11, finding 6): the label is the caller's
	 * claim, the directory mounted at /work is this one */
	r->work_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	r->work_ino = sx.stx_ino;
	if (sx.stx_uid != r->uid) {
		snprintf(err, errlen, "--work-fd: session directory is owned by uid %u, not by you (uid %u)",
			 (unsigned)sx.stx_uid, (unsigned)r->uid);
		return -1;
	}
	if (sx.stx_mode & 022) {
		snprintf(err, errlen, "--work-fd: session directory is writable by group or others (mode %04o)",
			 (unsigned)(sx.stx_mode & 07777));
		return -1;
	}
	/* Only that one mount, not what is mounted below it (no AT_RECURSIVE).
	 * open_tree refuses a mount of another mount namespace. */
	t = (int)syscall(SYS_open_tree, r->work_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0) {
		snprintf(err, errlen, "--work-fd: cannot clone the session directory's mount: %s", strerror(errno));
		return -1;
	}
	/* Only ever add flags to the clone (attr_clr = 0): a read-only or
	 * noexec mount stays so; a remount would clear what it does not name.
	 * Private, so nothing mounted on the host side or in the sandbox
	 * propagates to the other. */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, .propagation = MS_PRIVATE};
	if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		snprintf(err, errlen, "--work-fd: cannot set nosuid,nodev on the session mount: %s", strerror(errno));
		close(t);
		return -1;
	}
	close(r->work_fd);
	r->work_fd = -1;
	r->work_tree = t;
	return 0;
}

/* Data, not kernel interfaces: a caller-owned /proc/PID directory would
 * hand the payload /proc/PID/root (the host's root) and friends. Checked in
 * the sandbox child, as the caller, because statfs(2) on a FUSE mount asks
 * its daemon, which may never answer; the supervisor can kill the child.
 * Magic numbers: statfs(2), <linux/magic.h>. */
bool session_fs(long type)
{
	/* Filesystems a caller's files live on. An allow-list: a user namespace
	 * can mount others (fsmount(2) gives a detached mount open_tree(2)
	 * accepts), and kernel pseudo-filesystems (proc, sysfs, bpf, cgroup...)
	 * would reach past the sandbox. */
	static const long allow[] = {
		EXT4_SUPER_MAGIC,  /* also ext2 and ext3 */
		XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, TMPFS_MAGIC, RAMFS_MAGIC, F2FS_SUPER_MAGIC,
		NFS_SUPER_MAGIC, OVERLAYFS_SUPER_MAGIC,
		0x2fc12fc1, /* zfs */
		0xca451a4e, /* bcachefs */
		0x3153464a, /* jfs */
		0xfe534d42, /* smb2 */
		0xff534d42, /* cifs */
		0x00c36400, /* ceph */
	};

	for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		if (type == allow[i])
			return true;
	return false;
}

/* The code and the inputs: sealed memfds (their size cannot change), so
 * what the recorder hashed is what is copied. In the sandbox child. */
int copy_memfd(int src, uint64_t size, const char *path)
{
	char buf[65536];
	uint64_t off = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = pread(src, buf, sizeof(buf), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || sbx_write_all(fd, buf, (size_t)n) < 0) {
			if (n == 0)
				errno = EIO;
			close(fd);
			return -1;
		}
		off += (uint64_t)n;
	}
	if (fchmod(fd, 0444) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* In the sandbox child, as the caller with capabilities in its user
 * namespace only. dir is the mount point's path in the new root. */
int mount_inputs(const struct run *r, const char *dir, char *err, size_t errlen)
{
	char opts[128], path[PATH_MAX];

	if (r->n_inputs == 0)
		return 0;
	/* room for the data plus a page per file of slack; pages count against
	 * the run's memory limit (the child is already in its cgroup) */
	snprintf(opts, sizeof(opts), "mode=0755,size=%llu,nr_inodes=%zu",
		 (unsigned long long)r->inputs_bytes + 4096ULL * (r->n_inputs + 1), r->n_inputs + 8);
	if (mkdir(dir, 0755) < 0 ||
	    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
		snprintf(err, errlen, "mounts: tmpfs on /in: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < r->n_inputs; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, r->inputs[i].name);
		if (copy_memfd(r->inputs[i].fd, r->inputs[i].size, path) < 0)
			goto fail;
	}
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(err, errlen, "mounts: /in read-only: %s", strerror(errno));
		return -1;
	}
	return 0;
fail:
	snprintf(err, errlen, "mounts: copying input file %s: %s", strrchr(path, '/') + 1, strerror(errno));
	return -1;
}

int mount_work(const struct run *r, const char *dir, char *err, size_t errlen)
{
	struct statfs sf;

	if (r->work_tree < 0)
		return 0;
	if (fstatfs(r->work_tree, &sf) < 0) {
		snprintf(err, errlen, "mounts: session directory: %s", strerror(errno));
		return -1;
	}
	if (!session_fs((long)sf.f_type)) {
		snprintf(err, errlen, "session directory is not on a disk, network or tmpfs filesystem "
			 "(type 0x%lx, e.g. a kernel pseudo-filesystem): refused", (unsigned long)sf.f_type);
		return -1;
	}
	if (mkdir(dir, 0755) < 0 ||
	    syscall(SYS_move_mount, r->work_tree, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		snprintf(err, errlen, "mounts: session directory on /work: %s", strerror(errno));
		return -1;
	}
	return 0;
}

size_t run_extra_fds(const struct run *r, int *fds, size_t max)
{
	size_t n = 0;

	if (r->code_fd >= 0 && n < max)
		fds[n++] = r->code_fd;
	for (size_t i = 0; i < r->n_inputs && n < max; i++)
		if (r->inputs[i].fd >= 0)
			fds[n++] = r->inputs[i].fd;
	if (r->work_fd >= 0 && n < max)
		fds[n++] = r->work_fd;
	if (r->work_tree >= 0 && n < max)
		fds[n++] = r->work_tree;
	/* the sandbox child closes all three; the supervisor keeps ws_fd
	 * and cs_fd for the collector (close_run_extra_fds) */
	if (r->ws_tree >= 0 && n < max)
		fds[n++] = r->ws_tree;
	if (r->ws_fd >= 0 && n < max)
		fds[n++] = r->ws_fd;
	if (r->cs_fd >= 0 && n < max)
		fds[n++] = r->cs_fd;
	if (r->image_tree >= 0 && n < max)
		fds[n++] = r->image_tree;
	for (size_t i = 0; i < SBX_MAX_PATHS; i++) {
		if (r->ro_fd[i] >= 0 && n < max)
			fds[n++] = r->ro_fd[i];
		if (r->rw_fd[i] >= 0 && n < max)
			fds[n++] = r->rw_fd[i];
	}
	return n;
}

void close_run_extra_fds(struct run *r)
{
	if (r->code_fd >= 0)
		close(r->code_fd);
	r->code_fd = -1;
	for (size_t i = 0; i < r->n_inputs; i++)
		if (r->inputs[i].fd >= 0) {
			close(r->inputs[i].fd);
			r->inputs[i].fd = -1;
		}
	if (r->work_fd >= 0)
		close(r->work_fd);
	if (r->work_tree >= 0)
		close(r->work_tree);
	r->work_fd = r->work_tree = -1;
	if (r->ws_tree >= 0)
		close(r->ws_tree);
	r->ws_tree = -1;
	for (size_t i = 0; i < SBX_MAX_PATHS; i++) {
		if (r->ro_fd[i] >= 0)
			close(r->ro_fd[i]);
		if (r->rw_fd[i] >= 0)
			close(r->rw_fd[i]);
		r->ro_fd[i] = r->rw_fd[i] = SRC_NONE;
	}
	image_close(r);
}
