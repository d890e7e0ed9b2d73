/* SPDX-License-Identifier: ISC */
/* The local and the remote signer (signer.h). */
#include "signer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "merkle.h"
#include "signwire.h"

static int local_record(struct sbx_signer *s, struct sbx_audit *a, uint64_t seq,
			const unsigned char prev[32], const char *origin, const unsigned char *blob,
			size_t len, unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
			char *err, size_t errlen)
{
	unsigned char leaf[32];

	sbx_audit_leaf(blob, len, leaf);
	sbx_audit_chain(prev, leaf, chain);
	if (sbx_audit_sign(s->sk, origin, seq, chain, sig) < 0) {
		sbx_audit_seterr(err, errlen, "%s: signing failed", sbx_audit_path(a));
		return -1;
	}
	return 0;
}

static int local_checkpoint(struct sbx_signer *s, const struct sbx_checkpoint *cp, char *note,
			    char *err, size_t errlen)
{
	int n = sbx_checkpoint_sign(cp, s->sk, note);

	if (n < 0)
		sbx_audit_seterr(err, errlen, "checkpoint: cannot sign origin '%.64s'", cp->origin);
	return n;
}

void sbx_signer_local(struct sbx_signer *s, const unsigned char *sk)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->pk, sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES,
	       crypto_sign_PUBLICKEYBYTES);
	s->record = local_record;
	s->checkpoint = local_checkpoint;
	s->sk = sk;
	s->fd = -1;
}

static void put_u64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* One request and its reply. Returns the reply type, or -1 with err. */
static int ask(struct sbx_signer *s, unsigned type, const unsigned char *req, size_t len,
	       unsigned char **reply, size_t *rlen, char *err, size_t errlen)
{
	unsigned rtype = 0;

	if (sbx_sign_send(s->fd, type, req, len) < 0 ||
	    sbx_sign_recv(s->fd, &rtype, reply, rlen) != 1) {
		sbx_audit_seterr(err, errlen, "sbx-signer: %s", errno ? strerror(errno) : "no reply");
		return -1;
	}
	if (rtype == SBX_SIGN_REFUSED) {
		sbx_audit_seterr(err, errlen, "sbx-signer refused: %.300s", (const char *)*reply);
		free(*reply);
		*reply = NULL;
		return -1;
	}
	return (int)rtype;
}

/* Trust on first use: tell a signer without state where the log stands
 * (the records before seq: their tree, the chain value prev). */
static int init_signer(struct sbx_signer *s, struct sbx_audit *a, uint64_t seq,
		       const unsigned char prev[32], char *err, size_t errlen)
{
	unsigned char req[8 + 32 + SBX_FRONTIER_MAX], *reply = NULL;
	struct sbx_mtree t;
	size_t rlen, n;
	int rc;

	if (sbx_audit_tree(a, &t, err, errlen) < 0)
		return -1;
	if (t.size != seq - 1) {
		sbx_audit_seterr(err, errlen, "%s: the log's tree has %llu leaves before record %llu "
				 "(a gap: run sbx-audit verify)", sbx_audit_path(a),
				 (unsigned long long)t.size, (unsigned long long)seq);
		return -1;
	}
	put_u64(req, seq - 1);
	memcpy(req + 8, prev, 32);
	n = sbx_mtree_save(&t, req + 40);
	rc = ask(s, SBX_SIGN_INIT, req, 40 + n, &reply, &rlen, err, errlen);
	free(reply);
	if (rc < 0)
		return -1;
	if (rc != SBX_SIGN_OK) {
		sbx_audit_seterr(err, errlen, "sbx-signer: unexpected reply %d to INIT", rc);
		return -1;
	}
	return 0;
}

static int remote_record(struct sbx_signer *s, struct sbx_audit *a, uint64_t seq,
			 const unsigned char prev[32], const char *origin, const unsigned char *blob,
			 size_t len, unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
			 char *err, size_t errlen)
{
	size_t olen = strnlen(origin, SBX_ORIGIN_MAX + 1), rlen, hdr = 8 + 32 + 1 + olen;
	unsigned char *req, *reply = NULL;
	int rc, tries;

	if (olen > SBX_ORIGIN_MAX) {
		sbx_audit_seterr(err, errlen, "sbx-signer: origin too long");
		return -1;
	}
	req = malloc(hdr + len);
	if (req == NULL) {
		sbx_audit_seterr(err, errlen, "sbx-signer: out of memory");
		return -1;
	}
	put_u64(req, seq);
	memcpy(req + 8, prev, 32);
	req[40] = (unsigned char)olen;
	memcpy(req + 41, origin, olen); /* counted, not NUL-terminated */
	memcpy(req + hdr, blob, len);
	for (tries = 0; tries < 2; tries++) {
		rc = ask(s, SBX_SIGN_RECORD, req, hdr + len, &reply, &rlen, err, errlen);
		if (rc != SBX_SIGN_NEED_INIT)
			break;
		free(reply);
		reply = NULL;
		if (init_signer(s, a, seq, prev, err, errlen) < 0) {
			rc = -1;
			break;
		}
	}
	free(req);
	if (rc == SBX_SIGN_OK && rlen == 32 + crypto_sign_BYTES) {
		memcpy(chain, reply, 32);
		memcpy(sig, reply + 32, crypto_sign_BYTES);
		free(reply);
		return 0;
	}
	if (rc >= 0)
		sbx_audit_seterr(err, errlen, "sbx-signer: unexpected reply %d (%zu bytes)", rc, rlen);
	free(reply);
	return -1;
}

static int remote_checkpoint(struct sbx_signer *s, const struct sbx_checkpoint *cp, char *note,
			     char *err, size_t errlen)
{
	unsigned char req[8 + 32 + 1 + SBX_ORIGIN_MAX], *reply = NULL;
	size_t olen = strnlen(cp->origin, SBX_ORIGIN_MAX), rlen;
	int rc;

	put_u64(req, cp->size);
	memcpy(req + 8, cp->root, 32);
	req[40] = (unsigned char)olen;
	memcpy(req + 41, cp->origin, olen);
	rc = ask(s, SBX_SIGN_CHECKPOINT, req, 41 + olen, &reply, &rlen, err, errlen);
	if (rc == SBX_SIGN_OK && rlen > 0 && rlen < SBX_NOTE_MAX) {
		memcpy(note, reply, rlen + 1);
		free(reply);
		return (int)rlen;
	}
	if (rc >= 0)
		sbx_audit_seterr(err, errlen, "sbx-signer: unexpected reply %d to CHECKPOINT", rc);
	free(reply);
	return -1;
}

void sbx_signer_remote(struct sbx_signer *s, int fd, const unsigned char *pk)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->pk, pk, crypto_sign_PUBLICKEYBYTES);
	s->record = remote_record;
	s->checkpoint = remote_checkpoint;
	s->fd = fd;
}
