/* SPDX-License-Identifier: ISC */
/* recorder/workspace.c: --workspace's changeset and sbx apply's records. */
#ifndef SBX_RECORDER_WORKSPACE_H
#define SBX_RECORDER_WORKSPACE_H
#include <jansson.h>

#include "record.h"
#include "recorder.h"

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
