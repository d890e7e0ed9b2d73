/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints of the audit log: a C2SP tlog-checkpoint body (origin line,
 * tree size in decimal, base64 RFC 6962 Merkle root, each ending in a
 * newline) signed as a C2SP signed note: the body, a blank line, and a
 * signature line "\u2014 NAME base64(key id || Ed25519 signature)\n" where
 * key id = SHA-256(NAME || 0x0A || 0x01 || public key)[:4] and the
 * signature covers the body including its final newline. Sources:
 * c2sp.org/signed-note, c2sp.org/tlog-checkpoint. The key name is the
 * origin, as transparency logs conventionally do.
 */
#ifndef SBX_CHECKPOINT_H
#define SBX_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SBX_NOTE_MAX 1024 /* bytes of a checkpoint note, NUL included */

struct sbx_checkpoint {
	char origin[SBX_ORIGIN_MAX + 1];
	uint64_t size;              /* records covered: seq 1..size */
	unsigned char root[32];     /* RFC 6962 MTH of their leaves */
};

/* C2SP key id of (name, Ed25519 pk), as 4 bytes. */
void sbx_note_key_id(const char *name, const unsigned char *pk, unsigned char id[4]);

/*
 * Write the signed note for cp into out (SBX_NOTE_MAX bytes), signed with
 * sk (crypto_sign_SECRETKEYBYTES). Returns the note length, or -1 when the
 * origin is empty, too long, or holds a space, '+' or a control character
 * (the spec forbids them in key names).
 */
int sbx_checkpoint_sign(const struct sbx_checkpoint *cp, const unsigned char *sk,
			char *out);

/*
 * Parse the body of a note (origin, size, root) without checking any
 * signature: for notes already verified, or to read what a note claims.
 * Returns 0, or -1 with err.
 */
int sbx_checkpoint_parse(const char *note, size_t len, struct sbx_checkpoint *cp,
			 char *err, size_t errlen);

/*
 * Parse and verify a signed checkpoint note (len bytes, untrusted) with pk.
 * The note must carry a signature line whose name is its origin and whose
 * key id matches pk, and that signature must verify; other signature lines
 * (witnesses) are ignored. Returns 0 and *cp, or -1 with err saying why
 * (malformed, "not signed by this key", "signature does not verify").
 */
int sbx_checkpoint_open(const char *note, size_t len, const unsigned char *pk,
			struct sbx_checkpoint *cp, char *err, size_t errlen);

/* Rows kept for good: the first checkpoint at or after each multiple of
 * this many records (auditckpt.c); in between only the newest. */
#define SBX_CKPT_KEEP_EVERY 1024

/*
 * The newest kept checkpoint's size and root as its note says them
 * (unverified: a START records them, verify checks them). Returns 1, 0
 * when there is none, -1 with err on a read error.
 */
int sbx_audit_kept_checkpoint(struct sbx_audit *a, uint64_t *size, unsigned char root[32],
			      char *err, size_t errlen);

/*
 * Checkpoints stored in the log (table checkpoints: size, note, frontier,
 * time_ns, kept; see auditckpt.c for which rows are kept).
 *
 * sbx_audit_checkpoint appends a checkpoint over every record in the log,
 * in one BEGIN IMMEDIATE transaction committed with synchronous=NORMAL
 * (auditckpt.c says why), when one is due: every_records > 0
 * and at least that many records since the last checkpoint, or
 * every_seconds > 0 and that many seconds since it (and at least one new
 * record); both 0: whenever there is a new record (on demand). The tree is
 * grown from the frontier stored with the previous checkpoint, so the cost
 * is the new records only. origin as for sbx_audit_append. Returns 1 when
 * a checkpoint was appended, 0 when none was due, -1 with err set (nothing
 * committed). note (SBX_NOTE_MAX bytes, may be NULL) receives the latest
 * checkpoint's note in both non-error cases ("" if there is none).
 *
 * The recorder calls it after each END record (both 0); sbx-audit
 * checkpoint --write calls it on demand.
 */
int sbx_audit_checkpoint(struct sbx_audit *a, const unsigned char *sk, const char *origin,
			 uint64_t every_records, uint64_t every_seconds, char *note,
			 char *err, size_t errlen);

/*
 * The stored checkpoint notes in order of size, unverified: *notes is a
 * malloc'd array of *n malloc'd strings (free with sbx_checkpoint_notes_free).
 * A log without the table has none. Returns 0, or -1 with err set.
 */
int sbx_audit_checkpoint_notes(struct sbx_audit *a, char ***notes, size_t *n,
			       char *err, size_t errlen);
void sbx_checkpoint_notes_free(char **notes, size_t n);

#endif
