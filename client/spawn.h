/* SPDX-License-Identifier: ISC */
/* Starting sbx-helper with the argument vector and descriptors of proto.h. */
#ifndef SBX_CLIENT_SPAWN_H
#define SBX_CLIENT_SPAWN_H
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"
#include "paths.h"

/* Compiled in, never from the environment: the helper is what vouches for
 * the result. Tests may build the client with another -DSBX_HELPER_PATH. */
#ifndef SBX_HELPER_PATH
#define SBX_HELPER_PATH SBX_LIBEXECDIR "/sbx/sbx-helper"
#endif

/* The helper gets its descriptors at these numbers (proto.h --*-fd). */
#define HELPER_CODE_FD    3
#define HELPER_RESULT_FD  4
/* then the inputs (--input-fd) from 5 in order, and the session directory
 * (--work-fd) right after them */
#define HELPER_INPUT_FD0  5

struct helper {
	pid_t pid;
	int result_fd;   /* our end of the result socket, non-blocking: frames in, control bytes out */
	bool tty[2];     /* plain mode: our stdout, stderr is a terminal (ttysafe.h) */
};

/*
 * Fork and exec the helper: code_fd (consumed) at fd 3, the result socket
 * at 4, o->input_fds and o->work_fd (kept open in this process, for the
 * next attempt) from 5. Its fds 0-2 are ours: it never writes to them but
 * for a usage error before it has checked the socket (proto.h). The
 * environment is passed as is (the helper clears it). With SIGINT, SIGTERM
 * and SIGHUP blocked across the fork, *old_mask gets the mask to restore.
 * Dies with "sbx: PATH: why" (exit 125) if the helper cannot be executed.
 */
void helper_spawn(const struct run_opts *o, int code_fd, struct helper *h, sigset_t *old_mask);

#endif
