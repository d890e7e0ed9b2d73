/* SPDX-License-Identifier: ISC */
/*
 * The helper's error line in --json mode. Its stderr is a pipe carrying the
 * payload's stderr and, on failure, one line "sbx-helper: why" (proto.h);
 * when no result arrives that line is the error to report.
 */
#ifndef SBX_CLIENT_ERRLINE_H
#define SBX_CLIENT_ERRLINE_H
#include <stdbool.h>
#include <stddef.h>

#define ERRLINE_MAX 1024 /* longer lines are cut */

struct errline {
	char cur[ERRLINE_MAX];
	size_t n;
	char last[ERRLINE_MAX]; /* last complete line starting "sbx-helper: " */
	bool have;
};

/* Feed bytes as they arrive; lines may be split across calls. */
void errline_feed(struct errline *e, const char *buf, size_t n);

/* End of stream: a final line without "\n" counts too. */
void errline_finish(struct errline *e);

#endif
