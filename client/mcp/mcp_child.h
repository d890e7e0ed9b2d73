/* SPDX-License-Identifier: ISC */
/* One execute_code call as a child `sbx run --jsonl`, in a private work
 * directory: DIR/code (its stdin), DIR/in/NAME (--input), DIR/out
 * (--artifacts). */
#ifndef SBX_CLIENT_MCP_CHILD_H
#define SBX_CLIENT_MCP_CHILD_H
#include <sys/types.h>

#include "mcp.h"

struct mcp_child {
	pid_t pid;
	int out_fd;     /* the child's stdout (JSONL events): non-blocking, close-on-exec */
	int out_dirfd;  /* DIR/out, where the child saved the artifacts */
	int err_fd;     /* a tool child's stderr (a memfd), or -1 */
	char dir[512];  /* "" when there is none */
};

/*
 * Make the work directory (mkdtemp in $TMPDIR if absolute and short
 * enough, else /tmp; mode 0700), write the code
 * and files into it, and start `/proc/self/exe run --jsonl --artifacts
 * DIR/out [--lang L] [--policy P] [--timeout MSms] [--session S |
 * --workspace W] [--input DIR/in/NAME]... -` (argv, no shell; W: sbx mcp
 * --workspace) with the code on stdin,
 * stdout a pipe, stderr ours. Returns 0, or -1 with err set and nothing
 * left behind.
 */
int mcp_child_start(const struct mcp_args *a, struct mcp_child *c, char *err, size_t errlen);

/*
 * Start `/proc/self/exe ARGV...` (sbx changes, sbx apply: argv[0] is
 * "sbx") with stdin /dev/null, stdout a non-blocking pipe (c->out_fd) and
 * stderr a memfd (c->err_fd) whose text explains a failure; c's work
 * directory and out_dirfd are left as they are. 0, or -1 with err set.
 */
int mcp_child_spawn(char *const *argv, struct mcp_child *c, char *err, size_t errlen);

/* Close the descriptors and remove the work directory (the child must be
 * reaped). */
void mcp_child_cleanup(struct mcp_child *c);

#endif
