/* SPDX-License-Identifier: ISC */
/*
 * sbx_field(blob, key): an extension field of a record, read from its
 * signed blob inside SQL. The writer projects only a few fields into
 * columns (recfield.h); a report that needs others (the APPLY fields
 * 186-193, the END's changeset_entries) reads them here, from what the
 * signature covers, and stays one SQL statement. A log older than the
 * field simply has no record that carries it.
 */
#include "sqlfield.h"

#include <string.h>

#include "auditdb.h"

static const struct sbx_field_def *field_by_key(const char *key)
{
	size_t i;

	for (i = 0; i < sbx_n_record_fields; i++)
		if (strcmp(sbx_record_fields[i].key, key) == 0)
			return &sbx_record_fields[i];
	return NULL;
}

static void hex_result(sqlite3_context *ctx, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char h[65];
	size_t i;

	if (n != 32) {
		sqlite3_result_null(ctx);
		return;
	}
	for (i = 0; i < 32; i++) {
		h[2 * i] = digits[p[i] >> 4];
		h[2 * i + 1] = digits[p[i] & 15];
	}
	sqlite3_result_text(ctx, h, 64, SQLITE_TRANSIENT);
}

/* The value as the projected columns hold one: U64 and I64 as integers
 * (U64 as its two's complement), STR as its bytes, DIGEST as lower-case
 * hex; NULL when the record lacks the field or the blob does not decode
 * (only tampering makes that: verify names it). */
static void field_result(sqlite3_context *ctx, const struct sbx_record *rec,
			 const struct sbx_field_def *f)
{
	struct sbx_fval v;

	if (sbx_rec_get(rec, f->tag, &v) != 1) {
		sqlite3_result_null(ctx);
		return;
	}
	switch (f->type) {
	case SBX_FT_U64:
		sqlite3_result_int64(ctx, (sqlite3_int64)v.u);
		break;
	case SBX_FT_I64:
		sqlite3_result_int64(ctx, v.i);
		break;
	case SBX_FT_STR:
		sqlite3_result_text(ctx, (const char *)v.p, (int)v.n, SQLITE_TRANSIENT);
		break;
	case SBX_FT_DIGEST:
		hex_result(ctx, v.p, v.n);
		break;
	default:
		sqlite3_result_null(ctx);
	}
}

static void sbx_field_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *blob = sqlite3_value_blob(argv[0]);
	int len = sqlite3_value_bytes(argv[0]);
	const char *key = (const char *)sqlite3_value_text(argv[1]);
	const struct sbx_field_def *f = key != NULL ? field_by_key(key) : NULL;
	struct sbx_record rec;

	(void)argc;
	/* a key not in the table is the query's mistake, not the log's */
	if (f == NULL || f->type == SBX_FT_LIST || f->type == SBX_FT_OBJ || f->type == SBX_FT_BYTES) {
		sqlite3_result_error(ctx, "sbx_field: not a scalar field of the record-field table", -1);
		return;
	}
	if (blob == NULL || len <= 0 || sbx_record_decode(blob, (size_t)len, &rec, NULL, 0) < 0) {
		sqlite3_result_null(ctx);
		return;
	}
	field_result(ctx, &rec, f);
	sbx_record_free(&rec);
}

int sqlfield_register(sqlite3 *db)
{
	return sqlite3_create_function_v2(db, "sbx_field", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
					  sbx_field_fn, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}
