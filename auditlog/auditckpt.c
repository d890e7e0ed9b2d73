/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints stored in the audit log. The writer is whoever holds the
 * secret key (the recorder after each END, or sbx-audit checkpoint
 * --write); readers only list the notes, the verifier judges them.
 *
 * Retention: a checkpoint is written after every run, so that every
 * finished run can be proven, but the table keeps only the first
 * checkpoint at or after each multiple of SBX_CKPT_KEEP_EVERY records
 * (kept = 1) and the newest one; a newer checkpoint replaces the previous
 * one that is not kept. The verifier's cost stays one row per
 * SBX_CKPT_KEEP_EVERY records. A START records the newest kept
 * checkpoint (record field after_checkpoint), which binds the kept rows
 * into the signed chain: deleting one is a finding.
 *
 * Durability: the checkpoint commits with synchronous=NORMAL. A crash can
 * lose the newest checkpoint row, never a record (those commit with FULL,
 * and the next FULL commit syncs the checkpoint's WAL frames too); a lost
 * row is written again by the next run.
 */
#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* kept: 1 kept for good, 0 replaced by the next checkpoint, NULL a row
 * written before retention existed (kept). schema is "main" or "arc". */
int sbx_ckpt_table_create(sqlite3 *db, const char *schema)
{
	char sql[256];

	if (strcmp(schema, "main") != 0 && strcmp(schema, "arc") != 0)
		return -1;
	snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS %s.checkpoints(size INTEGER PRIMARY KEY,"
		 " note TEXT NOT NULL, frontier BLOB, time_ns INTEGER, kept INTEGER)", schema);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

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
	uint64_t kept_size;        /* newest kept row, 0 if none */
	int have_kept;
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
	if (sqlite3_prepare_v2(db, "SELECT size FROM checkpoints WHERE kept IS NOT 0 ORDER BY size DESC"
			       " LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "read checkpoints", err, errlen);
	if (sqlite3_step(st) == SQLITE_ROW) {
		l->kept_size = (uint64_t)sqlite3_column_int64(st, 0);
		l->have_kept = 1;
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

/* Replace the previous checkpoint unless it is kept; kept for good when
 * this one is the first at or after a multiple of SBX_CKPT_KEEP_EVERY. */
static int insert(struct sbx_audit *a, const struct last_ckpt *l, const struct sbx_mtree *t,
		  const char *note, char *err, size_t errlen)
{
	unsigned char fr[8 + 64 * 32];
	size_t frlen = sbx_mtree_save(t, fr);
	int kept = !l->have_kept || t->size / SBX_CKPT_KEEP_EVERY > l->kept_size / SBX_CKPT_KEEP_EVERY;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_exec(sbx_audit_db(a), "DELETE FROM checkpoints WHERE kept = 0", NULL, NULL,
			 NULL) != SQLITE_OK)
		return db_fail(a, "replace checkpoint", err, errlen);
	if (sqlite3_prepare_v2(sbx_audit_db(a), "INSERT INTO checkpoints(size, note, frontier,"
			       " time_ns, kept) VALUES(?1, ?2, ?3, ?4, ?5)", -1, &st, NULL) != SQLITE_OK)
		return db_fail(a, "insert checkpoint", err, errlen);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->size);
	sqlite3_bind_text(st, 2, note, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 3, fr, (int)frlen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now_ns());
	sqlite3_bind_int(st, 5, kept);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(a, "insert checkpoint", err, errlen);
}

int sbx_audit_kept_checkpoint(struct sbx_audit *a, uint64_t *size, unsigned char root[32],
			      char *err, size_t errlen)
{
	sqlite3_stmt *st;
	struct sbx_checkpoint cp;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT CAST(note AS TEXT) FROM checkpoints"
			       " WHERE kept IS NOT 0 ORDER BY size DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return sqlite3_errcode(sbx_audit_db(a)) == SQLITE_ERROR ? 0 /* no table */ :
		       db_fail(a, "read checkpoints", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *note = (const char *)sqlite3_column_text(st, 0);
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		if (note != NULL && sbx_checkpoint_parse(note, n, &cp, NULL, 0) == 0) {
			*size = cp.size;
			memcpy(root, cp.root, 32);
			ret = 1;
		}
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(a, "read checkpoints", err, errlen);
	}
	sqlite3_finalize(st);
	return ret;
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

static uint64_t base_seq(struct sbx_audit *a)
{
	char v[32];

	return sbx_audit_meta_get(a, "base_seq", v, sizeof(v), NULL, 0) == 0 ? strtoull(v, NULL, 10) : 0;
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
	if (!l->have_tree && l->size > 0 && base_seq(a) > 0) {
		/* a rotated log's tree starts at its base frontier: never sign
		 * a root grown from the wrong leaf numbering */
		snprintf(err, errlen, "%s: checkpoint: the newest checkpoint's frontier does not give "
			 "its root; run sbx-audit verify", sbx_audit_path(a));
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
	if (insert(a, l, &l->tree, l->note, err, errlen) < 0)
		goto out;
	if (note != NULL)
		memcpy(note, l->note, sizeof(l->note));
	ret = 1;
out:
	free(l);
	return ret;
}

/* PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA; 2 if unknown. */
static int sync_level(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = 2;

	if (sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &st, NULL) != SQLITE_OK)
		return v;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

int sbx_audit_checkpoint(struct sbx_audit *a, const unsigned char *sk, const char *origin,
			 uint64_t every_records, uint64_t every_seconds, char *note,
			 char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(a);
	int rc, sync_was;

	if (origin == NULL || origin[0] == '\0' || strlen(origin) > SBX_ORIGIN_MAX) {
		snprintf(err, errlen, "%s: checkpoint: origin must be 1..%d bytes",
			 sbx_audit_path(a), SBX_ORIGIN_MAX);
		return -1;
	}
	/* see the top of this file; set back on every path (to what the
	 * connection had: FULL for the writer, OFF for a bulk load) */
	sync_was = sync_level(db);
	if (sync_was > 1)
		sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(a, "begin transaction", err, errlen);
		rc = -1;
		goto out;
	}
	rc = locked(a, sk, origin, every_records, every_seconds, note, err, errlen);
	if (rc < 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(a, "commit", err, errlen);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		rc = -1;
	}
out:
	if (sync_was > 1)
		sqlite3_exec(db, sync_was == 2 ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=EXTRA",
			     NULL, NULL, NULL);
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
