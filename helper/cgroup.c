/* SPDX-License-Identifier: ISC */
/*
 * One cgroup per run, under an sbx/ subtree: on cgroup v1 in each of the
 * memory, pids, cpu, cpuacct (and, if present, freezer) hierarchies; on v2
 * in one directory of the unified hierarchy. File names and semantics:
 * Documentation/admin-guide/cgroup-v1/{memory,pids,cpuacct}.rst,
 * Documentation/scheduler/sched-bwc.rst and cgroup-v2.rst.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "helper.h"
#include "testhook.h"


enum { C_MEMORY, C_PIDS, C_CPU, C_CPUACCT, C_FREEZER, C_N };
static const char *const ctrl_name[C_N] = {"memory", "pids", "cpu", "cpuacct", "freezer"};

struct cgroup {
	bool v2;
	char dir[C_N][PATH_MAX];  /* v2: all entries equal */
	bool owner[C_N];          /* this entry created the directory (co-mounted ones share) */
	int lock[C_N];            /* flock(2)ed fd on each directory we created: its files are
				   * opened through it (a nested one's parent may be the caller's,
				   * who can rename it, never move it to another parent) */
	int parent[C_N];          /* nested beneath the caller's cgroup (cgcaller.c): that
				   * directory, else -1 */
	char name[64];            /* "sbx-run-ID" when nested */
};

/* A run's directories stay flock()ed by its supervisor for as long as it
 * lives, so a directory nobody holds belongs to a supervisor that died
 * (SIGKILL by root, a crash): the next run kills what is left in it and
 * removes it. Young directories are left alone: their creator may not
 * have taken the lock yet. */
#define STALE_AFTER_S 10

static int cg_write(const char *dir, const char *file, const char *val, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return write_file(path, val, err, errlen);
}

/* A file of the run's cgroup in hierarchy i: through the directory's fd
 * when we hold one, else by path (a stale run's, reap_stale). */
static int cg_open(const struct cgroup *cg, int i, const char *file, int flags)
{
	char path[PATH_MAX + 64];

	if (cg->lock[i] >= 0)
		return openat(cg->lock[i], file, flags | O_CLOEXEC | O_NOFOLLOW);
	snprintf(path, sizeof(path), "%s/%s", cg->dir[i], file);
	return open(path, flags | O_CLOEXEC | O_NOFOLLOW);
}

static int cg_set(const struct cgroup *cg, int i, const char *file, const char *val, char *err, size_t errlen)
{
	int fd = cg_open(cg, i, file, O_WRONLY);

	if (fd < 0 || sbx_write_all(fd, val, strlen(val)) < 0 || close(fd) < 0) {
		snprintf(err, errlen, "write %s/%s: %s", cg->dir[i], file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

static int cg_read(const struct cgroup *cg, int i, const char *file, char *buf, size_t len)
{
	int fd = cg_open(cg, i, file, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = sbx_read_full(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static uint64_t cg_u64(const struct cgroup *cg, int i, const char *file)
{
	char buf[64];

	if (cg_read(cg, i, file, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* "key value" lines, as in memory.events, pids.events, cpu.stat, oom_control */
static uint64_t cg_key(const struct cgroup *cg, int i, const char *file, const char *key)
{
	char buf[4096], *p;
	size_t kl = strlen(key);

	if (cg_read(cg, i, file, buf, sizeof(buf)) < 0)
		return 0;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	return 0;
}

static void lock_dir(struct cgroup *cg, int i)
{
	cg->lock[i] = cg->parent[i] >= 0
			      ? openat(cg->parent[i], cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
			      : open(cg->dir[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (cg->lock[i] >= 0)
		flock(cg->lock[i], LOCK_EX | LOCK_NB);
}

/* The directories of run NAME under root, in every hierarchy where it exists. */
static struct cgroup *existing(const char *root, bool v2, const char *name)
{
	struct cgroup *cg = calloc(1, sizeof(*cg));
	struct stat st;

	if (cg == NULL)
		return NULL;
	cg->v2 = v2;
	for (int i = 0; i < C_N; i++) {
		cg->lock[i] = cg->parent[i] = -1;
		if (v2)
			snprintf(cg->dir[i], sizeof(cg->dir[i]), "%s/sbx/%s", root, name);
		else
			snprintf(cg->dir[i], sizeof(cg->dir[i]), "%s/%s/sbx/%s", root, ctrl_name[i], name);
		cg->owner[i] = (!v2 || i == 0) && lstat(cg->dir[i], &st) == 0 && S_ISDIR(st.st_mode);
	}
	return cg;
}

static void reap_stale(const char *root, bool v2, const char *sbxdir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(sbxdir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "run-", 4) != 0 || de->d_type != DT_DIR || strlen(de->d_name) > 64)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", sbxdir, de->d_name) >= (int)sizeof(path))
			continue;
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ctime + STALE_AFTER_S < time(NULL) &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			struct cgroup *cg = existing(root, v2, de->d_name);
			warnx1("cgroup: removing %s, left by a supervisor that died", path);
			if (cg != NULL) {
				cgroup_kill(cg);
				cgroup_destroy(cg);
			}
		}
		close(fd);
	}
	closedir(d);
}

static int mkdir_ok(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0)
		return 0;
	snprintf(err, errlen, "cgroup: cannot create %s: %s (check cgroup_root in sbx.conf; "
		 "`sbx doctor` tells what the host offers)", path, strerror(errno));
	return -1;
}

int cgroup_v2_sbx_dir(const char *root, char *sbx, size_t len, char *err, size_t errlen)
{
	if (snprintf(sbx, len, "%s/sbx", root) >= (int)len) {
		snprintf(err, errlen, "cgroup: path too long under %.100s", root);
		return -1;
	}
	/* Controllers must be enabled on the way down; an error here means the
	 * subtree is not delegated to us. */
	if (cg_write(root, "cgroup.subtree_control", "+memory +pids +cpu", err, errlen) < 0) {
		snprintf(err, errlen, "cgroup v2: cannot enable memory, pids and cpu in %.80s (%s): "
			 "not a delegated subtree; %s", root, strerror(errno), cgroup_fix_hint());
		return -1;
	}
	if (mkdir_ok(sbx, err, errlen) < 0 ||
	    cg_write(sbx, "cgroup.subtree_control", "+memory +pids +cpu", err, errlen) < 0)
		return -1;
	return 0;
}

static int create_v2(struct cgroup *cg, const char *root, const char *name,
		     const struct sbx_limits *l, char *err, size_t errlen)
{
	char sbx[PATH_MAX], buf[64];

	if (snprintf(sbx, sizeof(sbx), "%s/sbx", root) >= (int)sizeof(sbx)) {
		snprintf(err, errlen, "cgroup: path too long under %.100s", root);
		return -1;
	}
	reap_stale(root, true, sbx);
	if (cgroup_v2_sbx_dir(root, sbx, sizeof(sbx), err, errlen) < 0)
		return -1;
	if (snprintf(cg->dir[0], sizeof(cg->dir[0]), "%s/%s", sbx, name) >= (int)sizeof(cg->dir[0]) ||
	    mkdir(cg->dir[0], 0755) < 0) {
		snprintf(err, errlen, "cgroup: cannot create %s: %s", cg->dir[0], strerror(errno));
		return -1;
	}
	for (int i = 1; i < C_N; i++)
		memcpy(cg->dir[i], cg->dir[0], sizeof(cg->dir[0]));
	cg->owner[0] = true;
	lock_dir(cg, 0);
	snprintf(buf, sizeof(buf), "%" PRIu64, l->memory_bytes);
	if (cg_set(cg, 0, "memory.max", buf, err, errlen) < 0 ||
	    cg_set(cg, 0, "memory.swap.max", "0", err, errlen) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%" PRIu64, l->pids);
	if (cg_set(cg, 0, "pids.max", buf, err, errlen) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%" PRIu64 " 100000", l->cpus_milli * 100);
	return cg_set(cg, 0, "cpu.max", buf, err, errlen);
}

/* Whether the space-separated list names word. */
static bool listed(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p != '\0'; p += strspn(p, " ")) {
		size_t k = strcspn(p, " ");
		if (k == n && strncmp(p, word, n) == 0)
			return true;
		p += k;
	}
	return false;
}

/* Whether dfd is a cgroup as a fresh mkdir by root leaves it: the
 * directory and its control files root's alone, no task in it. */
static bool fresh_root_cgroup(int dfd)
{
	struct stat st;
	char c;
	int fd;
	ssize_t n;

	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != 0 || !cgroup_files_root_only(dfd, true))
		return false;
	fd = openat(dfd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, &c, 1);
	close(fd);
	return n == 0;
}

static int create_v1(const struct sbx_config *c, const char *nested, struct cgroup *cg, const char *root,
		     const char *name, const struct sbx_limits *l, char *err, size_t errlen)
{
	struct stat seen[C_N];
	char hier[PATH_MAX], sbx[PATH_MAX + 8], buf[64];

	for (int i = 0; i < C_N; i++) {
		if (snprintf(hier, sizeof(hier), "%s/%s", root, ctrl_name[i]) >= (int)sizeof(hier)) {
			snprintf(err, errlen, "cgroup: path too long under %.100s", root);
			return -1;
		}
		if (stat(hier, &seen[i]) < 0) {
			if (i == C_FREEZER)
				continue;
			snprintf(err, errlen, "cgroup: no %s hierarchy at %s (check cgroup_root in sbx.conf)",
				 ctrl_name[i], hier);
			return -1;
		}
		/* beneath the caller's allocation (cgcaller.c), or sbx's own subtree */
		const char *nest = NULL;
		cg->parent[i] = cgroup_nest_open(c, ctrl_name[i], &nest);
		/* START said where the run goes (cgroup_nest_names); a caller's
		 * cgroup renamed or replaced since must not make it a lie */
		if (nested != NULL && (cg->parent[i] >= 0) != listed(nested, ctrl_name[i])) {
			snprintf(err, errlen, "cgroup: the caller's %s cgroup changed while the run was set up "
				 "(renamed or replaced); run not started", ctrl_name[i]);
			return -1;
		}
		if ((nest ? snprintf(cg->dir[i], sizeof(cg->dir[i]), "%s%s/sbx-%s", hier, nest, name)
			  : snprintf(cg->dir[i], sizeof(cg->dir[i]), "%s/sbx/%s", hier, name)) >= (int)sizeof(cg->dir[i])) {
			snprintf(err, errlen, "cgroup: path too long under %s", hier);
			return -1;
		}
		/* cpu and cpuacct are often one hierarchy mounted twice */
		bool dup = false;
		for (int j = 0; j < i; j++)
			if (cg->owner[j] && seen[j].st_dev == seen[i].st_dev && seen[j].st_ino == seen[i].st_ino)
				dup = true;
		if (dup)
			continue;
		snprintf(sbx, sizeof(sbx), "%s/sbx", hier);
		if (nest == NULL && mkdir_ok(sbx, err, errlen) < 0)
			return -1;
		if (nest == NULL)
			reap_stale(root, false, sbx);
		if (nest ? mkdirat(cg->parent[i], cg->name, 0755) < 0 : mkdir(cg->dir[i], 0755) < 0) {
			snprintf(err, errlen, "cgroup: cannot create %s: %s", cg->dir[i], strerror(errno));
			return -1;
		}
		cg->owner[i] = true;
		if (nest)
			TEST_HOOK("cgroup-nested-made"); /* escape 46: the caller's window */
		lock_dir(cg, i);
		if (nest && !fresh_root_cgroup(cg->lock[i])) {
			/* the caller owns the parent: between our mkdirat and the
			 * open it may have renamed ours away and made its own (whose
			 * files it could then write) under the name. Neither is
			 * touched: the fd is the caller's cgroup, and ours is under a
			 * name we cannot tell (empty, it holds nothing) */
			if (cg->lock[i] >= 0)
				close(cg->lock[i]);
			cg->lock[i] = -1;
			cg->owner[i] = false;
			snprintf(err, errlen, "cgroup: %s is not the cgroup this run created (replaced in the "
				 "caller's cgroup); run not started", cg->dir[i]);
			return -1;
		}
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, l->memory_bytes);
	if (cg_set(cg, C_MEMORY, "memory.limit_in_bytes", buf, err, errlen) < 0)
		return -1;
	/* memory+swap equal to memory: no swap. Absent without swap accounting. */
	if (faccessat(cg->lock[C_MEMORY], "memory.memsw.limit_in_bytes", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    cg_set(cg, C_MEMORY, "memory.memsw.limit_in_bytes", buf, err, errlen) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%" PRIu64, l->pids);
	if (cg_set(cg, C_PIDS, "pids.max", buf, err, errlen) < 0 ||
	    cg_set(cg, C_CPU, "cpu.cfs_period_us", "100000", err, errlen) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%" PRIu64, l->cpus_milli * 100);
	return cg_set(cg, C_CPU, "cpu.cfs_quota_us", buf, err, errlen);
}

int cgroup_create(const struct sbx_config *c, const char *run_id, const struct sbx_limits *l,
		  const char *nested, struct cgroup **out, char *err, size_t errlen)
{
	char root[PATH_MAX], name[64];
	struct cgroup *cg;
	bool v2;
	int rc;

	*out = NULL;
	if (cgroup_place(c, root, sizeof(root), &v2, err, errlen) < 0)
		return -1;
	cg = calloc(1, sizeof(*cg));
	if (cg == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < C_N; i++)
		cg->lock[i] = cg->parent[i] = -1;
	cg->v2 = v2;
	snprintf(name, sizeof(name), "run-%s", run_id);
	snprintf(cg->name, sizeof(cg->name), "sbx-run-%s", run_id);
	rc = cg->v2 ? create_v2(cg, root, name, l, err, errlen) : create_v1(c, nested, cg, root, name, l, err, errlen);
	*out = cg;
	if (rc < 0) {
		cgroup_destroy(cg);
		*out = NULL;
	}
	return rc;
}

int cgroup_attach(struct cgroup *cg, pid_t pid, char *err, size_t errlen)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (int i = 0; i < C_N; i++)
		if (cg->owner[i] && cg_set(cg, i, "cgroup.procs", buf, err, errlen) < 0)
			return -1;
	return 0;
}

/*
 * Writing a pid to cgroup.procs takes the global cgroup_threadgroup_rwsem
 * for writing, and that waits for an RCU grace period (percpu_down_write,
 * kernel/cgroup/cgroup.c cgroup_attach_lock): milliseconds on an idle
 * host, the slowest single step of a run's start. Two ways in skip it:
 *   - v2: clone3(2) with CLONE_INTO_CGROUP places the child as it is
 *     forked (the fork holds the lock for reading, like any fork);
 *   - v1: a single thread writing "0" (itself) to a hierarchy's "tasks"
 *     file migrates without the global lock (cgroup_procs_write_start:
 *     "If we migrate a single thread, we don't care about threadgroup
 *     stability", since Linux 6.0). The sandbox init is single-threaded,
 *     so moving its only thread moves the process. The files are opened
 *     here, by root: the kernel checks the opener's credentials
 *     (__cgroup1_procs_write, of->file->f_cred), and the sandbox writes
 *     them before it does anything else (sandbox_main).
 * cgroup_attach (the pid through cgroup.procs) stays for kernels where
 * clone3 refuses CLONE_INTO_CGROUP (before 5.7).
 */
int cgroup_clone_fd(struct cgroup *cg, char *err, size_t errlen)
{
	int fd;

	if (!cg->v2)
		return -1;
	fd = open(cg->dir[0], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(err, errlen, "cgroup: cannot open %s: %s", cg->dir[0], strerror(errno));
	return fd;
}

int cgroup_tasks_fds(struct cgroup *cg, int fds[CGROUP_MAX_TASKS], char *err, size_t errlen)
{
	char path[PATH_MAX + 8];
	int n = 0;

	if (cg->v2)
		return 0;
	for (int i = 0; i < C_N && n < CGROUP_MAX_TASKS; i++) {
		if (!cg->owner[i])
			continue;
		snprintf(path, sizeof(path), "%s/tasks", cg->dir[i]);
		fds[n] = cg_open(cg, i, "tasks", O_WRONLY);
		if (fds[n] < 0) {
			snprintf(err, errlen, "cgroup: cannot open %s: %s", path, strerror(errno));
			while (n > 0)
				close(fds[--n]);
			return -1;
		}
		n++;
	}
	return n;
}

int cgroup_join_self(const int *fds, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
		if (write(fds[i], "0", 1) != 1) {
			snprintf(err, errlen, "cgroup: cannot join the run's cgroup: %s", strerror(errno));
			return -1;
		}
	return 0;
}

int cgroup_open_memory(const struct cgroup *cg, bool peak, bool *v2)
{
	*v2 = cg->v2;
	if (cg->v2)
		return cg_open(cg, 0, peak ? "memory.peak" : "memory.current", O_RDONLY);
	return cg_open(cg, C_MEMORY, peak ? "memory.max_usage_in_bytes" : "memory.usage_in_bytes", O_RDONLY);
}

int cgroup_usage(struct cgroup *cg, struct cgroup_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (cg->v2) {
		u->cpu_ms = cg_key(cg, 0, "cpu.stat", "usage_usec") / 1000;
		u->memory_peak_bytes = cg_u64(cg, 0, "memory.peak");
		u->oom_kills = cg_key(cg, 0, "memory.events", "oom_kill");
		u->pids_max_hits = cg_key(cg, 0, "pids.events", "max");
		u->pids_peak = cg_u64(cg, 0, "pids.peak");
	} else {
		u->cpu_ms = cg_u64(cg, C_CPUACCT, "cpuacct.usage") / 1000000;
		u->memory_peak_bytes = cg_u64(cg, C_MEMORY, "memory.max_usage_in_bytes");
		/* not failcnt: it stays 0 when memsw equals the limit */
		u->oom_kills = cg_key(cg, C_MEMORY, "memory.oom_control", "oom_kill");
		u->pids_max_hits = cg_key(cg, C_PIDS, "pids.events", "max");
		u->pids_peak = cg_u64(cg, C_PIDS, "pids.peak");
	}
	return 0;
}

/* Kill every task in the cgroup. The normal path kills pid 1 of the pid
 * namespace instead; this is for leftovers. v1 freezes first so nothing
 * forks while the list is read. */
void cgroup_kill(struct cgroup *cg)
{
	char err[HELPER_ERR_LEN], buf[65536];
	int list = cg->owner[C_PIDS] ? C_PIDS : C_MEMORY;

	if (cg->v2) {
		cg_set(cg, 0, "cgroup.kill", "1", err, sizeof(err));
		return;
	}
	/* Frozen tasks can neither fork nor exit, so no pid read from the list
	 * can be recycled for an unrelated process before our kill(2). */
	for (int round = 0; round < 10; round++) {
		bool frozen = cg->owner[C_FREEZER] &&
			      cg_set(cg, C_FREEZER, "freezer.state", "FROZEN", err, sizeof(err)) == 0;
		if (cg_read(cg, list, "cgroup.procs", buf, sizeof(buf)) < 0 || buf[0] == '\0') {
			if (frozen)
				cg_set(cg, C_FREEZER, "freezer.state", "THAWED", err, sizeof(err));
			break;
		}
		for (char *p = buf; *p;) {
			long pid = strtol(p, &p, 10);
			if (pid > 1)
				kill((pid_t)pid, SIGKILL);
			while (*p == '\n')
				p++;
		}
		if (frozen)
			cg_set(cg, C_FREEZER, "freezer.state", "THAWED", err, sizeof(err));
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
}

/* rmdir(2) of the run's directory in hierarchy i. Nested beneath the
 * caller's cgroup, whose directory may be the caller's: by name from the
 * parent's fd, and if the caller renamed it, by the inode of the
 * directory we hold (cgroup v1 renames only within one parent). */
static int remove_dir(const struct cgroup *cg, int i)
{
	struct stat mine, st;
	struct dirent *de;
	DIR *d;
	int fd, rc;

	if (cg->parent[i] < 0)
		return rmdir(cg->dir[i]);
	if (cg->lock[i] < 0 || fstat(cg->lock[i], &mine) < 0) {
		errno = ENOENT;
		return -1;
	}
	/* by name only while the name is still ours (the caller may have
	 * renamed it and put a cgroup of its own there) */
	if (fstatat(cg->parent[i], cg->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == mine.st_ino &&
	    st.st_dev == mine.st_dev)
		return unlinkat(cg->parent[i], cg->name, AT_REMOVEDIR);
	fd = dup(cg->parent[i]);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		errno = ENOENT;
		return -1;
	}
	rewinddir(d);
	rc = -1;
	errno = ENOENT;
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && fstatat(cg->parent[i], de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == mine.st_ino && st.st_dev == mine.st_dev) {
			rc = unlinkat(cg->parent[i], de->d_name, AT_REMOVEDIR);
			break;
		}
	int saved = errno;
	closedir(d);
	errno = saved;
	return rc;
}

int cgroup_destroy(struct cgroup *cg)
{
	int rc = 0;

	if (cg == NULL)
		return 0;
	for (int i = C_N - 1; i >= 0; i--) {
		if (!cg->owner[i])
			continue;
		/* tasks leave a cgroup a moment after they are reaped */
		for (int tries = 0; remove_dir(cg, i) < 0; tries++) {
			if (errno == ENOENT)
				break;
			if (errno != EBUSY || tries == 200) {
				warnx1("cgroup: cannot remove %s: %s", cg->dir[i], strerror(errno));
				rc = -1;
				break;
			}
			if (tries == 20)
				cgroup_kill(cg);
			nanosleep(&(struct timespec){0, 5000000}, NULL);
		}
		if (cg->lock[i] >= 0)
			close(cg->lock[i]);
	}
	for (int i = 0; i < C_N; i++)
		if (cg->parent[i] >= 0)
			close(cg->parent[i]);
	free(cg);
	return rc;
}
