/* SPDX-License-Identifier: ISC */
/* recorder/workspace.c: --workspace's changeset and sbx apply's records. */
#ifndef SBX_RECORDER_WORKSPACE_H
#define SBX_RECORDER_WORKSPACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "record.h"
#include "recorder.h"

/*
 * The manifest's entry lines and its "end incomplete REASON" line
 * (docs/workspace.md "manifest"), counted over reads of any size: a line
 * that straddles two reads counts once (the count END signs as
 * changeset_entries must be the manifest's, whatever the boundaries).
 * Zero the struct, feed every byte in order, then ws_scan_end.
 */
struct ws_scan {
	uint64_t entries;
	bool incomplete;
	char reason[181];   /* REASON, cut at 180 bytes */
	char head[15 + 180]; /* the current line's first bytes: the word and REASON */
	size_t head_len;
};
void ws_scan_feed(struct ws_scan *s, const char *buf, size_t n);
void ws_scan_end(struct ws_scan *s);

/* The collector's manifest (a sealed memfd, which this takes): hashed,
 * its entries counted; or the collector's reason there is none. */
void ws_take_manifest(struct rec *c, int fd);
void ws_note(struct rec *c, const char *msg, size_t n);
/* END's changeset fields (with SBX_DESC_WORKSPACE): 0, or -1 with err. */
int ws_end_fields(struct rec *c, struct sbx_record *end, char *err, size_t errlen);
/* The result's "changeset" object, or NULL without a workspace. */
json_t *ws_result_json(const struct rec *c);
/* SBX_DESC_APPLY: one APPLY record of the report in c->code, the result
 * frame, exit. */
_Noreturn void ws_apply_run(struct rec *c, const char *origin);

#endif
