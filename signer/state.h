/* SPDX-License-Identifier: ISC */
/*
 * What sbx-signer remembers between requests and between runs (its own
 * file, SBX_LOCALSTATEDIR/lib/sbx-signer/state, which only _sbxsign can
 * write), and the rules it signs by:
 *
 *   - a record extends the head it signed last (seq head + 1, after the
 *     head's chain value), or replaces the head when that one never
 *     reached the log (same seq, after the same chain value as it did),
 *     but never a record at or below the last checkpoint it signed: a log
 *     rolled back by whoever can write it gets no second history signed;
 *   - a checkpoint is the Merkle tree of exactly the records it signed
 *     (it grows that tree itself from each record's leaf), so every
 *     checkpoint it signs is consistent with every earlier one;
 *   - a record must be canonical: it decodes, encodes to the same bytes,
 *     names the seq and origin it is signed with.
 *
 * The first request of a signer without state is answered NEED_INIT; the
 * writer then sends where the log stands (INIT: size, chain, tree), which
 * is trusted once (trust on first use, like a new checkpoint witness).
 */
#ifndef SBX_SIGNER_STATE_H
#define SBX_SIGNER_STATE_H
#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "merkle.h"

struct sign_state {
	int have;                   /* initialised */
	uint64_t head;              /* seq of the newest record signed */
	unsigned char head_chain[32];
	struct sbx_mtree tree;      /* leaves 1..head */
	int have_prev;              /* the state before head, to replace it */
	unsigned char prev_chain[32];
	struct sbx_mtree prev_tree;
	uint64_t ckpt;              /* size of the newest checkpoint signed */
	unsigned char ckpt_root[32];
	uint64_t gen;               /* the file's generation it was loaded from (0: none) */
};

enum sign_verdict { SIGN_DO = 0, SIGN_REFUSE = 1, SIGN_NEED_INIT = 2 };

/* RECORD: may (seq, prev, origin, blob) be signed? On SIGN_DO, *st is
 * advanced and chain is the value to sign; on SIGN_REFUSE, why says so. */
enum sign_verdict sign_record(struct sign_state *st, uint64_t seq, const unsigned char prev[32],
			      const char *origin, const unsigned char *blob, size_t len,
			      unsigned char chain[32], char *why, size_t whylen);
/* CHECKPOINT: cp must be the tree of the records signed. */
enum sign_verdict sign_checkpoint(struct sign_state *st, const struct sbx_checkpoint *cp,
				  char *why, size_t whylen);
/* INIT: only without state. */
enum sign_verdict sign_init(struct sign_state *st, uint64_t size, const unsigned char chain[32],
			    const unsigned char *frontier, size_t flen, char *why, size_t whylen);

/* The state file: two slots in turn (state.c), so a save is one pwrite
 * and one fdatasync and a torn save leaves the one before. load: 1, 0 (no
 * file: no state), -1 with err (neither slot whole). save: writes
 * generation st->gen + 1; 0, or -1 with err. */
int sign_state_load(const char *path, struct sign_state *st, char *err, size_t errlen);
/* The file's bytes (at most two slots): 0 and *st, or -1 when neither
 * slot is whole; sign_state_load is a read and this. */
int sign_state_parse(const char *buf, size_t n, struct sign_state *st);
int sign_state_save(const char *path, const struct sign_state *st, char *err, size_t errlen);

#endif
