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
#include <sys/stat.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "helper.h"

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

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every fd but 0-2 and the ones named on the command line. */
void keep_fds(const int *fds, size_t n)
{
	int sorted[8];
	unsigned int next = 3;

	if (n > 8)
		die("too many fds to keep");
	memcpy(sorted, fds, n * sizeof(int));
	qsort(sorted, n, sizeof(int), cmp_int);
	for (size_t i = 0; i < n; i++) {
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
 * Limits the caller set must not break the helper midway: a low
 * RLIMIT_FSIZE would kill the recorder inside an SQLite write. Soft limits
 * go up to the hard ones; a hard limit we cannot undo (no CAP_SYS_RESOURCE
 * is assumed) fails the run before it starts.
 */
int raise_rlimits(char *err, size_t errlen)
{
	struct rlimit rl;
	const struct rlimit zero = {0, 0};

	setrlimit(RLIMIT_CORE, &zero);
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0) {
		if (rl.rlim_max != RLIM_INFINITY) {
			snprintf(err, errlen, "RLIMIT_FSIZE hard limit %llu set by the caller; "
				 "the audit log could not be written", (unsigned long long)rl.rlim_max);
			return -1;
		}
		rl.rlim_cur = RLIM_INFINITY;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_max < 64) {
			snprintf(err, errlen, "RLIMIT_NOFILE hard limit %llu set by the caller is below 64",
				 (unsigned long long)rl.rlim_max);
			return -1;
		}
		rl.rlim_cur = rl.rlim_max > 4096 ? 4096 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return 0;
}
