/* SPDX-License-Identifier: ISC */
/*
 * sbx-collector: what a run left behind, copied out as the caller, after
 * every sandboxed process is dead (common/proto.h "collector" for how it is
 * started). Its own program, not a fork of the setuid helper: it runs as
 * the caller and reads what the payload wrote, so none of that parsing
 * happens in an image root ever ran.
 */
#ifndef SBX_COLLECTOR_H
#define SBX_COLLECTOR_H
#include <stdint.h>

#include "proto.h"

struct collect {
	uint64_t artifacts;       /* files returned from /out at most (policy artifacts) */
	uint64_t out_bytes;       /* bytes of them all together (policy out_size) */
	uint64_t workspace_bytes; /* what the upper layer can hold (policy workspace_size) */
	char run_id[SBX_ID_LEN + 1];
	int art;                  /* the recorder's artifact channel */
	int outdir, upper, lower, csdir; /* -1: none */
};

/* artifacts.c: /out's regular files, as sealed memfds on c->art, and
 * every file not returned, with why; -1 when the recorder was not told of
 * every file (/out unread, a message not sent): then no SBX_COLLECT_DONE. */
int artifacts_collect(const struct collect *c);
/* changeset.c: the changeset of the upper layer against the lower,
 * written into csdir, its manifest sent on c->art (docs/workspace.md). */
void changeset_collect(const struct collect *c);

#endif
