/* SPDX-License-Identifier: ISC */
/*
 * The signer's directory (LOCALSTATEDIR/lib/sbx-signer, 0700 _sbxsign):
 * audit.key (0400), state (state.h), lock. Every request takes the lock,
 * loads the state, applies state.h's rule, signs, saves the state before
 * the signature leaves, and unlocks: concurrent signers (one per run) and
 * sbx-audit as root (rotate, checkpoint --write) share one history.
 */
#ifndef SBX_SIGNDIR_H
#define SBX_SIGNDIR_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "signer.h"
#include "state.h"

#define SBX_SIGNER_DIR SBX_LOCALSTATEDIR "/lib/sbx-signer"

struct signdir {
	char dir[4096];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	int lock;
	uid_t uid;                  /* the directory's owner: files root writes */
	gid_t gid;                  /* here (sbx-audit) are given to it */
};

/* Load dir/audit.key and open dir/lock. 0, or -1 with err. */
int signdir_open(struct signdir *d, const char *dir, char *err, size_t errlen);
void signdir_close(struct signdir *d);

/* The rules of state.h with the directory's state; on SIGN_DO chain and
 * sig, or the note (SBX_NOTE_MAX bytes, *len), are set; else why. */
enum sign_verdict signdir_record(struct signdir *d, uint64_t seq, const unsigned char prev[32],
				 const char *origin, const unsigned char *blob, size_t len,
				 unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
				 char *why, size_t whylen);
enum sign_verdict signdir_checkpoint(struct signdir *d, const struct sbx_checkpoint *cp,
				     char *note, int *len, char *why, size_t whylen);
enum sign_verdict signdir_init(struct signdir *d, uint64_t size, const unsigned char chain[32],
			       const unsigned char *frontier, size_t flen, char *why, size_t whylen);

/* A struct sbx_signer over d, in this process (sbx-audit as root): a
 * directory without state is initialised from the log. */
void signdir_signer(struct sbx_signer *s, struct signdir *d);

#endif
