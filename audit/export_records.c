/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit export --format records: the signed records and checkpoints
 * after a cursor, as the file sbx-audit import reads on a central store
 * (shipfile.h). It ships records up to the newest checkpoint only, so
 * that every export ends at a checkpoint the host signed over exactly
 * what was shipped: the store's archive then always ends at a verified
 * tree head, which it can cosign. Records after it wait for the next
 * export (the recorder writes a checkpoint after every run).
 */
#include "cli.h"
#include "exportrec.h"
#include "shipfile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"

static int fail(struct sbx_audit *a, const char *what)
{
	cli_err("%s: %s: %s", sbx_audit_path(a), what, sqlite3_errmsg(sbx_audit_db(a)));
	return -1;
}

static int64_t newest_size(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t s = 0;

	if (sqlite3_prepare_v2(db, "SELECT max(size) FROM checkpoints", -1, &st, NULL) != SQLITE_OK)
		return 0; /* a log without checkpoints has nothing to ship */
	if (sqlite3_step(st) == SQLITE_ROW)
		s = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return s;
}

/* The text of table (code or policy) under digest, base64, or "-". */
static char *text_b64(sqlite3 *db, const char *table, const unsigned char digest[32])
{
	char hex[65], sql[64];
	sqlite3_stmt *st;
	char *out = NULL;

	snprintf(sql, sizeof(sql), "SELECT text FROM %s WHERE sha256 = ?1", table);
	sodium_bin2hex(hex, sizeof(hex), digest, 32);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return out_need(strdup("-"));
	sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		out = ship_b64(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
	return out ? out : out_need(strdup("-"));
}

static int records(struct sbx_audit *a, const char *origin, int64_t after, int64_t upto,
		   uint64_t *n)
{
	sqlite3 *db = sbx_audit_db(a);
	sqlite3_stmt *st;
	int rc;

	(void)origin;
	if (sqlite3_prepare_v2(db, "SELECT seq, blob, sig, kind FROM records WHERE seq > ?1 AND seq <= ?2"
			       " ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return fail(a, "read records");
	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int64(st, 2, upto);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *blob = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		char *b = ship_b64(blob, len), *s, *code = NULL, *pol = NULL;
		const char *kind = (const char *)sqlite3_column_text(st, 3);
		struct sbx_record rec;

		s = ship_b64(sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
		/* A START's texts travel with it; a blob that does not decode
		 * ships as it is (import refuses it, verify names it). */
		if (kind != NULL && strcmp(kind, sbx_record_kind_name(SBX_REC_START)) == 0 &&
		    sbx_record_decode(blob, len, &rec, NULL, 0) == 0) {
			code = text_b64(db, "code", rec.code_sha256);
			pol = text_b64(db, "policy", rec.policy_sha256);
			sbx_record_free(&rec);
		}
		printf("record %" PRId64 " %s %s %s %s\n", (int64_t)sqlite3_column_int64(st, 0), b, s,
		       code ? code : "-", pol ? pol : "-");
		free(b);
		free(s);
		free(code);
		free(pol);
		(*n)++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(a, "read records");
}

static int checkpoints(struct sbx_audit *a, int64_t after, int64_t upto, uint64_t *n)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT note, kept FROM checkpoints WHERE size > ?1 AND"
			       " size <= ?2 ORDER BY size", -1, &st, NULL) != SQLITE_OK)
		return fail(a, "read checkpoints");
	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int64(st, 2, upto);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char *b = ship_b64(sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		/* kept NULL: a row from before retention, kept for good */
		printf("checkpoint %d %s\n",
		       sqlite3_column_type(st, 1) == SQLITE_NULL || sqlite3_column_int(st, 1) != 0, b);
		free(b);
		(*n)++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(a, "read checkpoints");
}

/* The origin the records are signed under: the newest record's. */
static int log_origin(struct sbx_audit *a, char *out, size_t outlen)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT origin FROM records ORDER BY seq DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return fail(a, "read origin");
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
		ok = out[0] != '\0';
	}
	sqlite3_finalize(st);
	if (!ok) {
		cli_err("export: %s: the log has no records yet (nothing names its origin)",
			sbx_audit_path(a));
		return -1;
	}
	return 0;
}

int export_records(const struct cli *c, int64_t after, int64_t *last)
{
	struct sbx_audit *a;
	char origin[SBX_ORIGIN_MAX + 1];
	uint64_t nr = 0, nc = 0;
	int64_t upto;
	int rc = -1;

	*last = after;
	if (cli_open_log(c, &a) < 0)
		return -1;
	/* One read transaction: records and checkpoints of one snapshot. */
	if (sqlite3_exec(sbx_audit_db(a), "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fail(a, "begin");
		goto out;
	}
	if (log_origin(a, origin, sizeof(origin)) < 0)
		goto out;
	if (strchr(origin, ' ') != NULL || strchr(origin, '\n') != NULL) {
		cli_err("export: %s: the log's origin is not a C2SP key name", sbx_audit_path(a));
		goto out;
	}
	upto = newest_size(sbx_audit_db(a));
	printf(SHIP_MAGIC " %d %s\n", SHIP_VERSION, origin);
	if (upto > after) {
		if (records(a, origin, after, upto, &nr) < 0 || checkpoints(a, after, upto, &nc) < 0)
			goto out;
		*last = upto;
	}
	printf("end %" PRIu64 " %" PRIu64 "\n", nr, nc);
	rc = 0;
out:
	sqlite3_exec(sbx_audit_db(a), "COMMIT", NULL, NULL, NULL);
	sbx_audit_close(a);
	return rc;
}
