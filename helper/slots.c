/* SPDX-License-Identifier: ISC */
/*
 * How many sbx-helper runs one user may have at once (max_runs_per_user in
 * sbx.conf, sbx.conf(5)). Every helper process is root's, so neither the
 * caller's RLIMIT_NPROC nor its cgroup's pids.max counts it: without a
 * bound of its own a member of group sbx could hold any number of them.
 *
 * One lock file per uid, RUNSTATEDIR/sbx/users/UID (root's, in root-only
 * directories), and a slot is one byte of it under an open file
 * description lock (F_OFD_SETLK, fcntl(2)): a run takes the first free
 * byte of 0..max-1 and holds it for its whole life, its children included
 * (the description is shared across fork). The kernel drops the lock when
 * the last process holding the description is gone, however it ended
 * (SIGKILL by root, a crash), so a slot cannot leak, and nothing the
 * caller has can take one: the file is not reachable to it. Lock slots
 * rather than a pids cgroup: the bound is on runs, not on processes
 * (a run has three to five), holds the same on cgroup v1 and v2, and is
 * checked before the run creates anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper.h"
#include "paths.h"

/* dirfd/NAME as a root-owned directory nobody else may write, made with
 * mode if missing; an O_PATH fd, or -1 with err. */
static int own_dir(int dirfd, const char *name, const char *shown, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", shown, strerror(errno));
		return -1;
	}
	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen, "%s: directory must be owned by root and not writable by others", shown);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int take_run_slot(uid_t uid, const char *user, uint64_t max, char *err, size_t errlen)
{
	char name[32], why[HELPER_ERR_LEN];
	struct stat st;
	int run, sbx, users, fd;

	run = open_trusted_dir(SBX_RUNSTATEDIR, why, sizeof(why));
	if (run < 0) {
		snprintf(err, errlen, "run slots: %.200s", why);
		return -1;
	}
	sbx = own_dir(run, "sbx", SBX_RUNSTATEDIR "/sbx", 0755, err, errlen);
	close(run);
	if (sbx < 0)
		return -1;
	users = own_dir(sbx, "users", SBX_RUNSTATEDIR "/sbx/users", 0700, err, errlen);
	close(sbx);
	if (users < 0)
		return -1;
	snprintf(name, sizeof(name), "%u", (unsigned)uid);
	fd = openat(users, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(users);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		snprintf(err, errlen, "run slots: " SBX_RUNSTATEDIR "/sbx/users/%s: %s", name,
			 fd < 0 ? strerror(errno) : "not a regular file owned by root");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (uint64_t i = 0; i < max; i++) {
		struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)i, .l_len = 1};
		if (fcntl(fd, F_OFD_SETLK, &l) == 0)
			return fd;
		if (errno != EAGAIN && errno != EACCES) {
			snprintf(err, errlen, "run slots: locking " SBX_RUNSTATEDIR "/sbx/users/%s: %s", name, strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	snprintf(err, errlen, "user %s already has %llu runs going, the most sbx.conf allows (max_runs_per_user); "
		 "wait for one to end", user, (unsigned long long)max);
	return -1;
}
