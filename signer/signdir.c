/* SPDX-License-Identifier: ISC */
/* The signer's directory (signdir.h). */
#include "signdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditdb.h"
#include "paths.h"

int signdir_open(struct signdir *d, const char *dir, char *err, size_t errlen)
{
	char path[4200];
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->lock = -1;
	if ((size_t)snprintf(d->dir, sizeof(d->dir), "%s", dir) >= sizeof(d->dir)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	if (stat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	d->uid = st.st_uid;
	d->gid = st.st_gid;
	snprintf(path, sizeof(path), "%s/audit.key", dir);
	if (sbx_key_load_secret(path, d->sk, err, errlen) < 0)
		return -1;
	sodium_mlock(d->sk, sizeof(d->sk));
	snprintf(path, sizeof(path), "%s/lock", dir);
	d->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->lock < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		sodium_memzero(d->sk, sizeof(d->sk));
		return -1;
	}
	/* root (sbx-audit) must leave the signer able to use its files */
	if (geteuid() == 0 && fchown(d->lock, d->uid, d->gid) < 0) {
		snprintf(err, errlen, "%s: chown: %s", path, strerror(errno));
		signdir_close(d);
		return -1;
	}
	return 0;
}

void signdir_close(struct signdir *d)
{
	sodium_memzero(d->sk, sizeof(d->sk));
	if (d->lock >= 0)
		close(d->lock);
	d->lock = -1;
}

/* Load the state under the lock; *locked set when the lock is held. */
static int begin(struct signdir *d, struct sign_state *st, char *path, size_t plen, char *why,
		 size_t whylen)
{
	snprintf(path, plen, "%s/state", d->dir);
	while (flock(d->lock, LOCK_EX) < 0)
		if (errno != EINTR) {
			snprintf(why, whylen, "%s/lock: %s", d->dir, strerror(errno));
			return -1;
		}
	if (sign_state_load(path, st, why, whylen) < 0) {
		flock(d->lock, LOCK_UN);
		return -1;
	}
	return 0;
}

/* Save (on SIGN_DO) and unlock. */
static enum sign_verdict end(struct signdir *d, const struct sign_state *st, const char *path,
			     enum sign_verdict v, char *why, size_t whylen)
{
	if (v == SIGN_DO && sign_state_save(path, st, why, whylen) < 0)
		v = SIGN_REFUSE;
	else if (v == SIGN_DO && geteuid() == 0 && chown(path, d->uid, d->gid) < 0) {
		snprintf(why, whylen, "%s: chown: %s", path, strerror(errno));
		v = SIGN_REFUSE;
	}
	flock(d->lock, LOCK_UN);
	return v;
}

enum sign_verdict signdir_record(struct signdir *d, uint64_t seq, const unsigned char prev[32],
				 const char *origin, const unsigned char *blob, size_t len,
				 unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
				 char *why, size_t whylen)
{
	struct sign_state st;
	char path[4200];
	enum sign_verdict v;

	if (begin(d, &st, path, sizeof(path), why, whylen) < 0)
		return SIGN_REFUSE;
	v = sign_record(&st, seq, prev, origin, blob, len, chain, why, whylen);
	if (v == SIGN_DO && sbx_audit_sign(d->sk, origin, seq, chain, sig) < 0) {
		snprintf(why, whylen, "signing failed (origin)");
		v = SIGN_REFUSE;
	}
	return end(d, &st, path, v, why, whylen);
}

enum sign_verdict signdir_checkpoint(struct signdir *d, const struct sbx_checkpoint *cp,
				     char *note, int *len, char *why, size_t whylen)
{
	struct sign_state st;
	char path[4200];
	enum sign_verdict v;

	if (begin(d, &st, path, sizeof(path), why, whylen) < 0)
		return SIGN_REFUSE;
	v = sign_checkpoint(&st, cp, why, whylen);
	if (v == SIGN_DO && (*len = sbx_checkpoint_sign(cp, d->sk, note)) < 0) {
		snprintf(why, whylen, "signing failed (origin)");
		v = SIGN_REFUSE;
	}
	return end(d, &st, path, v, why, whylen);
}

enum sign_verdict signdir_init(struct signdir *d, uint64_t size, const unsigned char chain[32],
			       const unsigned char *frontier, size_t flen, char *why, size_t whylen)
{
	struct sign_state st;
	char path[4200];

	if (begin(d, &st, path, sizeof(path), why, whylen) < 0)
		return SIGN_REFUSE;
	return end(d, &st, path, sign_init(&st, size, chain, frontier, flen, why, whylen), why,
		   whylen);
}
