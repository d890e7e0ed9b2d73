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
