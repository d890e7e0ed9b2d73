/* SPDX-License-Identifier: ISC */
/* sbx-audit show: the records of one run, as read and decoded. */
#ifndef SBX_AUDIT_SHOW_H
#define SBX_AUDIT_SHOW_H
#include "cli.h"

#define SHOW_MAX_RECORDS 1000000 /* a run has two, a live session two per call besides */

struct shown {
	int64_t seq;                       /* row seq */
	int ok;                            /* blob decoded into rec */
	int has_chain;
	struct sbx_record rec;             /* decoded blob (free with sbx_record_free) */
	char why[200];                     /* !ok: why the blob did not decode */
	char origin[SBX_ORIGIN_MAX + 1];   /* stored origin, cut to fit */
	unsigned char chain[32];
};

/* Human-readable details of the records, START first. */
void show_text(const struct shown *r, size_t n);

/*
 * {"id": RUN, "start": {...} | null, "end": {...} | null, "records": [...]}
 * where "records" lists every row in seq order (normally START and END).
 */
json_t *show_json(const char *run_id, const struct shown *r, size_t n);

#endif
