/* SPDX-License-Identifier: ISC */
#ifndef SBX_AUDIT_EXPORTREC_H
#define SBX_AUDIT_EXPORTREC_H
#include <stdint.h>

struct cli;
/*
 * Write the records export (shipfile.h) of c's log to stdout: records with
 * seq > after up to the newest checkpoint, and the checkpoints in that
 * range. *last gets the newest checkpoint's size (after when nothing is
 * new). Returns 0, or -1 after printing why.
 */
int export_records(const struct cli *c, int64_t after, int64_t *last);

#endif
