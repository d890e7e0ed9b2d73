/* SPDX-License-Identifier: ISC */
/*
 * The program's output on our own stdout and stderr in plain mode, when we
 * pipe it (a terminal: ttysafe.h). These fds are the caller's and stay
 * blocking (their flags are shared with the shell), and a terminal nobody
 * reads, or one paused with Ctrl-S, would block write(2) for ever. So each
 * write is bounded by a 200 ms timer, like the recorder's (recorder.c), and
 * what the terminal has not taken waits here, so that sbx keeps reading
 * the helper and the run ends on time whatever the terminal does.
 */
#ifndef SBX_CLIENT_TTYOUT_H
#define SBX_CLIENT_TTYOUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ttyout {
	int fd;          /* 1 or 2 */
	char *buf;       /* bytes [off, len) not yet written */
	size_t off, len, cap;
	bool gone;       /* a write failed: the rest is dropped */
	bool stalled;    /* the last write timed out: wait for POLLOUT before the next */
	uint64_t dropped;
};

/* Queue n bytes (dropped, and counted, once the fd is gone or out of memory). */
void ttyout_add(struct ttyout *t, const char *p, size_t n);

/* Write what the fd takes now; each write(2) waits at most 200 ms.
 * Returns true when nothing is left; false with stalled set when a write
 * timed out (the caller waits for POLLOUT before trying again). */
bool ttyout_flush(struct ttyout *t);

/* At the end: keep writing for at most timeout_ms, then drop the rest
 * (counted in t->dropped) and free the buffer. */
void ttyout_finish(struct ttyout *t, int timeout_ms);

#endif
