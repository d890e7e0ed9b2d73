/* SPDX-License-Identifier: ISC */
/*
 * Retention: move a prefix of the log (whole runs, older than a cut) into
 * an archive log with the same schema, leaving the live log verifiable on
 * its own. Design (DESIGN.md "Audit log", rotation):
 *
 *  - seq, chain and Merkle tree never restart: the archive holds seq
 *    F..C, the live log C+1..N. Rotation signs a checkpoint over the
 *    first C records and stores it, with its frontier (the O(log C)
 *    perfect-subtree roots), in both logs. The live log records its base
 *    in meta: base_seq = C and base_chain = chain value of record C.
 *  - Verifying the live log alone starts the chain at base_chain (record
 *    C+1's signature covers its chain value, which extends base_chain, so
 *    an edited base fails) and the Merkle tree at the base frontier, which
 *    must reproduce the root of the signed checkpoint of size C. Later
 *    checkpoints (size > C) are then checked as before.
 *  - Verifying archive + live also checks that the archive ends at seq C
 *    with that chain value and that its leaves give the base root.
 *
 * Crash safety: two single-database transactions, in this order.
 *  1. The archive (attached to the live connection) receives records
 *     F..C, the code texts they name, the policy texts, the checkpoints
 *     up to C and the new checkpoint; COMMIT with synchronous=FULL fsyncs its WAL, and a
 *     TRUNCATE wal_checkpoint then writes and fsyncs the archive file
 *     itself, so it is complete on disk before anything leaves the live log.
 *  2. The live log stores the checkpoint of size C, sets its base, and
 *     deletes records <= C, older checkpoints and unreferenced code texts.
 * A crash before 2 commits leaves both logs holding F..C; the next rotate
 * finds the overlap, checks that it is the same records (leaf hashes), and
 * finishes. A crash inside either transaction rolls it back. Runs keep
 * being recorded meanwhile: step 1 takes no lock on the live log (a read
 * snapshot), step 2 holds its write lock only for the deletes.
 */
#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"
#include "rotate.h"
#include "signer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pwd.h>
#include <unistd.h>

#include "version.h"

struct rot {
	struct sbx_audit *a;
	sqlite3 *db;
	const char *path;
	char *err;
	size_t errlen;
	struct sbx_signer *sg;     /* the ROTATE record and the final checkpoint */
};

static int fail(struct rot *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s: rotate: %s: %s", r->path, what, sqlite3_errmsg(r->db));
	return -1;
}

static int exec(struct rot *r, const char *sql, const char *what)
{
	return sqlite3_exec(r->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(r, what);
}

/* One statement that returns no rows, with ?1 = p1 and, if it has one, ?2 = p2. */
static int exec_i64(struct rot *r, const char *sql, int64_t p1, int64_t p2, const char *what)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(r, what);
	sqlite3_bind_int64(st, 1, p1);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, p2);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(r, what);
}

/* One integer from sql with ?1 = p1 (NULL result: dflt). */
static int int_query(struct rot *r, const char *sql, int64_t p1, int64_t dflt, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(r, "query");
	sqlite3_bind_int64(st, 1, p1);
	rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
		       ? sqlite3_column_int64(st, 0) : dflt;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(r, "query");
}

/* 32 bytes of column 0 of sql (?1 = p1); -1 with err if absent or bad. */
static int hash_query(struct rot *r, const char *sql, int64_t p1, unsigned char out[32],
		      const char *what)
{
	sqlite3_stmt *st;
	int rc, ok = 0;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(r, what);
	sqlite3_bind_int64(st, 1, p1);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) == 32) {
		memcpy(out, sqlite3_column_blob(st, 0), 32);
		ok = 1;
	}
	sqlite3_finalize(st);
	if (!ok)
		snprintf(r->err, r->errlen, "%s: rotate: %s (seq %" PRId64 ") missing or damaged; "
			 "run sbx-audit verify", r->path, what, p1);
	return ok ? 0 : -1;
}

int sbx_audit_base(struct sbx_audit *a, uint64_t *seq, unsigned char chain[32],
		   char *err, size_t errlen)
{
	char v[80];
	size_t bin = 0;
	int rc;

	*seq = 0;
	memset(chain, 0, 32);
	rc = sbx_audit_meta_get(a, "base_seq", v, sizeof(v), err, errlen);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	*seq = strtoull(v, NULL, 10);
	if (sbx_audit_meta_get(a, "base_chain", v, sizeof(v), err, errlen) != 0 ||
	    sodium_hex2bin(chain, 32, v, strlen(v), NULL, &bin, NULL) != 0 || bin != 32) {
		snprintf(err, errlen, "%s: meta base_chain missing or not 64 hex digits",
			 sbx_audit_path(a));
		return -1;
	}
	return 0;
}

/* The frontier stored with the checkpoint of size base, checked against
 * that checkpoint's signed root. */
int sbx_audit_base_tree(struct sbx_audit *a, uint64_t base, const unsigned char *pk,
			struct sbx_mtree *t, unsigned char root[32], char *err, size_t errlen)
{
	sqlite3_stmt *st;
	struct sbx_checkpoint cp;
	char why[160] = "no checkpoint of that size";
	int rc, ok = 0;

	sbx_mtree_init(t);
	if (base == 0) {
		sbx_mtree_root(t, root);
		return 0;
	}
	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT CAST(note AS TEXT), frontier FROM"
			       " checkpoints WHERE size = ?1", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: base checkpoint: %s", sbx_audit_path(a),
			 sqlite3_errmsg(sbx_audit_db(a)));
		return -1;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)base);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *note = (const char *)sqlite3_column_text(st, 0);
		if (note == NULL ||
		    sbx_checkpoint_open(note, (size_t)sqlite3_column_bytes(st, 0), pk, &cp, why,
					sizeof(why)) < 0) {
			/* why says it */
		} else if (sbx_mtree_load(t, sqlite3_column_blob(st, 1),
					  (size_t)sqlite3_column_bytes(st, 1)) < 0 ||
			   t->size != base || cp.size != base) {
			snprintf(why, sizeof(why), "stored frontier malformed");
		} else {
			sbx_mtree_root(t, root);
			if (sodium_memcmp(root, cp.root, 32) == 0)
				ok = 1;
			else
				snprintf(why, sizeof(why), "stored frontier does not give the signed root");
		}
	}
	sqlite3_finalize(st);
	if (!ok) {
		sbx_mtree_init(t);
		snprintf(err, errlen, "%s: base checkpoint of size %" PRIu64 ": %s",
			 sbx_audit_path(a), base, why);
		return -1;
	}
	return 0;
}

/* Largest C <= cut prefix that splits no run: while a START at or before
 * C has its END after C, move C before that START. */
static int find_cut(struct rot *r, int64_t cut_ns, int64_t last, int64_t *c)
{
	int64_t s;

	if (int_query(r, "SELECT min(seq) - 1 FROM records WHERE realtime_ns >= ?1", cut_ns,
		      last, c) < 0)
		return -1;
	for (;;) {
		if (int_query(r, "SELECT min(s.seq) FROM records s JOIN records e ON"
			      " e.run_id = s.run_id AND e.kind = 'end' AND e.seq > ?1"
			      " WHERE s.kind = 'start' AND s.seq <= ?1", *c, 0, &s) < 0)
			return -1;
		if (s == 0)
			return 0;
		*c = s - 1;
	}
}

static int sign_at(struct rot *r, const unsigned char *sk, const char *origin,
		   uint64_t base, int64_t first, int64_t c, char *note,
		   unsigned char *fr, size_t *frlen)
{
	const unsigned char *pk = sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES;
	struct sbx_checkpoint cp = {0};
	struct sbx_mtree *t = malloc(sizeof(*t));
	sqlite3_stmt *st;
	int rc, ret = -1;

	if (t == NULL) {
		snprintf(r->err, r->errlen, "%s: rotate: out of memory", r->path);
		return -1;
	}
	if (sbx_audit_base_tree(r->a, base, pk, t, cp.root, r->err, r->errlen) < 0)
		goto out;
	if (sqlite3_prepare_v2(r->db, "SELECT seq, leaf FROM records WHERE seq >= ?1 AND"
			       " seq <= ?2 ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
		fail(r, "read leaves");
		goto out;
	}
	sqlite3_bind_int64(st, 1, first);
	sqlite3_bind_int64(st, 2, c);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* Leaf i is record seq i: a gap would silently shift the tree. */
		if (sqlite3_column_int64(st, 0) != (int64_t)t->size + 1 ||
		    sqlite3_column_bytes(st, 1) != 32) {
			snprintf(r->err, r->errlen, "%s: rotate: record %" PRIu64 " missing or damaged;"
				 " run sbx-audit verify", r->path, t->size + 1);
			sqlite3_finalize(st);
			goto out;
		}
		sbx_mtree_push(t, sqlite3_column_blob(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		fail(r, "read leaves");
		goto out;
	}
	snprintf(cp.origin, sizeof(cp.origin), "%s", origin);
	cp.size = t->size;
	sbx_mtree_root(t, cp.root);
	if (sbx_checkpoint_sign(&cp, sk, note) < 0) {
		snprintf(r->err, r->errlen, "%s: rotate: origin '%.64s' is not a valid note key name",
			 r->path, origin);
		goto out;
	}
	(void)pk;
	*frlen = sbx_mtree_save(t, fr);
	ret = 0;
out:
	free(t);
	return ret;
}

static int put_checkpoint(struct rot *r, const char *schema, int64_t c, const char *note,
			  const unsigned char *fr, size_t frlen)
{
	char sql[256];
	sqlite3_stmt *st;
	struct timespec ts;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (sbx_ckpt_table_create(r->db, schema) < 0)
		return fail(r, "create checkpoints table");
	/* kept for good: the base of the live log, the end of the archive */
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO %s.checkpoints(size, note, frontier,"
		 " time_ns, kept) VALUES(?1, ?2, ?3, ?4, 1)", schema);
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(r, "store checkpoint");
	sqlite3_bind_int64(st, 1, c);
	sqlite3_bind_text(st, 2, note, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 3, fr, (int)frlen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(r, "store checkpoint");
}

static int set_base(struct rot *r, const char *schema, uint64_t seq, const unsigned char chain[32])
{
	char sql[200], hex[65];
	sqlite3_stmt *st;
	int rc;

	sodium_bin2hex(hex, sizeof(hex), chain, 32);
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO %s.meta(key, value) VALUES"
		 " ('base_seq', ?1), ('base_chain', ?2)", schema);
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(r, "set base");
	sqlite3_bind_int64(st, 1, (int64_t)seq);
	sqlite3_bind_text(st, 2, hex, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(r, "set base");
}

/* schema "main" or "arc" has the code search index */
static int has_fts(struct rot *r, const char *schema)
{
	int64_t n = 0;

	return int_query(r, strcmp(schema, "arc") == 0
			 ? "SELECT count(*) FROM arc.sqlite_master WHERE name = 'code_fts_docsize'"
			 : "SELECT count(*) FROM main.sqlite_master WHERE name = 'code_fts_docsize'",
			 0, 0, &n) == 0 && n > 0;
}

/* Records after..c by column name: the two logs may have gained their
 * projected columns (ALTER TABLE) in different orders. */
static int copy_records(struct rot *r, int64_t after, int64_t c)
{
	char *cols = sbx_audit_record_columns(), sql[8192];
	int rc;

	if (cols == NULL) {
		snprintf(r->err, r->errlen, "%s: rotate: out of memory", r->path);
		return -1;
	}
	snprintf(sql, sizeof(sql), "INSERT INTO arc.records(%s) SELECT %s FROM main.records"
		 " WHERE seq > ?1 AND seq <= ?2 ORDER BY seq", cols, cols);
	free(cols);
	rc = exec_i64(r, sql, after, c, "copy records");
	return rc;
}

/* Step 1: everything the archive needs, in one transaction on it. */
static int fill_archive(struct rot *r, int64_t arc_last, int64_t first, int64_t c,
			uint64_t base, const unsigned char base_chain[32], const char *note,
			const unsigned char *fr, size_t frlen)
{
	if (exec(r, "BEGIN", "begin archive") < 0)
		return -1;
	if (arc_last == 0 && base > 0) {
		/* A fresh archive of a log that was rotated before starts where
		 * the live log did: same base, same base checkpoint. */
		if (set_base(r, "arc", base, base_chain) < 0)
			goto fail;
		if (sbx_ckpt_table_create(r->db, "arc") < 0) {
			fail(r, "checkpoints");
			goto fail;
		}
	}
	if (copy_records(r, arc_last > first - 1 ? arc_last : first - 1, c) < 0 ||
	    exec_i64(r, "INSERT OR IGNORE INTO arc.code(sha256, text) SELECT sha256, text FROM main.code WHERE sha256 IN"
		     " (SELECT code_sha256 FROM main.records WHERE kind = 'start' AND seq <= ?1)", c, 0,
		     "copy code") < 0 ||
	    /* the policy texts, all of them: the records table does not project
	     * policy_sha256, and a handful of rows is cheaper than finding out;
	     * the live log keeps them too (its STARTs may name them) */
	    exec(r, "INSERT OR IGNORE INTO arc.policy(sha256, text) SELECT sha256, text FROM main.policy",
		 "copy policy texts") < 0 ||
	    (has_fts(r, "arc") &&
	     exec(r, "INSERT INTO arc.code_fts(rowid, text) SELECT rowid, text FROM arc.code c"
		  " WHERE NOT EXISTS (SELECT 1 FROM arc.code_fts_docsize d WHERE d.id = c.rowid)",
		  "index archived code") < 0) ||
	    put_checkpoint(r, "arc", c, note, fr, frlen) < 0 ||
	    exec_i64(r, "INSERT OR IGNORE INTO arc.checkpoints(size, note, frontier, time_ns, kept)"
		     " SELECT size, note, frontier, time_ns, kept FROM main.checkpoints"
		     " WHERE size <= ?1", c, 0, "copy checkpoints") < 0)
		goto fail;
	if (exec(r, "COMMIT", "commit archive") < 0)
		goto fail;
	/* Into the archive file itself, fsync'd: it must stand alone. */
	if (sqlite3_exec(r->db, "PRAGMA arc.wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK)
		return fail(r, "archive checkpoint");
	return 0;
fail:
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The ROTATE record that signs the new base: seq, chain value and the
 * archive's final checkpoint; unsigned, a base is tampering (verify). */
static int append_rotate(struct rot *r, int64_t c, const unsigned char chain_c[32],
			 const char *note, const unsigned char *sk, const char *origin)
{
	struct sbx_record rec;
	struct passwd *pw = getpwuid(getuid());
	unsigned char rnd[16];
	struct timespec ts;
	int rc;

	memset(&rec, 0, sizeof(rec));
	rec.kind = SBX_REC_ROTATE;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(rec.run_id, sizeof(rec.run_id), rnd, sizeof(rnd));
	clock_gettime(CLOCK_REALTIME, &ts);
	rec.realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	rec.boottime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	gethostname(rec.host, sizeof(rec.host) - 1);
	rec.uid = (uint32_t)getuid();
	rec.gid = (uint32_t)getgid();
	snprintf(rec.user, sizeof(rec.user), "%s", pw ? pw->pw_name : "?");
	if (sbx_rec_put_u64(&rec, SBX_F_BASE_SEQ, (uint64_t)c, r->err, r->errlen) < 0 ||
	    sbx_rec_put_digest(&rec, SBX_F_BASE_CHAIN, chain_c, r->err, r->errlen) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_BASE_NOTE, note, r->err, r->errlen) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_SBX_VERSION, SBX_VERSION, r->err, r->errlen) < 0) {
		sbx_rext_free(&rec.ext);
		return -1;
	}
	(void)sk;
	rc = sbx_audit_append_in_tx_with(r->a, &rec, r->sg, origin, NULL, r->err, r->errlen);
	sbx_rext_free(&rec.ext);
	return rc;
}

/* Step 2: the live log keeps C+1.. and its new base, signed by a ROTATE
 * record committed with it. */
static int trim_live(struct rot *r, int64_t c, const unsigned char chain_c[32], const char *note,
		     const unsigned char *fr, size_t frlen, const unsigned char *sk,
		     const char *origin)
{
	if (exec(r, "BEGIN IMMEDIATE", "begin") < 0)
		return -1;
	if (put_checkpoint(r, "main", c, note, fr, frlen) < 0 || set_base(r, "main", (uint64_t)c, chain_c) < 0)
		goto fail;
	if (exec_i64(r, "DELETE FROM main.records WHERE seq <= ?1", c, 0, "delete records") < 0 ||
	    exec_i64(r, "DELETE FROM main.checkpoints WHERE size < ?1", c, 0, "delete checkpoints") < 0)
		goto fail;
	/* the search index forgets the texts too (verify checks it covers
	 * the code table exactly; triggers are off on every connection) */
	if (has_fts(r, "main") && exec(r, "INSERT INTO main.code_fts(code_fts, rowid, text) SELECT 'delete',"
			       " rowid, text FROM main.code WHERE sha256 NOT IN (SELECT code_sha256 FROM"
			       " main.records WHERE kind = 'start' AND code_sha256 IS NOT NULL)",
			       "unindex code") < 0)
		goto fail;
	if (exec(r, "DELETE FROM main.code WHERE sha256 NOT IN (SELECT code_sha256 FROM"
		 " main.records WHERE kind = 'start' AND code_sha256 IS NOT NULL)", "delete code") < 0 ||
	    append_rotate(r, c, chain_c, note, sk, origin) < 0 || exec(r, "COMMIT", "commit") < 0)
		goto fail;
	return 0;
fail:
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The archive must continue this log: same key, and it ends where the
 * live log starts (or overlaps it with the same records: a resumed run). */
static int check_archive(struct rot *r, int64_t first, int64_t *arc_last)
{
	unsigned char a[32], l[32];
	sqlite3_stmt *st;
	int rc, same = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT (SELECT value FROM arc.meta WHERE key = 'pubkey')"
			       " IS (SELECT value FROM main.meta WHERE key = 'pubkey')"
			       " OR (SELECT value FROM arc.meta WHERE key = 'pubkey') IS NULL", -1, &st,
			       NULL) != SQLITE_OK)
		return fail(r, "archive key");
	rc = sqlite3_step(st);
	same = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (!same) {
		snprintf(r->err, r->errlen, "%s: rotate: the archive was written with another key", r->path);
		return -1;
	}
	if (exec(r, "INSERT OR IGNORE INTO arc.meta(key, value) SELECT key, value FROM main.meta"
		 " WHERE key = 'pubkey'", "archive key") < 0 ||
	    int_query(r, "SELECT max(seq) FROM arc.records", 0, 0, arc_last) < 0)
		return -1;
	if (*arc_last == 0)
		return 0;
	if (*arc_last < first - 1) {
		snprintf(r->err, r->errlen, "%s: rotate: the archive ends at seq %" PRId64 " but this "
			 "log starts at seq %" PRId64 " (not this log's archive)", r->path, *arc_last, first);
		return -1;
	}
	if (*arc_last >= first) {
		if (hash_query(r, "SELECT leaf FROM arc.records WHERE seq = ?1", *arc_last, a,
			       "archive record") < 0 ||
		    hash_query(r, "SELECT leaf FROM main.records WHERE seq = ?1", *arc_last, l,
			       "record") < 0)
			return -1;
		if (sodium_memcmp(a, l, 32) != 0) {
			snprintf(r->err, r->errlen, "%s: rotate: the archive's record %" PRId64 " differs "
				 "from the log's (not this log's archive)", r->path, *arc_last);
			return -1;
		}
	}
	return 0;
}

static int rotate(struct rot *r, const char *archive, int64_t cut_ns, const unsigned char *sk,
		  const char *origin, struct sbx_rotate_result *res)
{
	unsigned char base_chain[32], chain_c[32], fr[8 + 64 * 32];
	char note[SBX_NOTE_MAX];
	uint64_t base;
	int64_t first, last, c, arc_last;
	size_t frlen = 0;
	sqlite3_stmt *st;
	int rc;

	if (sbx_audit_base(r->a, &base, base_chain, r->err, r->errlen) < 0 ||
	    int_query(r, "SELECT min(seq) FROM records", 0, 0, &first) < 0 ||
	    int_query(r, "SELECT max(seq) FROM records", 0, 0, &last) < 0)
		return -1;
	if (first == 0) {
		res->first = res->last = 0;
		return 0;
	}
	if (find_cut(r, cut_ns, last, &c) < 0)
		return -1;
	res->first = (uint64_t)first;
	res->last = c >= first ? (uint64_t)c : 0;
	if (c >= first &&
	    (hash_query(r, "SELECT chain FROM records WHERE seq = ?1", c, chain_c, "record") < 0 ||
	     sign_at(r, sk, origin, base, first, c, note, fr, &frlen) < 0))
		return -1;
	if (sqlite3_prepare_v2(r->db, "ATTACH ?1 AS arc", -1, &st, NULL) != SQLITE_OK)
		return fail(r, "attach archive");
	sqlite3_bind_text(st, 1, archive, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(r, "attach archive");
	rc = exec(r, "PRAGMA arc.synchronous=FULL", "archive synchronous");
	/* Checked even when nothing is old enough to move (an empty log has
	 * nothing to compare and returned above): a wrong archive
	 * must not pass silently because of when rotate happened to run. */
	if (rc == 0)
		rc = check_archive(r, first, &arc_last);
	if (rc == 0 && c < first) {
		sqlite3_exec(r->db, "DETACH arc", NULL, NULL, NULL);
		return 0;
	}
	if (rc == 0)
		rc = fill_archive(r, arc_last, first, c, base, base_chain, note, fr, frlen);
	if (rc == 0)
		rc = trim_live(r, c, chain_c, note, fr, frlen, sk, origin);
	sqlite3_exec(r->db, "DETACH arc", NULL, NULL, NULL);
	if (rc == 0)
		snprintf(res->note, sizeof(res->note), "%s", note);
	/* the ROTATE record is covered at once, as every run's END is */
	if (rc == 0 && sbx_audit_checkpoint_with(r->a, r->sg, origin, 0, 0, NULL, r->err, r->errlen) < 0)
		return -1;
	return rc;
}

int sbx_audit_rotate(struct sbx_audit *a, const char *archive, int64_t cut_ns,
		     const unsigned char *sk, struct sbx_signer *sg, const char *origin,
		     struct sbx_rotate_result *res, char *err, size_t errlen)
{
	struct sbx_signer local;
	struct rot r = {.a = a, .db = sbx_audit_db(a), .path = sbx_audit_path(a), .err = err,
			.errlen = errlen, .sg = sg};

	if (sg == NULL) {
		sbx_signer_local(&local, sk);
		r.sg = &local;
	}
	struct sbx_audit *arc;

	memset(res, 0, sizeof(*res));
	/* Create the archive with the log's schema (0640, WAL), as the writer does. */
	if (sbx_audit_open(archive, 0, &arc, err, errlen) < 0)
		return -1;
	sbx_audit_close(arc);
	return rotate(&r, archive, cut_ns, sk, origin, res);
}
