/* SPDX-License-Identifier: ISC */
/*
 * Who signs the audit log. The writer (sbx_audit_append_with,
 * sbx_audit_checkpoint_with) hands each canonical record and each
 * checkpoint to a signer and stores what it gets back; it never needs the
 * key itself. Two signers:
 *
 *   local   the secret key in this process (sbx-audit as root, the
 *           benchmarks, the unit tests; sbx_signer_local)
 *   remote  sbx-signer, a separate process running as _sbxsign that holds
 *           the key, reached over a socket (signwire.h, sbx_signer_remote):
 *           the recorder, which parses the payload's output, never has the
 *           key in its address space, and sbx-signer refuses records at or
 *           below the last checkpoint it signed and checkpoints that are not
 *           the tree of everything it signed (signer/state.h).
 */
#ifndef SBX_SIGNER_H
#define SBX_SIGNER_H
#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"

struct sbx_audit;
struct signdir;

struct sbx_signer {
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	/* Sign the record blob (len bytes, its seq inside) at seq after the
	 * chain value prev, with origin: chain and sig out. a is the log,
	 * inside the writer's transaction (a remote signer seen for the first
	 * time is given the log's tree from it). 0, or -1 with err. */
	int (*record)(struct sbx_signer *s, struct sbx_audit *a, uint64_t seq,
		      const unsigned char prev[32], const char *origin, const unsigned char *blob,
		      size_t len, unsigned char chain[32], unsigned char sig[crypto_sign_BYTES],
		      char *err, size_t errlen);
	/* Sign cp as a checkpoint note (SBX_NOTE_MAX bytes); returns its
	 * length, or -1 with err. */
	int (*checkpoint)(struct sbx_signer *s, const struct sbx_checkpoint *cp, char *note,
			  char *err, size_t errlen);
	const unsigned char *sk;    /* local: the secret key, else NULL */
	struct signdir *dir;        /* signer/signdir.h, in this process, else NULL */
	int fd;                     /* remote: the socket, else -1 */
};

/* A signer over the secret key sk (crypto_sign_SECRETKEYBYTES, kept by
 * the caller for as long as s is used). */
void sbx_signer_local(struct sbx_signer *s, const unsigned char *sk);

/* A signer that asks sbx-signer over fd (a connected SOCK_STREAM socket);
 * pk is the log's public key. Blocking requests, one at a time. */
void sbx_signer_remote(struct sbx_signer *s, int fd, const unsigned char *pk);

/* The Merkle tree of every record in the log (its frontier), grown from
 * the newest stored checkpoint's. 0, or -1 with err. */
int sbx_audit_tree(struct sbx_audit *a, struct sbx_mtree *t, char *err, size_t errlen);

/* The writer with a signer (sbx_audit_append and sbx_audit_checkpoint
 * are these with sbx_signer_local). */
int sbx_audit_append_with(struct sbx_audit *a, struct sbx_record *rec, struct sbx_signer *s,
			  const char *origin, unsigned char chain_out[32], char *err,
			  size_t errlen);
int sbx_audit_append_in_tx_with(struct sbx_audit *a, struct sbx_record *rec,
				struct sbx_signer *s, const char *origin,
				unsigned char chain_out[32], char *err, size_t errlen);
int sbx_audit_checkpoint_with(struct sbx_audit *a, struct sbx_signer *s, const char *origin,
			      uint64_t every_records, uint64_t every_seconds, char *note,
			      char *err, size_t errlen);

#endif
