/* SPDX-License-Identifier: ISC */
/*
 * The recorder's audit log: open, append a signed record, checkpoint,
 * close. The recorder never has the signing key: every record and
 * checkpoint is signed by sbx-signer (account _sbxsign) over the socket at
 * SBX_REC_FD_SIGNER (auditlog/signer.h, signwire.h), which refuses to sign
 * a rolled-back history.
 */
#ifndef SBX_RECORDER_LOG_H
#define SBX_RECORDER_LOG_H
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "rundesc.h"

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
 * after every END), logged whole to syslog and, when d names them, given
 * to the witnesses of sbx.conf (ckptwitness.h). 1 written, 0 nothing new
 * since the last, -1 with err. */
struct sbx_run_desc;
int rec_log_checkpoint(struct rec_log *l, const struct sbx_run_desc *d, char *err, size_t errlen);

/* Close the log and forget the key. */
void rec_log_close(struct rec_log *l);

/*
 * --parent checked against the log (issue 11, finding 9, and the review's
 * finding 7): "verified" when the parent's START is there, of the same
 * caller, in the same non-empty session (label), one attempt before, of
 * the same language and policy, and the parent has ended with an outcome
 * other than ok; else the first that fails: "no such run", "another user's
 * run", "no session", "another session", "not the previous attempt",
 * "another language", "another policy", "parent not ended", "parent ended
 * ok". The claim itself stays in the record's parent field; sbx-audit(1)
 * parent_check. 0, or -1 on a read error.
 */
int rec_log_parent_check(struct rec_log *l, const struct sbx_run_desc *d, const char **verdict, char *err,
			 size_t errlen);

/* sbx apply's claim (recorder/workspace.c): run's END belongs to uid and
 * signs changeset sha (hex); *verdict "verified" or why not. 0, or -1. */
int rec_log_changeset_check(struct rec_log *l, const char *run, uint32_t uid, const char *sha,
			    const char **verdict, char *err, size_t errlen);

#endif
