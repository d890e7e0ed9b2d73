/* SPDX-License-Identifier: ISC */
/*
 * The sandbox's filesystem, built in its own mount namespace by the cloned
 * child while it still holds capabilities in its user namespace (but no
 * privilege over the host's mounts). A tmpfs becomes the new root; host
 * paths are bound read-only; /tmp, /dev/shm, /out and /code are fresh
 * tmpfs, /in a read-only tmpfs of the input files, /work the session
 * directory; then
 * pivot_root(2) (the "pivot_root(".", ".")" form from its man page) and
 * the old root is detached. Every mount is nosuid; nodev except /dev.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>
#include <bsd/string.h>

#include "helper.h"
#include "paths.h"

#define NEWROOT "/tmp"

/* Create NEWROOT+path's directories, refusing to walk through a symlink
 * (a replicated host symlink must never lead a mkdir out of the new root).
 * With as_file, the last component is an empty file (a bind target). */
int make_path(const char *path, bool as_file, char *err, size_t errlen)
{
	char buf[PATH_MAX], *comp, *next, *save = NULL;
	int dfd, fd;

	strlcpy(buf, path, sizeof(buf));
	dfd = open(NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (next == NULL && as_file) {
			fd = openat(dfd, comp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
			if (fd < 0)
				goto fail;
			close(fd);
			break;
		}
		if (mkdirat(dfd, comp, 0755) < 0 && errno != EEXIST)
			goto fail;
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		close(dfd);
		dfd = fd;
	}
	close(dfd);
	return 0;
fail:
	snprintf(err, errlen, "mounts: creating %s in the new root: %s", path, strerror(errno));
	if (dfd >= 0)
		close(dfd);
	return -1;
}

/* Flags a remount of a bind mount must keep: the kernel refuses to clear
 * locked flags of a mount inherited from a more privileged namespace. */
static unsigned long kept_flags(const char *target)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(target, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
	return f;
}

/*
 * A policy path, opened component by component from "/" without following
 * a symbolic link (O_PATH | O_NOFOLLOW); the caller of this binds the
 * object opened, through /proc/self/fd, so a component renamed or swapped
 * after the check (a race in /var/tmp) changes nothing. In a directory
 * others may write (it must then be sticky, as /tmp and /var/tmp are), an
 * entry counts only if root or the caller owns it: anyone could have made
 * it there first (a planted directory). Returns the fd with *st filled, -2
 * if a component is missing (the path is skipped: sbx.policy(5)), -3 if
 * the last component is a symbolic link (replicated, not bound), -1 with
 * err. Sources: openat(2) O_PATH, mount(2), runc's mounts from
 * /proc/self/fd. Runs as root in the host's user namespace (supervisor).
 */
static int open_source(const char *src, uid_t caller, struct stat *st, char *err, size_t errlen)
{
	char buf[PATH_MAX], *comp, *next, *save = NULL;
	const char *why = NULL;
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
	bool shared;

	strlcpy(buf, src, sizeof(buf));
	if (dfd < 0 || fstat(dfd, st) < 0)
		goto fail;
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		shared = (st->st_mode & S_IWOTH) != 0;
		if (shared && !(st->st_mode & S_ISVTX)) {
			why = "a directory on the way is writable by everyone and not sticky";
			break;
		}
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			close(dfd);
			if (e == ENOENT)
				return SRC_MISSING;
			snprintf(err, errlen, "mounts: %s: %s", src, strerror(e));
			return -1;
		}
		close(dfd);
		dfd = fd;
		if (fstat(dfd, st) < 0)
			goto fail;
		if (shared && st->st_uid != 0 && st->st_uid != caller) {
			why = "in a directory everyone may write, it belongs to another user";
			break;
		}
		if (S_ISLNK(st->st_mode) && next == NULL) {
			close(dfd);
			return SRC_SYMLINK;
		}
		if (S_ISLNK(st->st_mode)) {
			why = "a component is a symbolic link (list its target instead)";
			break;
		}
		if (next != NULL && !S_ISDIR(st->st_mode)) {
			why = "a component is not a directory";
			break;
		}
	}
	if (why == NULL && !S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		why = "not a directory or regular file";
	if (why == NULL)
		return dfd;
	snprintf(err, errlen, "mounts: policy path %s is not bound: %s", src, why);
	close(dfd);
	return -1;
fail:
	snprintf(err, errlen, "mounts: %s: %s", src, strerror(errno));
	if (dfd >= 0)
		close(dfd);
	return -1;
}

/*
 * The path as a detached mount (open_tree(2) OPEN_TREE_CLONE, that one
 * mount only: what is mounted below it is not seen inside), with nosuid,
 * nodev and, for ro, rdonly added (mount_setattr(2): flags only ever
 * added) and private propagation. Made here, as root in the host's mount
 * namespace: the sandbox child, in a copy of it, could not bind an fd of
 * ours (mount(2) refuses a source of another mount namespace).
 */
static int clone_source(int fd, const char *src, bool ro, char *err, size_t errlen)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
				  .propagation = MS_PRIVATE};
	int t = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);

	close(fd);
	if (t < 0 || syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		snprintf(err, errlen, "mounts: %s: cannot clone its mount: %s", src, strerror(errno));
		if (t >= 0)
			close(t);
		return -1;
	}
	return t;
}

int open_policy_paths(struct run *r, char *err, size_t errlen)
{
	const struct sbx_policy *p = &r->policy;
	struct stat st;
	int fd;

	for (size_t i = 0; i < p->n_ro; i++) {
		if (image_provides(r, p->ro[i]))
			continue;
		fd = open_source(p->ro[i], r->uid, &st, err, errlen);
		if (fd >= 0)
			fd = clone_source(fd, p->ro[i], true, err, errlen);
		if ((r->ro_fd[i] = fd) == -1)
			return -1;
	}
	for (size_t i = 0; i < p->n_rw; i++) {
		fd = open_source(p->rw[i], r->uid, &st, err, errlen);
		if (fd >= 0)
			fd = clone_source(fd, p->rw[i], false, err, errlen);
		if ((r->rw_fd[i] = fd) == -1)
			return -1;
	}
	return 0;
}

/* In the sandbox child: mount what the supervisor cloned (open_policy_paths). */
static int bind_path(const char *src, int fd, char *err, size_t errlen)
{
	char dst[PATH_MAX], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fd == SRC_MISSING)
		return 0; /* documented: missing policy paths are skipped */
	snprintf(dst, sizeof(dst), "%s%s", NEWROOT, src);
	if (fd == SRC_SYMLINK) {
		/* merged-/usr hosts: /lib -> usr/lib; keep the same shape (a
		 * symbolic link inside binds nothing, whatever it says) */
		char parent[PATH_MAX];
		n = readlink(src, link, sizeof(link) - 1);
		if (n < 0)
			goto fail;
		link[n] = '\0';
		strlcpy(parent, src, sizeof(parent));
		*strrchr(parent, '/') = '\0';
		if ((parent[0] && make_path(parent, false, err, errlen) < 0))
			return -1;
		if (symlink(link, dst) < 0 && errno != EEXIST)
			goto fail;
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "mounts: %s: not opened by the supervisor", src);
		return -1;
	}
	if (make_path(src, !S_ISDIR(st.st_mode), err, errlen) < 0)
		return -1;
	/* the object opened then, not whatever the path names by now */
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "mounts: %s: %s", src, strerror(errno));
	return -1;
}

/*
 * The writable tmpfs mounts (/tmp, /dev/shm, /out) hold at most one file or
 * directory per TMPFS_BYTES_PER_INODE of their size (at least
 * TMPFS_MIN_INODES), so a flood of empty files meets ENOSPC, reported in
 * disk_full like a full mount, instead of the memory limit through the
 * inodes' kernel memory (tmpfs(5) nr_inodes; sbx.policy(5) tmp_size).
 */
#define TMPFS_BYTES_PER_INODE 4096u
#define TMPFS_MIN_INODES 1024u

unsigned long long tmpfs_inodes(uint64_t size)
{
	uint64_t n = size / TMPFS_BYTES_PER_INODE;

	return n < TMPFS_MIN_INODES ? TMPFS_MIN_INODES : (unsigned long long)n;
}

static int tmpfs(const char *where, unsigned long flags, const char *opts, char *err, size_t errlen)
{
	if (make_path(where, false, err, errlen) < 0)
		return -1;
	char dst[PATH_MAX];
	snprintf(dst, sizeof(dst), "%s%s", NEWROOT, where);
	if (mount("tmpfs", dst, "tmpfs", flags, opts) < 0) {
		snprintf(err, errlen, "mounts: tmpfs on %s (%s): %s", where, opts, strerror(errno));
		return -1;
	}
	return 0;
}

static int put_file(const char *path, const char *data, size_t len, mode_t mode, char *err, size_t errlen)
{
	char dst[PATH_MAX];
	int fd;

	snprintf(dst, sizeof(dst), "%s%s", NEWROOT, path);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 || sbx_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0) {
		snprintf(err, errlen, "mounts: writing %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * procfs files that show host-wide or per-user kernel state whatever the
 * pid namespace: /proc/keys and /proc/key-users list every key of the
 * caller's uid that carries the "user view" permission (most do: add_key(2)
 * defaults), possessed or not, with type, description and size
 * (keyrings(7), security/keys/proc.c); sched_debug, timer_list and
 * latency_stats name host processes on kernels that let anyone read them;
 * /proc/locks lists every lock on the host, among them the run-slot locks
 * of every user running sandboxes (helper/slots.c).
 * /dev/null is bound over each one that exists, as runc's masked paths do;
 * the payload can neither unmount it (no capabilities, seccomp) nor mount
 * a procfs of its own.
 */
static const char *const proc_masked[] = {"keys", "key-users", "locks", "sched_debug", "timer_list",
					   "latency_stats"};

static int mask_proc(char *err, size_t errlen)
{
	char dst[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < sizeof(proc_masked) / sizeof(proc_masked[0]); i++) {
		snprintf(dst, sizeof(dst), "%s/proc/%s", NEWROOT, proc_masked[i]);
		if (lstat(dst, &st) < 0 && errno == ENOENT)
			continue;
		if (mount("/dev/null", dst, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC | kept_flags(dst),
			  NULL) < 0) {
			snprintf(err, errlen, "mounts: masking /proc/%s: %s", proc_masked[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A minimal /etc: who the caller is, name resolution from files only. */
static int make_etc(const struct run *r, char *err, size_t errlen)
{
	char passwd[512], group[512];

	snprintf(passwd, sizeof(passwd), "%s:x:%u:%u::/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 r->user, (unsigned)r->uid, (unsigned)r->gid);
	snprintf(group, sizeof(group), "%s:x:%u:\nnogroup:x:65534:\n", r->group, (unsigned)r->gid);
	static const char std_hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tsbx\n::1\tlocalhost ip6-localhost\n";
	char hosts[sizeof(std_hosts) + (size_t)SBX_EGRESS_PAIRS_MAX * (SBX_HOST_MAX + 48)];
	size_t hosts_len = strlcpy(hosts, std_hosts, sizeof(hosts));

	/* [network] mode = allow: the pinned names, and no resolver */
	hosts_len += egress_hosts(r, hosts + hosts_len, sizeof(hosts) - hosts_len);
	static const char nss[] = "passwd: files\ngroup: files\nhosts: files\n";
	return make_path("/etc", false, err, errlen) < 0 ||
	       put_file("/etc/passwd", passwd, strlen(passwd), 0644, err, errlen) < 0 ||
	       put_file("/etc/group", group, strlen(group), 0644, err, errlen) < 0 ||
	       put_file("/etc/hosts", hosts, hosts_len, 0644, err, errlen) < 0 ||
	       put_file("/etc/hostname", "sbx\n", 4, 0644, err, errlen) < 0 ||
	       put_file("/etc/nsswitch.conf", nss, sizeof(nss) - 1, 0644, err, errlen) < 0 ||
	       put_file("/etc/resolv.conf", "", 0, 0644, err, errlen) < 0 ? -1 : 0;
}

static int make_dev(const struct run *r, char *err, size_t errlen)
{
	static const char *const devs[] = {"null", "zero", "full", "random", "urandom"};
	static const char *const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
					       {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
	char src[64], opts[128], dst[PATH_MAX];

	if (tmpfs("/dev", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64", err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(src, sizeof(src), "/dev/%s", devs[i]);
		/* device nodes cannot be created in a user namespace: bind the host's */
		if (make_path(src, true, err, errlen) < 0)
			return -1;
		snprintf(dst, sizeof(dst), "%s%s", NEWROOT, src);
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NOEXEC | kept_flags(dst), NULL) < 0) {
			snprintf(err, errlen, "mounts: %s: %s", src, strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(dst, sizeof(dst), "%s/dev/%s", NEWROOT, links[i][1]);
		if (symlink(links[i][0], dst) < 0) {
			snprintf(err, errlen, "mounts: /dev/%s: %s", links[i][1], strerror(errno));
			return -1;
		}
	}
	/* POSIX shared memory and named semaphores (shm_open(3), sem_open(3):
	 * multiprocessing's locks and queues) live here. A fresh tmpfs in the
	 * run's mount namespace: nothing of the host's or another run's, gone
	 * with the run; its pages are charged to the run's memory cgroup. */
	snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%llu", (unsigned long long)r->limits.shm_bytes,
		 tmpfs_inodes(r->limits.shm_bytes));
	if (tmpfs("/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts, err, errlen) < 0)
		return -1;
	if (mount(NULL, NEWROOT "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0) {
		snprintf(err, errlen, "mounts: /dev read-only: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int make_code(const struct run *r, char *err, size_t errlen)
{
	char opts[96];

	char path[PATH_MAX];

	snprintf(opts, sizeof(opts), "mode=0755,size=%llu,nr_inodes=16", (unsigned long long)r->code_len + 65536);
	if (tmpfs("/code", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s%s", NEWROOT, r->code_path);
	if (copy_memfd(r->code_fd, r->code_len, path) < 0) {
		snprintf(err, errlen, "mounts: %s: %s", r->code_path, strerror(errno));
		return -1;
	}
	if (mount(NULL, NEWROOT "/code", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0) {
		snprintf(err, errlen, "mounts: /code read-only: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* sbx's own files for the payload's interpreters (sbx.conf(5): the Python
 * start-up hook in /sbx/python): the install's data directory, a path
 * compiled in and root-owned like the helper. Cloned (open_tree(2))
 * before the new root hides the host's /tmp, where a test install lives,
 * and attached read-only once the new root is built. */
static int support_tree(char *err, size_t errlen)
{
	static const char src[] = SBX_DATADIR "/sbx/sandbox";
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC,
				  .propagation = MS_PRIVATE};
	int t = (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (t < 0 || syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		snprintf(err, errlen, "mounts: /sbx from %s: %s%s", src, strerror(errno),
			 errno == ENOENT ? " (sbx is not completely installed)" : "");
		if (t >= 0)
			close(t);
		return -1;
	}
	return t;
}

static int attach_support(int tree, char *err, size_t errlen)
{
	if (make_path("/sbx", false, err, errlen) < 0)
		return -1;
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, NEWROOT "/sbx", MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		snprintf(err, errlen, "mounts: /sbx: %s", strerror(errno));
		return -1;
	}
	close(tree);
	return 0;
}

int setup_mounts(const struct run *r, char *err, size_t errlen)
{
	const struct sbx_policy *p = &r->policy;
	char opts[128];
	int support;

	/* nothing we mount may propagate back to the host */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(err, errlen, "mounts: making / private: %s", strerror(errno));
		return -1;
	}
	support = support_tree(err, errlen);
	if (support < 0)
		return -1;
	if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") < 0) {
		snprintf(err, errlen, "mounts: new root: %s", strerror(errno));
		return -1;
	}
	if (make_etc(r, err, errlen) < 0 || image_bind(r, NEWROOT, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < p->n_ro; i++)
		if (!image_provides(r, p->ro[i]) && bind_path(p->ro[i], r->ro_fd[i], err, errlen) < 0)
			return -1;
	for (size_t i = 0; i < p->n_rw; i++)
		if (bind_path(p->rw[i], r->rw_fd[i], err, errlen) < 0)
			return -1;
	if (make_path("/proc", false, err, errlen) < 0)
		return -1;
	if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(err, errlen, "mounts: /proc: %s", strerror(errno));
		return -1;
	}
	if (mask_proc(err, errlen) < 0)
		return -1;
	if (make_dev(r, err, errlen) < 0)
		return -1;
	snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%llu", (unsigned long long)r->limits.tmp_bytes,
		 tmpfs_inodes(r->limits.tmp_bytes));
	if (tmpfs("/tmp", MS_NOSUID | MS_NODEV, opts, err, errlen) < 0)
		return -1;
	snprintf(opts, sizeof(opts), "mode=0755,uid=%u,gid=%u,size=%llu,nr_inodes=%llu", (unsigned)r->uid,
		 (unsigned)r->gid, (unsigned long long)r->limits.out_bytes, tmpfs_inodes(r->limits.out_bytes));
	if (tmpfs("/out", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts, err, errlen) < 0)
		return -1;
	if (attach_support(support, err, errlen) < 0)
		return -1;
	/* a live session: /in holds each call's inputs, which its driver
	 * writes there (sbx(1) "Live sessions"): the session's own tmpfs,
	 * input_size and its inodes, writable by the payload's uid */
	snprintf(opts, sizeof(opts), "mode=0755,uid=%u,gid=%u,size=%llu,nr_inodes=%d", (unsigned)r->uid,
		 (unsigned)r->gid, (unsigned long long)r->limits.input_bytes + 4096ULL * (SBX_MAX_INPUTS + 1),
		 SBX_MAX_INPUTS + 8);
	if (r->live && tmpfs("/in", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts, err, errlen) < 0)
		return -1;
	if (make_code(r, err, errlen) < 0 || mount_inputs(r, NEWROOT "/in", err, errlen) < 0 ||
	    mount_work(r, NEWROOT "/work", err, errlen) < 0 ||
	    mount_workspace(r, NEWROOT, &sandbox_ws_upper, err, errlen) < 0)
		return -1;

	if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0) {
		snprintf(err, errlen, "mounts: pivot_root: %s", strerror(errno));
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
		snprintf(err, errlen, "mounts: / read-only: %s", strerror(errno));
		return -1;
	}
	return 0;
}
