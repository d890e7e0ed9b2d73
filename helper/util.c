/* SPDX-License-Identifier: ISC */
/* Small helpers shared by the helper's processes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper.h"
#include "proto.h"

int write_file(const char *path, const char *data, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || sbx_write_all(fd, data, strlen(data)) < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (close(fd) < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Become uid/gid for good: no supplementary groups, all three ids set,
 * every capability set emptied (libcap), not dumpable. Verified afterwards
 * rather than trusted (setuid(2) failures have been exploited before).
 */
int drop_to(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	cap_t caps;

	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		snprintf(err, errlen, "dropping to uid %u: %s", (unsigned)uid, strerror(errno));
		return -1;
	}
	caps = cap_init();
	if (caps == NULL || cap_set_proc(caps) < 0) {
		snprintf(err, errlen, "clearing capabilities: %s", strerror(errno));
		cap_free(caps);
		return -1;
	}
	cap_free(caps);
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
	    eu != uid || su != uid || rg != gid || eg != gid || sg != gid || getgroups(0, NULL) != 0 ||
	    (uid != 0 && setuid(0) == 0)) {
		snprintf(err, errlen, "privilege drop to uid %u did not take", (unsigned)uid);
		return -1;
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* An empty permitted set is not enough: the bounding set is still
	 * full, so exec of a file-capability binary would hand some back. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int wait_timeout(pid_t pid, int timeout_ms)
{
	int st, pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = pfd, .events = POLLIN};

	if (pfd >= 0) {
		while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	if (waitpid(pid, &st, WNOHANG) == pid)
		return st;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}
