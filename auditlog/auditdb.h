/* SPDX-License-Identifier: ISC */
/*
 * Internals of the audit log shared by the writer (auditlog.c), the
 * verifier (auditverify.c) and sbx-audit: the SQL columns derived from a
 * record, and access to the SQLite handle. Not for the helper.
 */
#ifndef SBX_AUDITDB_H
#define SBX_AUDITDB_H
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SBX_AUDIT_FORMAT 1 /* meta "format" */

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

struct sbx_cols {
	struct sbx_colval v[SBX_NCOLS];
	char time[48];
	char code_hex[65];
	char *artifacts_json; /* malloc'd; NULL when there are none ("[]") */
};

/*
 * Fill c from r. Text values point into r and c, so neither may move or be
 * freed while c is used. Empty optional strings (session, parent_id, limit)
 * and the END columns of a START record are NULL. Times are ISO 8601 UTC
 * with milliseconds ("2024-05-01T12:00:00.123Z"). Returns 0, or -1 with
 * err set (out of memory). Release with sbx_cols_free.
 */
int sbx_record_columns(const struct sbx_record *r, struct sbx_cols *c,
		       char *err, size_t errlen);
void sbx_cols_free(struct sbx_cols *c);

/* ISO 8601 UTC, millisecond precision, into buf (>= 32 bytes). Returns 0 or
 * -1 if the time cannot be represented. */
int sbx_iso_time(int64_t realtime_ns, char *buf, size_t len);

/*
 * UTF-8: length of the valid sequence starting at s (n bytes available),
 * or 0 if the bytes there are not valid UTF-8 (overlongs and surrogates
 * included).
 */
size_t sbx_audit_utf8_seq(const unsigned char *s, size_t n);
/*
 * Copy of s (n bytes) with every byte that does not start a valid sequence,
 * and every NUL, replaced by U+FFFD (one per byte); NUL-terminated and
 * malloc'd; NULL when out of memory. Part of log format 1 (the artifacts
 * column is built with it), so it must never change; textutil.h's
 * sbx_utf8_sanitize is free to evolve, this one is not.
 */
char *sbx_audit_utf8_clean(const char *s, size_t n);

/* The SQLite handle of an open log, for read-only queries of sbx-audit. */
sqlite3 *sbx_audit_db(struct sbx_audit *a);
/* The path the log was opened with, for messages. */
const char *sbx_audit_path(const struct sbx_audit *a);

/* Format an error into err (errlen bytes, NUL-terminated, truncated to
 * fit); does nothing when err is NULL. Shared by the audit library files. */
void sbx_audit_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
