/* SPDX-License-Identifier: ISC */
/*
 * Internals of the audit log shared by the writer (auditlog.c), the
 * verifier (auditverify.c) and sbx-audit: the SQL columns derived from a
 * record, and access to the SQLite handle. Not for the helper.
 */
#ifndef SBX_AUDITDB_H
#define SBX_AUDITDB_H
#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "textutil.h"

/* meta "format": 2 once a writer of record version 2 opened the log (its
 * records may be version 2, which older readers cannot decode); 1 is read. */
#define SBX_AUDIT_FORMAT 2

enum sbx_col_type { SBX_COL_NULL = 0, SBX_COL_INT, SBX_COL_TEXT };

struct sbx_colval {
	enum sbx_col_type type;
	int64_t i;
	const char *s;   /* SBX_COL_TEXT: n bytes, not owned */
	size_t n;
};

/*
 * The derived columns of table records, in this order, before the stored
 * blob, leaf, chain, sig and origin columns. The writer binds them and the
 * verifier compares them from one list, so the two cannot drift apart.
 */
enum {
	SBX_COL_SEQ, SBX_COL_KIND, SBX_COL_RUN_ID, SBX_COL_TIME,
	SBX_COL_REALTIME_NS, SBX_COL_UID, SBX_COL_USER, SBX_COL_HOST,
	SBX_COL_POLICY, SBX_COL_LANGUAGE, SBX_COL_CODE_SHA256, SBX_COL_SESSION,
	SBX_COL_ATTEMPT, SBX_COL_PARENT_ID, SBX_COL_OUTCOME, SBX_COL_EXIT_CODE,
	SBX_COL_SIGNAL, SBX_COL_LIMIT_FIRED, SBX_COL_WALL_MS, SBX_COL_CPU_MS,
	SBX_COL_MEMORY_PEAK, SBX_COL_STDOUT_BYTES, SBX_COL_STDERR_BYTES,
	SBX_COL_ARTIFACTS,
	SBX_NCOLS
};
extern const char *const sbx_audit_colnames[SBX_NCOLS];

/*
 * After the fixed columns: one per extension field with an SQL projection
 * (recfield.h), in table order, except "origin" (a stored column of its
 * own, compared by the verifier). sbx_audit_ncols() counts both; column i
 * is named sbx_audit_colname(i) and, for i >= SBX_NCOLS, projects the
 * field sbx_audit_colfield(i) (NULL for a fixed column).
 */
#define SBX_MAX_PROJ 16
/* "seq,kind,...,blob,leaf,chain,sig,origin": every column of table
 * records by name (malloc'd, NULL when out of memory), for statements
 * that must not depend on the order ALTER TABLE added columns in. */
char *sbx_audit_record_columns(void);
size_t sbx_audit_ncols(void);
const char *sbx_audit_colname(size_t i);
const struct sbx_field_def *sbx_audit_colfield(size_t i);

struct sbx_cols {
	struct sbx_colval v[SBX_NCOLS + SBX_MAX_PROJ];
	char time[48];
	char code_hex[65];
	char proj_hex[SBX_MAX_PROJ][65]; /* projected digests */
	char *artifacts_json; /* malloc'd; NULL when there are none ("[]") */
};

/*
 * Fill c from r (sbx_audit_ncols() values). Text values point into r and
 * c, so neither may move or be freed while c is used. Empty optional
 * strings (session, parent_id, limit), the END columns of other kinds and
 * projected fields the record does not carry are NULL. Times are ISO 8601 UTC
 * with milliseconds ("2024-05-01T12:00:00.123Z"). Returns 0, or -1 with
 * err set (out of memory). Release with sbx_cols_free.
 */
int sbx_record_columns(const struct sbx_record *r, struct sbx_cols *c,
		       char *err, size_t errlen);
void sbx_cols_free(struct sbx_cols *c);

/* ISO 8601 UTC, millisecond precision, into buf (>= 32 bytes). Returns 0 or
 * -1 if the time cannot be represented. */
int sbx_iso_time(int64_t realtime_ns, char *buf, size_t len);

/* UTF-8 validation and cleaning: sbx_utf8_seq and sbx_utf8_sanitize
 * (textutil.h; part of log format 1, the artifacts column is built with
 * it). */

/*
 * Extension fields as JSON (recjson.c), from the record-field table:
 * U64 and I64 as integers (a U64 above INT64_MAX as its decimal text),
 * STR as a string (invalid UTF-8 as U+FFFD), DIGEST and BYTES as
 * lower-case hex, LIST as an array of objects keyed by sub-field, OBJ as
 * one such object, a tag this version does not know as "tag_N": hex.
 * sbx_rext_json adds each field of rec to the object into under its JSON
 * key, except keys into already has; returns 0 or -1 (out of memory).
 * The other two return a new value, or NULL (malformed or out of memory).
 */
int sbx_rext_json(const struct sbx_record *rec, json_t *into);
json_t *sbx_field_json(const struct sbx_field_def *f, const unsigned char *p, size_t n);
json_t *sbx_fval_json(const struct sbx_fval *v);

/* CREATE TABLE IF NOT EXISTS the checkpoints table (one definition, for
 * the log and its archive) in schema "main" or "arc". Returns 0 or -1. */
int sbx_ckpt_table_create(sqlite3 *db, const char *schema);

/*
 * The leaf hashes of records 1..n of the log or archive db, in order, into
 * *out (malloc'd, n * 32 bytes; the caller frees it). 0, or -1 with *got
 * the number of leading records found (n when a read error stopped it
 * before: sqlite3_errmsg(db) says why) and *out NULL. A rotated log lacks
 * its first records: -1 with *got 0.
 */
int sbx_audit_leaves(sqlite3 *db, uint64_t n, unsigned char (**out)[32], uint64_t *got);

/* sbx_audit_append inside the caller's write transaction (BEGIN
 * IMMEDIATE already taken, COMMIT the caller's): for a record that must
 * commit with other changes (rotation's ROTATE record). */
int sbx_audit_append_in_tx(struct sbx_audit *a, struct sbx_record *rec,
			   const unsigned char *sk, const char *origin,
			   unsigned char chain_out[32], char *err, size_t errlen);

/*
 * Insert a record another log signed, verbatim (sbx-audit import): rec is
 * blob decoded, with rec->code and rec->policy_text set when a START's
 * texts came with it (their digests must match the record's); leaf,
 * chain and sig are the record's, already checked by the caller against
 * pk, which must be (or becomes) the log's meta pubkey. Inside the
 * caller's write transaction. Returns 0, or -1 with err set.
 */
int sbx_audit_insert_signed(struct sbx_audit *a, struct sbx_record *rec, const unsigned char *blob,
			    size_t len, const unsigned char leaf[32], const unsigned char chain[32],
			    const unsigned char sig[64], const char *origin, const unsigned char *pk,
			    char *err, size_t errlen);

/* The SQLite handle of an open log, for read-only queries of sbx-audit. */
sqlite3 *sbx_audit_db(struct sbx_audit *a);
/* The path the log was opened with, for messages. */
const char *sbx_audit_path(const struct sbx_audit *a);

/* Format an error into err (errlen bytes, NUL-terminated, truncated to
 * fit); does nothing when err is NULL. Shared by the audit library files. */
void sbx_audit_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
