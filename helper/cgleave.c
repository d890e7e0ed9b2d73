/* SPDX-License-Identifier: ISC */
/*
 * Leaving the caller's cgroups: the first thing the helper does, before it
 * makes itself root in all three uids.
 *
 * A process belongs to a cgroup in every hierarchy, and whoever may write
 * that cgroup's files, or an ancestor's, can act on it whatever its uid:
 * cgroup.kill (SIGKILL to every member), cgroup.freeze or v1's
 * freezer.state (stop it for as long as they like), memory, pids and cpu
 * limits (OOM-kill it, make its forks fail, starve it). On a systemd host
 * every user owns such a subtree: user@UID.service and everything below
 * it are chowned to the user ("Delegate=yes", systemd's
 * docs/CGROUP_DELEGATION.md), and the helper starts in the caller's cgroup.
 *
 * So, while the caller may still signal this process anyway (its real uid
 * is the caller's until prepare() calls setresuid), every helper process
 * leaves it:
 *   - cgroup v2 (the unified hierarchy at the cgroup mount): always, into
 *     sbx/helpers below the run cgroups' parent (cgroup_place(): the
 *     delegated subtree of sbx-cgroup.service or cgroup_root), a root-owned
 *     leaf of sbx's own; with no such subtree (the run will fail at
 *     cgroup_create anyway, sbx doctor reports it) the root cgroup, which
 *     nobody can freeze, kill or limit;
 *   - every v1 hierarchy, and the v2 hierarchy of a hybrid host
 *     (/sys/fs/cgroup/unified), where some cgroup on the way from the
 *     hierarchy's root to ours is not wholly root's (a directory or file
 *     not owned by root, or writable by a group other than root's or by
 *     others): into the deepest ancestor that is, which keeps the
 *     administrator's limits above the delegation and leaves the part the
 *     caller controls. Hierarchies where all of it is root's are left as
 *     they are.
 * The recorder, the collector and the sandbox are forked from here, so
 * they start where the supervisor now is; the sandbox then moves into its
 * run cgroup.
 *
 * Facts used: /proc/self/cgroup (proc(5)), whose paths hold cgroup names
 * the caller chose in its own subtree. The kernel refuses a newline in a
 * cgroup name (cgroup_mkdir); should a line still not parse, or name a
 * hierarchy twice, every hierarchy is left for its root. Only directories are opened, one
 * component at a time below the hierarchy's mount, never following a
 * symlink (cgroupfs has none; a path that does not resolve counts as not
 * root's).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#define CG_MOUNT "/sys/fs/cgroup"
#define MAX_HIER 32

struct hier {
	char name[64];        /* directory under the v1 mount, "" for the v2 hierarchy */
	char path[PATH_MAX];  /* our cgroup in it */
};

/* The caller's cgroups as /proc/self/cgroup said before this process left
 * them (cgcaller.c reads their limits): kept by cgroup_leave_caller. */
static struct hier caller[MAX_HIER];
static size_t n_caller;

/* Whether a cgroup directory and every file in it are root's alone. */
static bool root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & S_IWOTH) && (st->st_gid == 0 || !(st->st_mode & S_IWGRP));
}

bool cgroup_files_root_only(int dfd, bool dir_too)
{
	struct stat st;
	struct dirent *de;
	bool ok;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	ok = !dir_too || (fstat(dfd, &st) == 0 && root_only(&st));
	while (ok && (de = readdir(d)) != NULL) {
		if (de->d_type == DT_DIR)
			continue; /* other cgroups: children do not act on their parent */
		ok = fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && root_only(&st);
	}
	closedir(d);
	return ok;
}

/*
 * Walk path below the hierarchy mounted at mnt. Returns an O_RDONLY fd of
 * the deepest directory whose whole path is root's (mnt itself at least),
 * or -1 if mnt is not a cgroup file system; *all is set when this process
 * need not move: that is our own cgroup, or our cgroup is the hierarchy's
 * root, above which there is nowhere to go (its files are not read then:
 * some 25 fstatat(2) per hierarchy, 0.3 ms of a run on the bench machine's
 * ten v1 hierarchies). A NULL path (ours is not known) stops at mnt.
 */
static int deepest_root_only(const char *mnt, const char *path, bool *all)
{
	char buf[PATH_MAX], *save = NULL;
	struct statfs sf;
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*all = false;
	if (fd < 0 || fstatfs(fd, &sf) < 0 || (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (path != NULL && strcmp(path, "/") == 0) {
		*all = true;
		return fd;
	}
	if (path == NULL || !cgroup_files_root_only(fd, true))
		return fd; /* the root cgroup: nowhere higher to go */
	strlcpy(buf, path, sizeof(buf));
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool dots = strcmp(c, ".") == 0 || strcmp(c, "..") == 0;
		int next = dots ? -1 : openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return fd;
		if (!cgroup_files_root_only(next, true)) {
			close(next);
			return fd;
		}
		close(fd);
		fd = next;
	}
	*all = true;
	return fd;
}

/* Move this process into the cgroup open as dfd (cgroup.procs, "0": the
 * writer itself; cgroup-v2.rst, cgroup-v1/cgroups.rst). */
static int join(int dfd, const char *where, char *err, size_t errlen)
{
	int fd = openat(dfd, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || write(fd, "0", 1) != 1) {
		snprintf(err, errlen, "cgroup: cannot leave the caller's cgroup for %s: %s", where, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* /proc/self/cgroup into h; false if any line is not the kernel's own
 * "ID:CONTROLLERS:PATH" or a hierarchy appears twice. */
static bool read_self(struct hier *h, size_t *n)
{
	static char buf[MAX_HIER * (PATH_MAX + 80)];
	char *line, *save = NULL;
	int ids[MAX_HIER];
	bool clean = true;
	ssize_t len;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);

	*n = 0;
	if (fd < 0)
		return false;
	len = sbx_read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0 || (size_t)len == sizeof(buf) - 1)
		return false;
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *ctrl, *path;
		long id = strtol(line, &end, 10);

		ctrl = end;
		path = *ctrl == ':' ? strchr(ctrl + 1, ':') : NULL;
		if (end == line || id < 0 || id > INT_MAX || path == NULL || path[1] != '/' || *n == MAX_HIER) {
			clean = false;
			continue;
		}
		*path++ = '\0';
		ctrl++;
		if (strncmp(ctrl, "name=", 5) == 0)
			ctrl += 5;
		if (strcspn(ctrl, "/.") != strlen(ctrl) || (id == 0) != (*ctrl == '\0'))
			clean = false;
		for (size_t i = 0; i < *n; i++)
			if (ids[i] == (int)id || strcmp(h[i].name, ctrl) == 0)
				clean = false;
		if (!clean)
			continue;
		ids[*n] = (int)id;
		if (strlcpy(h[*n].name, ctrl, sizeof(h[*n].name)) >= sizeof(h[*n].name) ||
		    strlcpy(h[*n].path, path, sizeof(h[*n].path)) >= sizeof(h[*n].path)) {
			clean = false;
			continue;
		}
		(*n)++;
	}
	return clean;
}

/* cgroup v2 at the mount: sbx/helpers of the run cgroups' place, or the
 * root cgroup when sbx has no place there (yet). */
static int leave_v2(const struct sbx_config *c, char *err, size_t errlen)
{
	char root[PATH_MAX], dir[PATH_MAX + 16], why[HELPER_ERR_LEN];
	bool v2;
	int fd;

	if (cgroup_place(c, root, sizeof(root), &v2, why, sizeof(why)) == 0 && v2 &&
	    cgroup_v2_sbx_dir(root, dir, sizeof(dir), why, sizeof(why)) == 0 &&
	    strlcat(dir, "/helpers", sizeof(dir)) < sizeof(dir) && (mkdir(dir, 0755) == 0 || errno == EEXIST) &&
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		struct stat st;
		int rc = fstat(fd, &st) == 0 && root_only(&st) ? join(fd, dir, err, errlen) : -1;
		close(fd);
		if (rc == 0)
			return 0;
	}
	fd = open(CG_MOUNT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cgroup: " CG_MOUNT ": %s", strerror(errno));
		return -1;
	}
	int rc = join(fd, "the root cgroup", err, errlen);
	close(fd);
	return rc;
}

int cgroup_leave_caller(const struct sbx_config *c, char *err, size_t errlen)
{
	static struct hier h[MAX_HIER];
	char mnt[PATH_MAX];
	struct statfs sf;
	size_t n;
	bool clean = read_self(h, &n), all;
	/* v1 hierarchies (and a hybrid host's unified one) are mounted here */
	const char *v1 = c->cgroup_root[0] && statfs(c->cgroup_root, &sf) == 0 && sf.f_type != CGROUP2_SUPER_MAGIC
			 ? c->cgroup_root : CG_MOUNT;

	/* an unparsable list names no allocation: the policy's limits apply */
	n_caller = clean ? n : 0;
	memcpy(caller, h, n_caller * sizeof(h[0]));
	if (statfs(CG_MOUNT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return leave_v2(c, err, errlen);
	for (size_t i = 0; i < n; i++) {
		if (snprintf(mnt, sizeof(mnt), "%.200s/%.63s", v1, h[i].name[0] ? h[i].name : "unified") >= (int)sizeof(mnt))
			continue;
		int fd = deepest_root_only(mnt, clean ? h[i].path : NULL, &all);
		if (fd < 0)
			continue; /* not mounted where sbx looks: see docs/threat-model.md */
		int rc = all ? 0 : join(fd, mnt, err, errlen);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Whether the comma-separated controller list names ctrl ("" names the
 * v2 hierarchy, whose list is empty). */
static bool names_ctrl(const char *list, const char *ctrl)
{
	size_t cl = strlen(ctrl);

	if (cl == 0)
		return list[0] == '\0';
	for (const char *p = list; *p != '\0';) {
		if (strncmp(p, ctrl, cl) == 0 && (p[cl] == ',' || p[cl] == '\0'))
			return true;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return false;
}

const char *cgroup_caller_path(const char *ctrl, const char **hier)
{
	for (size_t i = 0; i < n_caller; i++)
		if (names_ctrl(caller[i].name, ctrl)) {
			*hier = caller[i].name[0] ? caller[i].name : "unified";
			return caller[i].path;
		}
	return NULL;
}
