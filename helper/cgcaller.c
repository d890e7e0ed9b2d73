/* SPDX-License-Identifier: ISC */
/*
 * The caller's allocation (issue 21): a run gets at most what the cgroup
 * the helper was started in allows, so sbx is no way out of a Slurm job's
 * --mem or a systemd slice's MemoryMax.
 *
 * Two mechanisms, both decided from what the kernel wrote:
 *   - capped: the run's memory, pids and cpus become the tightest limit
 *     on the way from the hierarchy's root down to the caller's cgroup
 *     (v1: memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max,
 *     cpu.cfs_quota_us / cpu.cfs_period_us; v2: memory.max, memory.high,
 *     pids.max, cpu.max). Always, on every host. The caller may own part
 *     of that path (a delegated subtree) and write its limit files: a
 *     minimum can only fall, so what the caller wrote can tighten the run,
 *     never loosen it. A file that does not read as the kernel writes it
 *     is skipped (the limits of the other files and levels stay in
 *     force); a level that cannot be opened (renamed meanwhile) refuses
 *     the run, since the limits below it are unknown (escape 47).
 *   - nested (cgroup v1 only): where the caller's cgroup lies under one
 *     of sbx.conf's cgroup_nest patterns (default "/slurm /slurm_*",
 *     Slurm's task/cgroup layouts) and every control file from the
 *     hierarchy's root down to it is root's alone, the run's cgroup is
 *     created beneath it, so the kernel charges the run to the allocation
 *     (what remains of it, not only its size) and the scheduler's
 *     accounting (sstat: jobacct_gather/cgroup reads the task cgroup's
 *     hierarchical memory.stat and cpuacct.stat) includes the run. The
 *     directories may be the caller's (Slurm chowns a job's step and task
 *     cgroups to its user): that lets the caller create, rename and
 *     remove child cgroups there, never write a control file, move a
 *     process it does not own, or move a cgroup to another parent; so
 *     cgroup.c works on the run's cgroup through its directory fd and
 *     finds it by inode to remove it. A cgroup the caller created (its
 *     files are the caller's) is never a parent. Not on v2: a cgroup with
 *     processes (the caller's) cannot pass controllers to a child ("no
 *     internal processes", cgroup-v2.rst). Not by default under cgroups
 *     systemd manages: it owns their subtrees unless Delegate=.
 * Files: Documentation/admin-guide/cgroup-v1/memory.rst, pids.rst,
 * Documentation/scheduler/sched-bwc.rst, cgroup-v2.rst.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <bsd/string.h>
#include <linux/magic.h>

#include "helper.h"
#include "testhook.h"

#define CG_MOUNT "/sys/fs/cgroup"
#define UNLIMITED UINT64_MAX

/* A limit file at dfd: a decimal u64, "max" (v2) or "-1" (v1 quota) for
 * none, optionally followed by " PERIOD" (cpu.max). false if absent or
 * not the kernel's format. */
static bool read_limit(int dfd, const char *file, uint64_t *val, uint64_t *period)
{
	char buf[64], *end;
	struct stat st;
	ssize_t n;
	int fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? sbx_read_full(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, "max", 3) == 0 || strncmp(buf, "-1", 2) == 0) {
		*val = UNLIMITED;
		end = buf + (buf[0] == 'm' ? 3 : 2);
	} else {
		if (buf[0] < '0' || buf[0] > '9')
			return false;
		errno = 0;
		*val = strtoull(buf, &end, 10);
		if (errno != 0)
			return false;
	}
	if (period != NULL) {
		if (*end != ' ' || end[1] < '1' || end[1] > '9')
			return false;
		*period = strtoull(end + 1, &end, 10);
		if (*period == 0)
			return false;
	}
	return *end == '\n' || *end == '\0';
}

struct caps {
	uint64_t memory, pids, cpus_milli;
};

static void min_to(uint64_t *dst, uint64_t v)
{
	if (v < *dst)
		*dst = v;
}

/* CPUs (thousandths) of a quota per period; a quota below 10 ms per
 * second is 10 milli-CPUs, the least sbx writes (sched-bwc.rst: 1 ms). */
static uint64_t quota_milli(uint64_t quota, uint64_t period)
{
	if (quota == UNLIMITED)
		return UNLIMITED;
	uint64_t m = quota / period * 1000 + quota % period * 1000 / period;
	return m < 10 ? 10 : m;
}

/* One cgroup's limits of controller ctrl into k. */
static void read_level(int dfd, const char *ctrl, bool v2, struct caps *k)
{
	uint64_t v, p;

	if (strcmp(ctrl, "memory") == 0) {
		if (v2) {
			if (read_limit(dfd, "memory.max", &v, NULL))
				min_to(&k->memory, v);
			if (read_limit(dfd, "memory.high", &v, NULL))
				min_to(&k->memory, v);
		} else {
			if (read_limit(dfd, "memory.limit_in_bytes", &v, NULL))
				min_to(&k->memory, v);
			if (read_limit(dfd, "memory.memsw.limit_in_bytes", &v, NULL))
				min_to(&k->memory, v);
		}
	} else if (strcmp(ctrl, "pids") == 0) {
		if (read_limit(dfd, "pids.max", &v, NULL))
			min_to(&k->pids, v);
	} else if (v2) {
		if (read_limit(dfd, "cpu.max", &v, &p))
			min_to(&k->cpus_milli, quota_milli(v, p));
	} else if (read_limit(dfd, "cpu.cfs_quota_us", &v, NULL) && read_limit(dfd, "cpu.cfs_period_us", &p, NULL) &&
		   p > 0) {
		min_to(&k->cpus_milli, quota_milli(v, p));
	}
}

/* Walk from the mount of hierarchy hier down path, one directory at a
 * time without following symlinks, reading each level's limits: 0, or -1
 * when a level below the mount is gone (renamed by a caller who owns its
 * parent, after /proc/self/cgroup was read): the limits below it are not
 * known, and a run capped by those above only would escape them. */
static int walk(const char *mnt, const char *path, const char *ctrl, bool v2, struct caps *k)
{
	char buf[PATH_MAX], *save = NULL;
	struct statfs sf;
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC)) {
		close(fd);
		return 0;
	}
	read_level(fd, ctrl, v2, k);
	strlcpy(buf, path, sizeof(buf));
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = strcmp(c, ".") == 0 || strcmp(c, "..") == 0
				   ? -1 : openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		read_level(fd, ctrl, v2, k);
	}
	close(fd);
	return 0;
}

/* Where v1 hierarchies are mounted: as cgroup_leave_caller saw it. */
static const char *v1_mount(const struct sbx_config *c)
{
	struct statfs sf;

	return c->cgroup_root[0] && statfs(c->cgroup_root, &sf) == 0 && sf.f_type != CGROUP2_SUPER_MAGIC
		       ? c->cgroup_root : CG_MOUNT;
}

int cgroup_caller_cap(const struct sbx_config *c, struct sbx_limits *l, uint64_t *tightened, char *err,
		      size_t errlen)
{
	static const char *const ctrls[] = {"memory", "pids", "cpu"};
	struct caps k = {UNLIMITED, UNLIMITED, UNLIMITED};
	char mnt[PATH_MAX];
	struct statfs sf;
	const char *hier, *path;

	*tightened = 0;
	/* escape 47: the window between the copy of /proc/self/cgroup that
	 * cgroup_leave_caller kept and the walk */
	TEST_HOOK("cgroup-caller-walk");
	if (statfs(CG_MOUNT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) {
		path = cgroup_caller_path("", &hier);
		for (size_t i = 0; path != NULL && i < sizeof(ctrls) / sizeof(ctrls[0]); i++)
			if (walk(CG_MOUNT, path, ctrls[i], true, &k) < 0)
				goto changed;
	} else {
		for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
			path = cgroup_caller_path(ctrls[i], &hier);
			if (path != NULL && snprintf(mnt, sizeof(mnt), "%s/%s", v1_mount(c), hier) < (int)sizeof(mnt) &&
			    walk(mnt, path, ctrls[i], false, &k) < 0)
				goto changed;
		}
	}
	if (k.memory < l->memory_bytes) {
		l->memory_bytes = k.memory;
		*tightened |= 1ULL << SBX_LIMIT_MEMORY;
	}
	if (k.pids < l->pids) {
		l->pids = k.pids;
		*tightened |= 1ULL << SBX_LIMIT_PIDS;
	}
	if (k.cpus_milli < l->cpus_milli) {
		l->cpus_milli = k.cpus_milli;
		*tightened |= 1ULL << SBX_LIMIT_CPUS;
	}
	return 0;
changed:
	snprintf(err, errlen, "cgroup: the caller's cgroup changed while the run was set up (a level of its "
		 "path renamed or removed); run not started");
	return -1;
}

int cgroup_nest_open(const struct sbx_config *c, const char *ctrl, const char **pathp)
{
	char mnt[PATH_MAX], buf[PATH_MAX], *save = NULL;
	struct statfs sf;
	const char *hier, *path;
	int fd;

	if (statfs(CG_MOUNT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return -1;
	path = cgroup_caller_path(ctrl, &hier);
	if (path == NULL || strcmp(path, "/") == 0 || !sbx_cgroup_nest_matches(c->cgroup_nest, path) ||
	    snprintf(mnt, sizeof(mnt), "%s/%s", v1_mount(c), hier) >= (int)sizeof(mnt))
		return -1;
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC || !cgroup_files_root_only(fd, false)) {
		close(fd);
		return -1;
	}
	/* one level at a time, each checked through the fd that the next is
	 * opened from: a rename meanwhile cannot swap a level */
	strlcpy(buf, path, sizeof(buf));
	for (char *comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int next = strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0
				   ? -1 : openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		if (!cgroup_files_root_only(fd, false)) {
			close(fd);
			return -1;
		}
	}
	*pathp = path;
	return fd;
}

void cgroup_nest_names(const struct sbx_config *c, char *out, size_t len)
{
	static const char *const ctrls[] = {"memory", "pids", "cpu", "cpuacct", "freezer"};
	const char *path;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		int fd = cgroup_nest_open(c, ctrls[i], &path);
		if (fd < 0)
			continue;
		close(fd);
		if (out[0])
			strlcat(out, " ", len);
		strlcat(out, ctrls[i], len);
	}
}
