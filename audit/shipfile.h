/* SPDX-License-Identifier: ISC */
/*
 * The export file that carries one host's signed records and checkpoints
 * to a central store (sbx-audit export --format records, read by sbx-audit
 * import; docs/fleet.md). Text, one item a line, every byte string in
 * standard base64 (RFC 4648 section 4), so that any transport that moves
 * files (rsync, scp, a configuration-management file resource) moves it
 * unchanged and a cut-off transfer is detected:
 *
 *   sbx-audit-records 1 ORIGIN
 *   record SEQ BLOB SIG CODE POLICY      one per record, SEQ increasing by 1
 *   checkpoint KEPT NOTE                 KEPT 0 or 1, the signed note
 *   end NRECORDS NCHECKPOINTS
 *
 * BLOB is the canonical record (record.h), SIG its 64-byte Ed25519
 * signature; CODE and POLICY are a START's code and policy texts (the
 * log keeps them beside the records, bound by digests in the blob), "-"
 * when the record has none. Nothing is trusted here: import checks every
 * signature, chain link and digest.
 */
#ifndef SBX_AUDIT_SHIPFILE_H
#define SBX_AUDIT_SHIPFILE_H
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SHIP_MAGIC "sbx-audit-records"
#define SHIP_VERSION 1
/* Bytes of a file import reads (a shipment is meant to be a day's or an
 * hour's records, not a whole log: export --resume keeps them small). */
#define SHIP_MAX_BYTES ((size_t)1 << 30)

struct ship_rec {
	uint64_t seq;
	unsigned char *blob;
	size_t len;
	unsigned char sig[64];
	char *code, *policy;        /* NULL: "-" */
	size_t code_len, policy_len;
	size_t line;
};

struct ship_ckpt {
	char *note;                 /* NUL-terminated, len bytes */
	size_t len;
	int kept;
	size_t line;
};

struct ship {
	char origin[SBX_ORIGIN_MAX + 1];
	struct ship_rec *r;
	size_t nr;
	struct ship_ckpt *c;
	size_t nc;
};

/*
 * Parse len bytes (untrusted) into s. Records must come in seq order,
 * each one more than the last; the end line must count what came and be
 * the last line. Returns 0, or -1 with err ("line N: why") and s holding
 * nothing to free.
 */
int ship_parse(const char *buf, size_t len, struct ship *s, char *err, size_t errlen);
void ship_free(struct ship *s);

/* Base64 of n bytes as one malloc'd string (exits on out of memory). */
char *ship_b64(const void *p, size_t n);

#endif
