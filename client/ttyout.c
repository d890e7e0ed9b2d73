/* SPDX-License-Identifier: ISC */
#include "ttyout.h"
#include "clock.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define WRITE_MAX 4096 /* bytes per write(2), so one timed write moves on */

static void on_alarm(int sig)
{
	(void)sig; /* only interrupts a write(2) */
}

void ttyout_add(struct ttyout *t, const char *p, size_t n)
{
	if (n == 0)
		return; /* memcpy() into a buffer not yet allocated is undefined even for 0 bytes */
	if (t->gone) {
		t->dropped += n;
		return;
	}
	if (t->off > 0 && t->len + n > t->cap) { /* reuse what was written */
		memmove(t->buf, t->buf + t->off, t->len - t->off);
		t->len -= t->off;
		t->off = 0;
	}
	if (t->len + n > t->cap) {
		size_t want = t->cap ? t->cap : 65536;
		char *nb;

		while (want < t->len + n)
			want *= 2;
		nb = realloc(t->buf, want);
		if (nb == NULL) {
			t->dropped += n;
			return;
		}
		t->buf = nb;
		t->cap = want;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

bool ttyout_flush(struct ttyout *t)
{
	static bool armed_handler;
	const struct itimerval arm = {{0, 0}, {0, 200000}}, disarm = {{0, 0}, {0, 0}};

	if (!armed_handler) {
		/* no SA_RESTART: the timer must end a blocked write(2) */
		struct sigaction sa = {.sa_handler = on_alarm};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		armed_handler = true;
	}
	while (t->off < t->len && !t->gone) {
		size_t n = t->len - t->off < WRITE_MAX ? t->len - t->off : WRITE_MAX;
		ssize_t w;

		setitimer(ITIMER_REAL, &arm, NULL);
		w = write(t->fd, t->buf + t->off, n);
		setitimer(ITIMER_REAL, &disarm, NULL);
		if (w > 0) {
			t->off += (size_t)w;
		} else if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			return false; /* not reading now: try again later */
		} else {
			t->gone = true;
			t->dropped += t->len - t->off;
		}
	}
	t->off = t->len = 0;
	return true;
}


void ttyout_finish(struct ttyout *t, int timeout_ms)
{
	long long end = sbx_mono_ms() + timeout_ms;

	while (!ttyout_flush(t) && sbx_mono_ms() < end) {
		/* a write(2) waits up to 200 ms; this only matters for EAGAIN */
		const struct timespec pause = {0, 10000000};
		nanosleep(&pause, NULL);
	}
	t->dropped += t->len - t->off;
	t->off = t->len = 0;
	free(t->buf);
	t->buf = NULL;
	t->cap = 0;
}
