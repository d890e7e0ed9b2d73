/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints stored in the audit log. The writer is whoever holds the
 * secret key (the recorder after each run, or sbx-audit checkpoint
 * --write); readers only list the notes, the verifier judges them.
 */
#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char table_sql[] =
	"CREATE TABLE IF NOT EXISTS checkpoints(size INTEGER PRIMARY KEY,"
	" note TEXT NOT NULL, frontier BLOB, time_ns INTEGER)";

static int db_fail(struct sbx_audit *a, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s: %s", sbx_audit_path(a), what,
		 sqlite3_errmsg(sbx_audit_db(a)));
	return -1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct last_ckpt {
	uint64_t size;
	int64_t time_ns;
	char note[SBX_NOTE_MAX];
	struct sbx_mtree tree;     /* frontier at size, if trusted */
	int have_tree;
};

/* The newest checkpoint; its frontier is used only if it reproduces the
 * root the note signs (the row is not signed itself). */
static int read_last(struct sbx_audit *a, const unsigned char *pk, struct last_ckpt *l,
		     char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(a);
	sqlite3_stmt *st;
	struct sbx_checkpoint cp;
	unsigned char root[32];
	int rc;

	memset(l, 0, sizeof(*l));
	sbx_mtree_init(&l->tree);
	if (sqlite3_prepare_v2(db, "SELECT size, note, frontier, time_ns FROM checkpoints"
			       " ORDER BY size DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "read checkpoints", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *note = (const char *)sqlite3_column_text(st, 1);
		size_t nlen = (size_t)sqlite3_column_bytes(st, 1);
		l->size = (uint64_t)sqlite3_column_int64(st, 0);
		l->time_ns = sqlite3_column_int64(st, 3);
		if (note != NULL && nlen < sizeof(l->note))
			memcpy(l->note, note, nlen + 1);
		if (sbx_mtree_load(&l->tree, sqlite3_column_blob(st, 2),
				   (size_t)sqlite3_column_bytes(st, 2)) == 0 &&
		    sbx_checkpoint_open(l->note, strlen(l->note), pk, &cp, NULL, 0) == 0 &&
		    cp.size == l->size && l->tree.size == l->size) {
			sbx_mtree_root(&l->tree, root);
			l->have_tree = sodium_memcmp(root, cp.root, 32) == 0;
		}
		if (!l->have_tree)
			sbx_mtree_init(&l->tree);
	} else if (rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return db_fail(a, "read checkpoints", err, errlen);
	}
	sqlite3_finalize(st);
	return 0;
}

static int count_records(struct sbx_audit *a, uint64_t *n, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT coalesce(max(seq), 0) FROM records", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(a, "count records", err, errlen);
	rc = sqlite3_step(st);
	*n = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_fail(a, "count records", err, errlen);
}

/* Grow t with the stored leaves after its size, in seq order: leaf i is
 * record seq i + 1 (a rotated log starts after its base, rotate.h); a log
 * with gaps fails verify anyway. */
static int grow(struct sbx_audit *a, struct sbx_mtree *t, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT leaf FROM records WHERE seq > ?1"
			       " ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "read leaves", err, errlen);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->size);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(st, 0) != 32) {
			snprintf(err, errlen, "%s: record %" PRIu64 " has a damaged leaf; run sbx-audit verify",
				 sbx_audit_path(a), t->size + 1);
			sqlite3_finalize(st);
			return -1;
		}
		sbx_mtree_push(t, sqlite3_column_blob(st, 0));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(a, "read leaves", err, errlen);
}

static int insert(struct sbx_audit *a, const struct sbx_mtree *t, const char *note,
		  char *err, size_t errlen)
{
	unsigned char fr[8 + 64 * 32];
	size_t frlen = sbx_mtree_save(t, fr);
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "INSERT INTO checkpoints(size, note, frontier,"
			       " time_ns) VALUES(?1, ?2, ?3, ?4)", -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "insert checkpoint", err, errlen);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->size);
	sqlite3_bind_text(st, 2, note, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 3, fr, (int)frlen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now_ns());
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(a, "insert checkpoint", err, errlen);
}

static int due(const struct last_ckpt *l, uint64_t n, uint64_t every_records,
	       uint64_t every_seconds)
{
	if (n <= l->size)
		return 0;
	if (every_records == 0 && every_seconds == 0)
		return 1;
	if (every_records > 0 && n - l->size >= every_records)
		return 1;
	return every_seconds > 0 &&
	       now_ns() - l->time_ns >= (int64_t)every_seconds * 1000000000;
}

static int locked(struct sbx_audit *a, const unsigned char *sk, const char *origin,
		  uint64_t every_records, uint64_t every_seconds, char *note,
		  char *err, size_t errlen)
{
	const unsigned char *pk = sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES;
	struct last_ckpt *l = malloc(sizeof(*l));
	struct sbx_checkpoint cp = {0};
	uint64_t n;
	int ret = -1, len;

	if (l == NULL) {
		snprintf(err, errlen, "%s: out of memory", sbx_audit_path(a));
		return -1;
	}
	if (read_last(a, pk, l, err, errlen) < 0 || count_records(a, &n, err, errlen) < 0)
		goto out;
	if (!due(l, n, every_records, every_seconds)) {
		if (note != NULL)
			memcpy(note, l->note, sizeof(l->note));
		ret = 0;
		goto out;
	}
	if (grow(a, &l->tree, err, errlen) < 0)
		goto out;
	snprintf(cp.origin, sizeof(cp.origin), "%s", origin);
	cp.size = l->tree.size;
	sbx_mtree_root(&l->tree, cp.root);
	len = sbx_checkpoint_sign(&cp, sk, l->note);
	if (len < 0) {
		snprintf(err, errlen, "%s: checkpoint: origin '%.64s' is not a valid note key name "
			 "(no spaces, '+' or control characters)", sbx_audit_path(a), origin);
		goto out;
	}
	if (insert(a, &l->tree, l->note, err, errlen) < 0)
		goto out;
	if (note != NULL)
		memcpy(note, l->note, sizeof(l->note));
	ret = 1;
out:
	free(l);
	return ret;
}

int sbx_audit_checkpoint(struct sbx_audit *a, const unsigned char *sk, const char *origin,
			 uint64_t every_records, uint64_t every_seconds, char *note,
			 char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(a);
	int rc;

	if (origin == NULL || origin[0] == '\0' || strlen(origin) > SBX_ORIGIN_MAX) {
		snprintf(err, errlen, "%s: checkpoint: origin must be 1..%d bytes",
			 sbx_audit_path(a), SBX_ORIGIN_MAX);
		return -1;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(a, "begin transaction", err, errlen);
	if (sqlite3_exec(db, table_sql, NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(a, "create checkpoints table", err, errlen);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	rc = locked(a, sk, origin, every_records, every_seconds, note, err, errlen);
	if (rc < 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(a, "commit", err, errlen);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return rc;
}

static int has_table(sqlite3 *db)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND"
			       " name='checkpoints'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

void sbx_checkpoint_notes_free(char **notes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(notes[i]);
	free(notes);
}

int sbx_audit_checkpoint_notes(struct sbx_audit *a, char ***notes, size_t *n,
			       char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(a);
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*notes = NULL;
	*n = 0;
	rc = has_table(db);
	if (rc <= 0)
		return rc < 0 ? db_fail(a, "read checkpoints", err, errlen) : 0;
	if (sqlite3_prepare_v2(db, "SELECT CAST(note AS TEXT) FROM checkpoints ORDER BY size",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "read checkpoints", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		size_t tl = (size_t)sqlite3_column_bytes(st, 0);
		char *copy;
		if (*n == cap) {
			char **g = realloc(*notes, (cap = cap ? 2 * cap : 16) * sizeof(*g));
			if (g == NULL)
				goto oom;
			*notes = g;
		}
		copy = malloc(tl + 1);
		if (copy == NULL)
			goto oom;
		memcpy(copy, t ? t : "", tl);
		copy[tl] = '\0';
		(*notes)[(*n)++] = copy;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		sbx_checkpoint_notes_free(*notes, *n);
		*notes = NULL;
		*n = 0;
		return db_fail(a, "read checkpoints", err, errlen);
	}
	return 0;
oom:
	sqlite3_finalize(st);
	sbx_checkpoint_notes_free(*notes, *n);
	*notes = NULL;
	*n = 0;
	snprintf(err, errlen, "%s: out of memory", sbx_audit_path(a));
	return -1;
}
