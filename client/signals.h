/* SPDX-License-Identifier: ISC */
/*
 * Passing the caller's signals to the payload. The helper runs as root and
 * ignores terminal signals, so the client turns them into control bytes
 * on the result socket (proto.h enum sbx_control): SIGINT -> interrupt,
 * SIGTERM and SIGHUP -> terminate. A third SIGINT shuts down our writing
 * side of the socket, which makes the helper kill the sandbox (the result
 * still arrives): the escape hatch for a payload that ignores SIGINT.
 */
#ifndef SBX_CLIENT_SIGNALS_H
#define SBX_CLIENT_SIGNALS_H
#include <signal.h>

/* Block SIGINT, SIGTERM and SIGHUP (old mask saved), so none is handled
 * between fork() and the handlers knowing the control fd. */
void signals_block(sigset_t *old);

/* Install the forwarding handlers writing to fd (the result socket; sent
 * with MSG_DONTWAIT: a handler never waits), ignore SIGPIPE, and restore
 * the old mask. */
void signals_forward(int fd, const sigset_t *old);

/* In the child before exec: default dispositions and the old mask, so the
 * helper starts clean. Async-signal-safe. */
void signals_child_reset(const sigset_t *old);

/* The helper is gone: stop writing to its socket (so that the descriptor
 * number can be reused) before the caller closes it. */
void signals_detach(void);

/* Whether SIGINT, SIGTERM or SIGHUP arrived since the handlers were
 * installed: the retry loop stops instead of asking the fixer. */
int signals_stop_requested(void);

#endif
