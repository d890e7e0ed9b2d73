/* SPDX-License-Identifier: ISC */
/* The recorder's audit log and signing (log.h). */
#include "log.h"

#include <syslog.h>

#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <bsd/string.h>

#include "checkpoint.h"
#include "proto.h"
#include "signer.h"
#include "paths.h"
#include "rundesc.h"
#include "ckptwitness.h"

struct rec_log {
	struct sbx_audit *db;
	struct sbx_signer sg;       /* sbx-signer at SBX_REC_FD_SIGNER: the key is not here */
	char origin[SBX_ORIGIN_MAX + 1];
};

int rec_log_open(struct rec_log **out, const char *origin, char *err, size_t errlen)
{
	const char *db = SBX_LOCALSTATEDIR "/lib/sbx/audit.db";
	const char *pub = SBX_SYSCONFDIR "/sbx/audit.pub";
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	struct rec_log *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (l == NULL) {
		strlcpy(err, "out of memory", errlen);
		return -1;
	}
	strlcpy(l->origin, origin, sizeof(l->origin));
	if (sodium_init() < 0) {
		strlcpy(err, "libsodium init failed", errlen);
		free(l);
		return -1;
	}
	if (sbx_key_load_public(pub, pk, err, errlen) < 0 || sbx_audit_open(db, 0, &l->db, err, errlen) < 0) {
		rec_log_close(l);
		return -1;
	}
	sbx_signer_remote(&l->sg, SBX_REC_FD_SIGNER, pk);
	*out = l;
	return 0;
}

int rec_log_append(struct rec_log *l, struct sbx_record *rec, unsigned char chain_out[32], char *err,
		   size_t errlen)
{
	return sbx_audit_append_with(l->db, rec, &l->sg, l->origin, chain_out, err, errlen);
}

int rec_log_checkpoint(struct rec_log *l, const struct sbx_run_desc *d, char *err, size_t errlen)
{
	char note[SBX_NOTE_MAX], line[SBX_CKPT_SYSLOG_MAX];
	int rc = sbx_audit_checkpoint_with(l->db, &l->sg, l->origin, 0, 0, note, err, errlen);

	/* the whole note leaves the host (syslog, authpriv: openlog by the
	 * recorder); sbx-audit verify --witness reads it back */
	if (rc == 1 && sbx_checkpoint_syslog(note, line, sizeof(line)) == 0)
		syslog(LOG_INFO, "%s", line);
	if (rc == 1)
		witness_deliver(d->witness_dir, d->witness_command, d->run_id, note);
	return rc;
}

void rec_log_close(struct rec_log *l)
{
	if (l == NULL)
		return;
	if (l->db != NULL)
		sbx_audit_close(l->db);
	free(l);
}

int rec_log_changeset_check(struct rec_log *l, const char *run, uint32_t uid, const char *sha,
			    const char **verdict, char *err, size_t errlen)
{
	char got[72];
	uint32_t ruid;
	int rc = sbx_audit_end_changeset(l->db, run, &ruid, got, sizeof(got), err, errlen);

	if (rc < 0)
		return -1;
	if (rc == 1)
		*verdict = "no such run";
	else if (ruid != uid)
		*verdict = "another user's run";
	else if (got[0] == '\0')
		*verdict = "the run has no changeset";
	else if (strcmp(got, sha) != 0)
		*verdict = "changeset differs from the run's";
	else
		*verdict = "verified";
	return 0;
}

int rec_log_parent_check(struct rec_log *l, const struct sbx_run_desc *d, const char **verdict, char *err,
			 size_t errlen)
{
	struct sbx_start_claims p;
	int rc = sbx_audit_start_claims(l->db, d->parent_id, &p, err, errlen);

	if (rc < 0)
		return -1;
	if (rc == 1)
		*verdict = "no such run";
	else if (p.uid != d->uid)
		*verdict = "another user's run";
	else if (d->session[0] == '\0')
		/* the chain's name: sbx's retry loop always gives one
		 * (client/loop.c), so two runs without are not one chain */
		*verdict = "no session";
	else if (strcmp(p.session, d->session) != 0)
		*verdict = "another session";
	else if (p.attempt + 1 != d->attempt)
		*verdict = "not the previous attempt";
	else if (strcmp(p.language, d->language) != 0)
		*verdict = "another language";
	else if (strcmp(p.policy, d->policy) != 0)
		*verdict = "another policy";
	else if (p.outcome[0] == '\0')
		*verdict = "parent not ended"; /* a retry starts after what it retries */
	else if (strcmp(p.outcome, "ok") == 0)
		*verdict = "parent ended ok"; /* nothing to retry */
	else
		*verdict = "verified";
	return 0;
}
