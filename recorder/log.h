/* SPDX-License-Identifier: ISC */
/*
 * The recorder's audit log: open, append a signed record, checkpoint,
 * close. Every use of the signing key is in log.c, so that workstream
 * audit can replace those three calls with requests to sbx-signer (the
 * _sbxsign account holds the key; the recorder then never has it).
 */
#ifndef SBX_RECORDER_LOG_H
#define SBX_RECORDER_LOG_H
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct rec_log;

/* Open LOCALSTATEDIR/lib/sbx/audit.db and the means to sign (origin: the
 * signature origin, sbx.conf audit_origin or the host name). 0, or -1 with
 * err ("PATH: why"). */
int rec_log_open(struct rec_log **out, const char *origin, char *err, size_t errlen);

/* Append rec signed (sbx_audit_append): rec->seq assigned, chain_out the
 * new chain hash. 0, or -1 with err and nothing committed. */
int rec_log_append(struct rec_log *l, struct sbx_record *rec, unsigned char chain_out[32],
		   char *err, size_t errlen);

/* A signed checkpoint of the log as it stands (sbx_audit_checkpoint, due
 * after every END). 1 written, 0 nothing new since the last, -1 with err. */
int rec_log_checkpoint(struct rec_log *l, char *err, size_t errlen);

/* Close the log and forget the key. */
void rec_log_close(struct rec_log *l);

#endif
