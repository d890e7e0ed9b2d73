/* SPDX-License-Identifier: ISC */
/* Small helpers shared by the helper's processes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>

#include "clock.h"
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

/*
 * Join a new session keyring (KEYCTL_JOIN_SESSION_KEYRING, keyctl(2)),
 * named NAME or anonymous ("_ses") for NULL: the keyrings a process
 * inherits through fork and execve are the caller's, and whoever possesses
 * a keyring may use every key in it with the possessor permissions. A
 * named one is created fresh only because the name is new (a run id): the
 * kernel would join an existing keyring of that name the process may
 * search. A kernel without CONFIG_KEYS (ENOSYS) has no keys to inherit.
 */
int new_session_keyring(const char *name, char *err, size_t errlen)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) >= 0 || errno == ENOSYS)
		return 0;
	snprintf(err, errlen, "a new session keyring: %s%s", strerror(errno),
		 errno == EDQUOT ? " (the key quota of this user is full: /proc/key-users, keyrings(7))" : "");
	return -1;
}

/* Until pid (our child) has exited or ms have passed; its status, or -1
 * (not reaped). Without a pidfd (pidfd_open(2), Linux 5.3) in 10 ms steps. */
static int reap_within(pid_t pid, int pfd, int ms)
{
	struct pollfd p = {.fd = pfd, .events = POLLIN};
	uint64_t until = (uint64_t)sbx_mono_ms() + (uint64_t)(ms > 0 ? ms : 0);
	int st;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		uint64_t now = (uint64_t)sbx_mono_ms();
		if (now >= until)
			return -1;
		if (pfd < 0 || poll(&p, 1, (int)(until - now)) < 0)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
}

int wait_timeout(pid_t pid, int timeout_ms)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int st = reap_within(pid, pfd, timeout_ms);

	if (st == -1) {
		/* A task in a frozen cgroup v1 freezer does not die of SIGKILL
		 * until it is thawed (the caller's own processes can be put in
		 * one it owns): bounded, then left unreaped (init reaps it
		 * after we exit). */
		kill(pid, SIGKILL);
		reap_within(pid, pfd, HELPER_REAP_MS);
	}
	if (pfd >= 0)
		close(pfd);
	return st;
}
