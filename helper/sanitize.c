/* SPDX-License-Identifier: ISC */
/*
 * The first thing the setuid helper does: make its process state its own.
 * The caller controls the environment, open fds, signal dispositions and
 * masks, umask and rlimits inherited through execve(2); see the "Secure
 * programming" notes in setuid(2)/execve(2) and sudo's sudo_edit/closefrom.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "helper.h"
#include "testhook.h"

void sanitize_process(int argc, char **argv)
{
	sigset_t all;
	int fd;

	(void)argc;
	(void)argv;
	/* Before anything (libc included) reads it. */
	clearenv();

	/* fds 0-2 must be open, or the next open() becomes "stderr". */
	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);
			if (n != fd)
				_exit(125);
		}

	/* Interval timers survive execve(2): a caller's ITIMER_REAL would
	 * SIGALRM the supervisor in the middle of a run. */
	{
		const struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		setitimer(ITIMER_VIRTUAL, &off, NULL);
		setitimer(ITIMER_PROF, &off, NULL);
	}
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	for (int s = 1; s < NSIG; s++) {
		if (s == SIGKILL || s == SIGSTOP)
			continue;
		signal(s, SIG_DFL);
	}
	/* Terminal-generated signals reach the helper whatever its uid; the
	 * client asks for interrupts over the control fd instead. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	umask(077);
}

/* The caller's oom_score_adj is inherited: 1000 would make the supervisor
 * the OOM killer's first choice. Called once we are root. */
void reset_oom_score(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, "0", 1);
		close(fd);
	}
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every fd but 0-2 and the ones named on the command line. */
void keep_fds(const int *fds, size_t n)
{
	int sorted[48 + 2]; /* + the test hook's two (testhook.h) */
	unsigned int next = 3;
	size_t all = n;

	if (n > 48)
		die("too many fds to keep");
	memcpy(sorted, fds, n * sizeof(int));
#ifdef SBX_TEST_HOOKS
	all += (size_t)test_hook_fds(sorted + n);
#endif
	qsort(sorted, all, sizeof(int), cmp_int);
	for (size_t i = 0; i < all; i++) {
		if (sorted[i] < 3)
			continue;
		if ((unsigned)sorted[i] > next)
			close_range(next, (unsigned)sorted[i] - 1, 0);
		next = (unsigned)sorted[i] + 1;
	}
	close_range(next, ~0U, 0);
	for (size_t i = 0; i < n; i++)
		if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0)
			die("fd %d named on the command line is not open", fds[i]);
}

/*
 * rlimits the caller set before execve(2) must not kill or starve the
 * helper midway: RLIMIT_CPU would SIGKILL the supervisor (leaving a cgroup
 * behind), RLIMIT_FSIZE would cut an SQLite write, tiny stack or address
 * space limits would crash it. Soft limits go up to the hard ones; a hard
 * limit we cannot undo (no CAP_SYS_RESOURCE is assumed) fails the run
 * before anything is created. The sandbox's own limits are set from the
 * policy, not inherited.
 */
int raise_rlimits(char *err, size_t errlen)
{
	static const struct {
		int res;
		const char *name;
		rlim_t min_hard; /* RLIM_INFINITY: must be unlimited */
	} need[] = {
		{RLIMIT_CPU, "RLIMIT_CPU", RLIM_INFINITY},
		{RLIMIT_FSIZE, "RLIMIT_FSIZE", RLIM_INFINITY},
		{RLIMIT_RTTIME, "RLIMIT_RTTIME", RLIM_INFINITY},
		{RLIMIT_AS, "RLIMIT_AS", 1ULL << 30},
		{RLIMIT_DATA, "RLIMIT_DATA", 1ULL << 30},
		{RLIMIT_STACK, "RLIMIT_STACK", 8ULL << 20},
		{RLIMIT_NOFILE, "RLIMIT_NOFILE", 64},
		{RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", 64},
	};
	const struct rlimit zero = {0, 0};
	struct rlimit rl;

	setrlimit(RLIMIT_CORE, &zero);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (getrlimit(need[i].res, &rl) < 0)
			continue;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need[i].min_hard) {
			snprintf(err, errlen, "%s hard limit %llu set by the caller is too low for sbx to run "
				 "safely; raise it (ulimit -H) and retry", need[i].name, (unsigned long long)rl.rlim_max);
			return -1;
		}
		/* root may raise a hard limit where it holds CAP_SYS_RESOURCE */
		struct rlimit want = {RLIM_INFINITY, RLIM_INFINITY};
		if (need[i].res != RLIMIT_NOFILE && setrlimit(need[i].res, &want) == 0)
			continue;
		rl.rlim_cur = rl.rlim_max;
		if (need[i].res == RLIMIT_NOFILE && rl.rlim_cur > 4096)
			rl.rlim_cur = 4096;
		if (setrlimit(need[i].res, &rl) < 0) {
			snprintf(err, errlen, "%s: %s", need[i].name, strerror(errno));
			return -1;
		}
	}
	return 0;
}
