/* SPDX-License-Identifier: ISC */
#include "signals.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

static volatile sig_atomic_t control_fd = -1;
static volatile sig_atomic_t interrupts;
static volatile sig_atomic_t stop_requested;

/* Control bytes on the result socket (proto.h enum sbx_control); the third
 * SIGINT shuts our writing side down, which the helper takes as the client
 * gone (the sandbox is killed) while we still read the result. send(2)
 * and shutdown(2) are async-signal-safe. */
static void on_signal(int sig)
{
	int saved = errno, fd = control_fd;
	unsigned char c = sig == SIGINT ? SBX_CONTROL_INTERRUPT : SBX_CONTROL_TERMINATE;

	stop_requested = 1;
	if (fd >= 0) {
		(void)!send(fd, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sig == SIGINT && ++interrupts >= 3) {
			control_fd = -1;
			shutdown(fd, SHUT_WR);
		}
	}
	errno = saved;
}

void signals_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

void signals_forward(int fd, const sigset_t *old)
{
	struct sigaction sa;

	control_fd = fd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* One handler at a time: the count and the close must not race. */
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A dead helper must give EPIPE on the socket, not kill us before we
	 * report its status. */
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, old, NULL);
}

void signals_child_reset(const sigset_t *old)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

void signals_detach(void)
{
	control_fd = -1;
	interrupts = 0;
}

int signals_stop_requested(void)
{
	return stop_requested;
}
