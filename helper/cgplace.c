/* SPDX-License-Identifier: ISC */
/*
 * Where the run cgroups go, decided from root-owned sources only:
 *  1. cgroup_root in sbx.conf, if set: v1 or v2 by what is mounted there;
 *  2. else /sys/fs/cgroup as a tmpfs of v1 hierarchies (v1 and hybrid
 *     hosts: the controllers are on v1);
 *  3. else (cgroup v2) the delegated subtree that sbx-cgroup.service names
 *     in RUNSTATEDIR/sbx/cgroup. The file must pass the same ownership
 *     walk as sbx.conf (root-owned, nothing on the way writable by others)
 *     and name a root-owned directory on a cgroup2 mount under
 *     /sys/fs/cgroup/. No caller-writable source is ever consulted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <bsd/string.h>
#include <linux/magic.h>

#include "helper.h"
#include "paths.h"

#define CG_MOUNT "/sys/fs/cgroup"
#define MARKER SBX_RUNSTATEDIR "/sbx/cgroup"
#define FIX "start sbx-cgroup.service (systemctl enable --now sbx-cgroup.service) " \
	    "or set cgroup_root in " SBX_SYSCONFDIR "/sbx/sbx.conf"

const char *cgroup_marker_path(void)
{
	return MARKER;
}

/* A cgroup2 directory owned by root: what a delegated subtree looks like. */
static bool v2_dir(const char *path)
{
	struct statfs sf;
	struct stat st;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC &&
	       lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0;
}

static int read_marker(char *root, size_t len, char *err, size_t errlen)
{
	char buf[PATH_MAX + 2], why[HELPER_ERR_LEN];
	ssize_t n;
	int fd = open_trusted(MARKER, why, sizeof(why));

	if (fd == -2) {
		snprintf(err, errlen, "cgroup v2: no delegated subtree (%s does not exist): " FIX, MARKER);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cgroup v2: %.120s: " FIX, why);
		return -1;
	}
	n = sbx_read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n <= 0 || (size_t)n >= len) {
		snprintf(err, errlen, "cgroup v2: %s is empty or too long: restart sbx-cgroup.service", MARKER);
		return -1;
	}
	buf[n] = '\0';
	/* one absolute path strictly below the cgroup mount, nothing odd in it */
	if (strncmp(buf, CG_MOUNT "/", sizeof(CG_MOUNT)) != 0 || buf[sizeof(CG_MOUNT)] == '\0' ||
	    strstr(buf, "..") != NULL || strstr(buf, "//") != NULL ||
	    strcspn(buf, "\n\r\t") != (size_t)n) {
		snprintf(err, errlen, "cgroup v2: %s does not name a directory under " CG_MOUNT "/: "
			 "restart sbx-cgroup.service", MARKER);
		return -1;
	}
	if (!v2_dir(buf)) {
		snprintf(err, errlen, "cgroup v2: delegated subtree %.100s (named in %s) is gone: "
			 "restart sbx-cgroup.service", buf, MARKER);
		return -1;
	}
	strlcpy(root, buf, len);
	return 0;
}

int cgroup_place(const struct sbx_config *c, char *root, size_t len, bool *v2, char *err, size_t errlen)
{
	struct statfs sf;

	if (c->cgroup_root[0]) {
		if (statfs(c->cgroup_root, &sf) < 0) {
			snprintf(err, errlen, "cgroup: cgroup_root %.100s (sbx.conf): %s", c->cgroup_root,
				 strerror(errno));
			return -1;
		}
		*v2 = sf.f_type == CGROUP2_SUPER_MAGIC;
		strlcpy(root, c->cgroup_root, len);
		return 0;
	}
	if (statfs(CG_MOUNT, &sf) < 0) {
		snprintf(err, errlen, "cgroup: " CG_MOUNT ": %s (no cgroup file system mounted?)", strerror(errno));
		return -1;
	}
	*v2 = sf.f_type == CGROUP2_SUPER_MAGIC;
	if (!*v2) {
		strlcpy(root, CG_MOUNT, len);
		return 0;
	}
	return read_marker(root, len, err, errlen);
}

const char *cgroup_fix_hint(void)
{
	return FIX;
}
