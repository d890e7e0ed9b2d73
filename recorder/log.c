/* SPDX-License-Identifier: ISC */
/* The recorder's audit log and signing (log.h). */
#include "log.h"

#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <bsd/string.h>

#include "checkpoint.h"
#include "paths.h"

struct rec_log {
	struct sbx_audit *db;
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	char origin[SBX_ORIGIN_MAX + 1];
};

int rec_log_open(struct rec_log **out, const char *origin, char *err, size_t errlen)
{
	const char *db = SBX_LOCALSTATEDIR "/lib/sbx/audit.db";
	const char *key = SBX_LOCALSTATEDIR "/lib/sbx/audit.key";
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
	if (sbx_key_load_secret(key, l->sk, err, errlen) < 0 || sbx_audit_open(db, 0, &l->db, err, errlen) < 0) {
		rec_log_close(l);
		return -1;
	}
	*out = l;
	return 0;
}

int rec_log_append(struct rec_log *l, struct sbx_record *rec, unsigned char chain_out[32], char *err,
		   size_t errlen)
{
	return sbx_audit_append(l->db, rec, l->sk, l->origin, chain_out, err, errlen);
}

int rec_log_checkpoint(struct rec_log *l, char *err, size_t errlen)
{
	return sbx_audit_checkpoint(l->db, l->sk, l->origin, 0, 0, NULL, err, errlen);
}

void rec_log_close(struct rec_log *l)
{
	if (l == NULL)
		return;
	sodium_memzero(l->sk, sizeof(l->sk));
	if (l->db != NULL)
		sbx_audit_close(l->db);
	free(l);
}
