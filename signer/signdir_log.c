/* SPDX-License-Identifier: ISC */
/*
 * signdir_signer (signdir.h): the signer's directory used in-process by
 * sbx-audit as root, which needs the log itself (sbx_audit_tree) to
 * initialise a new signer. Its own file so that sbx-signer, which never
 * opens the log, links none of the log's code and neither SQLite nor
 * jansson (make check-linkage).
 */
#include <stdio.h>
#include <string.h>

#include "auditdb.h"
#include "signdir.h"

static int dir_record(struct sbx_signer *s, struct sbx_audit *a, uint64_t seq,
		      const unsigned char prev[32], const char *origin, const unsigned char *blob,
		      size_t len, unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
		      char *err, size_t errlen)
{
	struct signdir *d = s->dir;
	char why[400] = "";
	enum sign_verdict v = signdir_record(d, seq, prev, origin, blob, len, chain, sig, why,
					     sizeof(why));

	if (v == SIGN_NEED_INIT) {
		unsigned char fr[SBX_FRONTIER_MAX];
		struct sbx_mtree t;
		if (sbx_audit_tree(a, &t, err, errlen) < 0)
			return -1;
		if (t.size + 1 != seq) {
			snprintf(err, errlen, "%s: the log's tree has %llu leaves before record %llu",
				 sbx_audit_path(a), (unsigned long long)t.size, (unsigned long long)seq);
			return -1;
		}
		v = signdir_init(d, t.size, prev, fr, sbx_mtree_save(&t, fr), why, sizeof(why));
		if (v == SIGN_DO)
			v = signdir_record(d, seq, prev, origin, blob, len, chain, sig, why, sizeof(why));
	}
	if (v != SIGN_DO) {
		snprintf(err, errlen, "signer %s refused: %s", d->dir, why);
		return -1;
	}
	return 0;
}

static int dir_checkpoint(struct sbx_signer *s, const struct sbx_checkpoint *cp, char *note,
			  char *err, size_t errlen)
{
	struct signdir *d = s->dir;
	char why[400] = "";
	int len = -1;

	if (signdir_checkpoint(d, cp, note, &len, why, sizeof(why)) != SIGN_DO) {
		snprintf(err, errlen, "signer %s refused: %s", d->dir, why);
		return -1;
	}
	return len;
}

void signdir_signer(struct sbx_signer *s, struct signdir *d)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->pk, d->sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES,
	       crypto_sign_PUBLICKEYBYTES);
	s->record = dir_record;
	s->checkpoint = dir_checkpoint;
	s->dir = d;
	s->fd = -1;
}
