/* SPDX-License-Identifier: ISC */
/*
 * Retention of the audit log (auditrotate.c has the design and the crash
 * safety argument): a prefix of whole runs moves into an archive log, and
 * the live log keeps a base (seq, chain value, signed checkpoint with its
 * Merkle frontier) from which it verifies on its own.
 */
#ifndef SBX_ROTATE_H
#define SBX_ROTATE_H
#include <stdint.h>

#include "checkpoint.h"
#include "merkle.h"
#include "record.h"

struct sbx_rotate_result {
	uint64_t first, last;      /* seqs moved (last 0: none) */
	char note[SBX_NOTE_MAX];   /* the checkpoint over seq 1..last */
};

/*
 * Move the records older than cut_ns (ns since the epoch, by realtime) into
 * the archive at archive_path (created with the log's schema if absent; if
 * present it must end right before this log's first record, or overlap it
 * with the same records, and carry the same key), never separating a START
 * from its END, and sign a checkpoint over the moved prefix with sk
 * (crypto_sign_SECRETKEYBYTES) under origin; the ROTATE record and the
 * checkpoint after it are signed by sg (NULL: with sk; sbx-audit gives the
 * signer's directory, signer/signdir.h, so that sbx-signer's history goes
 * on). a must be open writable.
 * Returns 0 (res->last 0: nothing old enough), or -1 with err set; on -1
 * the live log is unchanged, the archive possibly already complete.
 */
struct sbx_signer;
int sbx_audit_rotate(struct sbx_audit *a, const char *archive_path, int64_t cut_ns,
		     const unsigned char *sk, struct sbx_signer *sg, const char *origin,
		     struct sbx_rotate_result *res, char *err, size_t errlen);

/* The base of a rotated log (meta base_seq, base_chain): 0 and zeros for a
 * log that starts at seq 1. Returns 0, or -1 with err (malformed meta). */
int sbx_audit_base(struct sbx_audit *a, uint64_t *seq, unsigned char chain[32],
		   char *err, size_t errlen);

/* The Merkle frontier at size base from the stored checkpoint of that
 * size, which must verify with pk and whose root the frontier must give.
 * base 0: the empty tree. Returns 0 with *t and root, or -1 with err. */
int sbx_audit_base_tree(struct sbx_audit *a, uint64_t base, const unsigned char *pk,
			struct sbx_mtree *t, unsigned char root[32], char *err, size_t errlen);

#endif
