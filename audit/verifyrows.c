/* SPDX-License-Identifier: ISC */
/*
 * The readers of the verifier: everything about one record that does not
 * depend on the records before it (the leaf hash of the blob, decoding it,
 * comparing the SQL columns with it, the next chain link on the guess that
 * the walk continues from the previous row's stored chain) is done here,
 * on several threads with one read-only connection each, because hashing
 * half a gigabyte of blobs is most of a verify. The walk (auditverify.c)
 * then only compares and decides, in seq order, so its findings are the
 * same whatever the number of threads.
 *
 * Work is cut into chunks of seq ranges: chunk i+1 starts at the first seq
 * at least chunk_rows above the start of chunk i (one index seek), so a
 * chunk never holds more than chunk_rows records and gaps cost nothing.
 * A ring of slots bounds the memory: a reader waits for the walk to free
 * the slot of the chunk it claims.
 */
#include "auditdb.h"
#include "verifyint.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CHUNK 4096
#define MAX_THREADS 4

/* Result columns: the stored ones, then the derived ones from C_COLS on. */
enum { C_BLOB, C_LEAF, C_CHAIN, C_SIG, C_ORIGIN, C_COLS };

enum slot_state { FREE, BUSY, READY };

struct slot {
	enum slot_state state;
	uint64_t idx;                 /* chunk number */
	struct vfy_chunk c;
};

struct conn {
	struct sbx_audit *own;        /* opened here; NULL for the caller's */
	sqlite3 *db;
	sqlite3_stmt *rows, *seek;
	int have_fn;                  /* ROW_FN registered on db */
	struct vfy_chunk *ch;         /* what ROW_FN fills, during fill() */
};

struct vfy_reader;

struct worker {
	struct vfy_reader *r;
	struct conn c;
	pthread_t t;
	int started;
};

struct vfy_reader {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t max;                  /* largest seq of the caller's snapshot */
	int64_t next_lo;              /* first seq of the next chunk */
	int more;                     /* a next chunk exists */
	uint64_t claimed;             /* chunks handed out */
	uint64_t walked;              /* chunks handed to the walk */
	int64_t chunk;
	int failed, stop;
	char err[512];
	struct slot *slots;
	size_t nslots;
	struct worker w[MAX_THREADS];
	int nthreads;                 /* started */
	struct conn inline_c;         /* the caller's connection, no threads */
	struct sbx_audit *a;
	int cur;                      /* slot handed to the walk, or -1 */
};

void vfy_show(char *out, size_t outlen, const unsigned char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 8 < outlen; i++) {
		if (i == 40) {
			o += (size_t)snprintf(out + o, outlen - o, "...");
			break;
		}
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'' && s[i] != '\\')
			out[o++] = (char)s[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", s[i]);
	}
	out[o] = '\0';
}

static void show_expected(char *out, size_t outlen, const struct sbx_colval *v)
{
	char tmp[200];

	if (v->type == SBX_COL_INT) {
		snprintf(out, outlen, "%" PRId64, v->i);
	} else if (v->type == SBX_COL_TEXT) {
		vfy_show(tmp, sizeof(tmp), (const unsigned char *)v->s, v->n);
		snprintf(out, outlen, "'%s'", tmp);
	} else {
		snprintf(out, outlen, "NULL");
	}
}

static void show_stored(char *out, size_t outlen, sqlite3_value *sv)
{
	char tmp[200];

	switch (sqlite3_value_type(sv)) {
	case SQLITE_INTEGER:
		snprintf(out, outlen, "%" PRId64, (int64_t)sqlite3_value_int64(sv));
		break;
	case SQLITE_TEXT:
		vfy_show(tmp, sizeof(tmp), sqlite3_value_text(sv), (size_t)sqlite3_value_bytes(sv));
		snprintf(out, outlen, "'%s'", tmp);
		break;
	case SQLITE_NULL:
		snprintf(out, outlen, "NULL");
		break;
	case SQLITE_FLOAT:
		snprintf(out, outlen, "%g", sqlite3_value_double(sv));
		break;
	default:
		snprintf(out, outlen, "a %d-byte blob", sqlite3_value_bytes(sv));
		break;
	}
}

static int col_equal(sqlite3_value *sv, const struct sbx_colval *v)
{
	int t = sqlite3_value_type(sv);

	switch (v->type) {
	case SBX_COL_INT:
		return t == SQLITE_INTEGER && sqlite3_value_int64(sv) == v->i;
	case SBX_COL_TEXT:
		if (t != SQLITE_TEXT)
			return 0;
		{
			const unsigned char *s = sqlite3_value_text(sv);
			size_t n = (size_t)sqlite3_value_bytes(sv);
			return n == v->n && (n == 0 || memcmp(s, v->s, n) == 0);
		}
	default:
		return t == SQLITE_NULL;
	}
}

/* Adds a columns-mismatch finding to c->found when a column differs. */
static void check_columns(struct vfy_chunk *c, sqlite3_value **col, int64_t seq,
			  const struct sbx_record *rec)
{
	struct sbx_cols cols;
	char stored[256], want[256], more[200] = "";
	int i, first = -1, n = (int)sbx_audit_ncols();
	struct sbx_fval ov;
	size_t mo = 0;

	if (sbx_record_columns(rec, &cols, NULL, 0) < 0) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		if (col_equal(col[C_COLS + i], &cols.v[i]))
			continue;
		if (first < 0) {
			first = i;
			show_stored(stored, sizeof(stored), col[C_COLS + i]);
			show_expected(want, sizeof(want), &cols.v[i]);
		} else if (mo + 40 < sizeof(more)) {
			mo += (size_t)snprintf(more + mo, sizeof(more) - mo, "%s%s",
					       mo ? ", " : "; also ", sbx_audit_colname((size_t)i));
		}
	}
	/* version 2: the blob's origin is the stored one the signature covers */
	if (sbx_rec_get(rec, SBX_F_ORIGIN, &ov) == 1 &&
	    (ov.n != (size_t)sqlite3_value_bytes(col[C_ORIGIN]) ||
	     memcmp(ov.p, sqlite3_value_blob(col[C_ORIGIN]), ov.n) != 0)) {
		if (first < 0) {
			struct sbx_colval e = {.type = SBX_COL_TEXT, .s = (const char *)ov.p, .n = ov.n};
			first = n;
			show_stored(stored, sizeof(stored), col[C_ORIGIN]);
			show_expected(want, sizeof(want), &e);
		} else if (mo + 40 < sizeof(more)) {
			snprintf(more + mo, sizeof(more) - mo, "%sorigin", mo ? ", " : "; also ");
		}
	}
	if (first >= 0)
		vfy_add(&c->found, &c->oom, seq, SBX_FIND_COLUMNS_MISMATCH, want, stored,
			"column %s is %s but the blob says %s%s",
			first == n ? "origin" : sbx_audit_colname((size_t)first), stored, want, more);
	sbx_cols_free(&cols);
}

/* Copy a stored hash-like column when it has exactly its length. */
static int take(sqlite3_value *sv, unsigned char *out, int want)
{
	const unsigned char *p = sqlite3_value_blob(sv);
	int n = sqlite3_value_bytes(sv);

	if (n == want)
		memcpy(out, p, (size_t)want);
	return n;
}

static void after_ckpt(size_t idx, const struct sbx_fval *v, void *ctx)
{
	struct vfy_row *row = ctx;

	(void)idx;
	row->has_after = 1;
	row->after_size = v[0].u;
	memcpy(row->after_root, v[1].p, 32);
}

/* What the walk checks across records (pairing, code, checkpoints, the
 * rotation base), copied out of the decoded record. */
static void take_facts(struct vfy_row *row, const struct sbx_record *rec)
{
	struct sbx_fval v, c;

	row->kind = rec->kind;
	memcpy(row->run_id, rec->run_id, sizeof(row->run_id));
	memcpy(row->code_sha256, rec->code_sha256, 32);
	row->wall_limit_ms = rec->limits.wall_ms;
	row->has_after = row->has_base = row->has_policy = 0;
	row->cell = 0;
	if (rec->ext.len == 0)
		return;
	/* a live session's calls pair by cell; the session's own pair may
	 * be as far apart as its lifetime */
	if (sbx_rec_get(rec, SBX_F_CELL, &v) == 1)
		row->cell = v.u;
	if (rec->kind == SBX_REC_START && sbx_rec_get(rec, SBX_F_LIVE_LIFETIME, &v) == 1)
		row->wall_limit_ms = v.u;
	if (rec->kind == SBX_REC_START && sbx_rec_get(rec, SBX_F_POLICY_BYTES, &v) == 1) {
		row->has_policy = 1;
		row->policy_bytes = v.u;
		memcpy(row->policy_sha256, rec->policy_sha256, 32);
	}
	if (rec->kind == SBX_REC_START && sbx_rec_get(rec, SBX_F_AFTER_CKPT, &v) == 1)
		sbx_rec_items(sbx_field_def(SBX_F_AFTER_CKPT), v.p, v.n, after_ckpt, row);
	if (rec->kind == SBX_REC_ROTATE && sbx_rec_get(rec, SBX_F_BASE_SEQ, &v) == 1 &&
	    sbx_rec_get(rec, SBX_F_BASE_CHAIN, &c) == 1) {
		row->has_base = 1;
		row->base_seq = v.u;
		memcpy(row->base_chain, c.p, 32);
	}
}

static void read_row(struct vfy_chunk *c, sqlite3_value **col)
{
	struct vfy_row *row = &c->rows[c->n];
	const unsigned char *blob = sqlite3_value_blob(col[C_BLOB]);
	size_t blen = (size_t)sqlite3_value_bytes(col[C_BLOB]);
	const char *origin;
	struct sbx_record rec;
	char why[200];
	size_t found_before = c->found.n_findings;

	row->seq = sqlite3_value_int64(col[C_COLS + SBX_COL_SEQ]);
	if (blob == NULL)
		blob = (const unsigned char *)"";
	sbx_audit_leaf(blob, blen, row->leaf);
	row->leaf_len = take(col[C_LEAF], row->sleaf, 32);
	row->chain_len = take(col[C_CHAIN], row->chain, 32);
	row->sig_len = take(col[C_SIG], row->sig, crypto_sign_BYTES);
	origin = (const char *)sqlite3_value_text(col[C_ORIGIN]);
	row->olen = (size_t)sqlite3_value_bytes(col[C_ORIGIN]);
	if (origin == NULL)
		origin = "";
	if (row->olen > SBX_ORIGIN_MAX) {
		memcpy(row->origin, origin, SBX_ORIGIN_MAX);
		row->olen = SBX_ORIGIN_MAX + 1;
	} else {
		memcpy(row->origin, origin, row->olen);
	}
	row->has_spec = c->n > 0 && row[-1].chain_len == 32;
	if (row->has_spec)
		sbx_audit_chain(row[-1].chain, row->leaf, row->spec);
	/* Decoded and compared even when the leaf does not match: whether the
	 * blob counts as intact can depend on the chain, which the walk knows. */
	row->decoded = 0;
	row->kind = 0;
	row->has_after = row->has_base = row->has_policy = 0;
	if (sbx_record_decode(blob, blen, &rec, why, sizeof(why)) < 0) {
		vfy_add(&c->found, &c->oom, row->seq, SBX_FIND_UNDECODABLE, NULL, NULL, "%s", why);
	} else {
		check_columns(c, col, row->seq, &rec);
		row->decoded = 1;
		row->realtime_ns = rec.realtime_ns;
		memcpy(row->boot_id, rec.boot_id, sizeof(row->boot_id));
		take_facts(row, &rec);
		sbx_record_free(&rec);
	}
	row->finding = c->found.n_findings > found_before ? (int)found_before : -1;
	c->n++;
}

/*
 * The rows reach read_row as the arguments of an application-defined SQL
 * function (sqlite3_create_function(3)) rather than through
 * sqlite3_column_value: that one checks the statement and enters the
 * connection's mutex for each of the 40-odd columns, which cost an eighth
 * of a verify (0.45 s of CPU over 1,000,000 records, measured). The values
 * are the columns as stored, as sqlite3_column_value gives them; they are
 * used only during the call, as the interface allows. SQLITE_DIRECTONLY:
 * a view or trigger in the (untrusted) database cannot call it.
 */
#define ROW_FN "sbx_verify_row"

static void row_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct conn *c = sqlite3_user_data(ctx);
	struct vfy_chunk *ch = c->ch;

	/* argc is the count it was registered with: a call with another one
	 * fails to prepare ("wrong number of arguments") */
	(void)argc;
	sqlite3_result_null(ctx);
	if (ch == NULL || ch->oom)
		return;
	if (ch->n == ch->cap) {
		/* only when rows were added inside the range meanwhile */
		struct vfy_row *nr = realloc(ch->rows, 2 * ch->cap * sizeof(*nr));
		if (nr == NULL) {
			ch->oom = 1;
			return;
		}
		ch->rows = nr;
		ch->cap *= 2;
	}
	read_row(ch, argv);
}

/* A projected column a log lacks (written by an older sbx, never opened
 * by a newer writer) reads as NULL, which is what its records project. */
static char *select_sql(sqlite3 *db)
{
	size_t i, n = sbx_audit_ncols();
	char *sql = malloc(4096), *p;

	if (sql == NULL)
		return NULL;
	p = sql + sprintf(sql, "SELECT " ROW_FN "(blob,leaf,chain,sig,origin");
	for (i = 0; i < n; i++) {
		const char *name = sbx_audit_colname(i);
		int have = i < SBX_NCOLS;
		sqlite3_stmt *st;
		if (!have && sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('records')"
						" WHERE name = ?1", -1, &st, NULL) == SQLITE_OK) {
			sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
			have = sqlite3_step(st) == SQLITE_ROW;
			sqlite3_finalize(st);
		}
		p += sprintf(p, have ? ",%s" : ",NULL", name);
	}
	sprintf(p, ") FROM records WHERE seq BETWEEN ?1 AND ?2 ORDER BY seq");
	return sql;
}

/* The statements and the function, which points at c. */
static void conn_release(struct conn *c)
{
	sqlite3_finalize(c->rows);
	sqlite3_finalize(c->seek);
	c->rows = c->seek = NULL;
	if (c->have_fn)
		sqlite3_create_function(c->db, ROW_FN, C_COLS + (int)sbx_audit_ncols(), SQLITE_UTF8,
					NULL, NULL, NULL, NULL);
	c->have_fn = 0;
}

static int conn_prepare(struct conn *c, char *err, size_t errlen, const char *path)
{
	char *sql;

	if (sqlite3_create_function(c->db, ROW_FN, C_COLS + (int)sbx_audit_ncols(),
				    SQLITE_UTF8 | SQLITE_DIRECTONLY, c, row_fn, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: read records: %s", path, sqlite3_errmsg(c->db));
		return -1;
	}
	c->have_fn = 1;
	sql = select_sql(c->db);
	if (sql == NULL || sqlite3_prepare_v2(c->db, sql, -1, &c->rows, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(c->db, "SELECT seq FROM records WHERE seq >= ?1 ORDER BY seq LIMIT 1",
			       -1, &c->seek, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: read records: %s", path,
			 sql ? sqlite3_errmsg(c->db) : "out of memory");
		free(sql);
		conn_release(c);
		return -1;
	}
	free(sql);
	return 0;
}

static void conn_close(struct conn *c)
{
	conn_release(c);
	if (c->own != NULL) {
		sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
		sbx_audit_close(c->own);
	}
	memset(c, 0, sizeof(*c));
}

/* A reader's own connection, in a read transaction of its own. Not memory
 * mapped: a file cut meanwhile must not kill verify with SIGBUS (mapping
 * saves only the kernel's page copies, about a tenth of a verify). */
static int conn_open(struct conn *c, struct sbx_audit *a)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	if (sbx_audit_open(sbx_audit_path(a), 1, &c->own, err, sizeof(err)) < 0)
		return -1;
	c->db = sbx_audit_db(c->own);
	if (sqlite3_exec(c->db, "PRAGMA mmap_size=0", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    conn_prepare(c, err, sizeof(err), sbx_audit_path(a)) < 0) {
		conn_close(c);
		return -1;
	}
	return 0;
}

/* Under mu: the next chunk's range, using c for the seek. Returns 0, 1 when
 * there is none, -1 on a read error (r->err set). */
static int claim_range(struct vfy_reader *r, struct conn *c, int64_t *lo, int64_t *hi)
{
	int rc;

	if (!r->more)
		return 1;
	*lo = r->next_lo;
	/* lo <= max here; unsigned, as the range may span all of int64 */
	if ((uint64_t)r->max - (uint64_t)*lo < (uint64_t)r->chunk) {
		*hi = r->max;
		r->more = 0;
		return 0;
	}
	sqlite3_bind_int64(c->seek, 1, *lo + r->chunk);
	rc = sqlite3_step(c->seek);
	if (rc == SQLITE_ROW && sqlite3_column_int64(c->seek, 0) <= r->max) {
		r->next_lo = sqlite3_column_int64(c->seek, 0);
		*hi = r->next_lo - 1;
	} else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		*hi = r->max;
		r->more = 0;
	} else {
		snprintf(r->err, sizeof(r->err), "%s: read records: %s",
			 sbx_audit_path(r->a), sqlite3_errmsg(c->db));
		sqlite3_reset(c->seek);
		return -1;
	}
	sqlite3_reset(c->seek);
	return 0;
}

/* Read seq lo..hi into chunk ch. Returns 0 or -1 with err. */
static int fill(struct conn *c, struct vfy_chunk *ch, int64_t lo, int64_t hi, int64_t want,
		const char *path, char *err, size_t errlen)
{
	int rc;

	ch->n = 0;
	ch->oom = 0;
	sbx_verify_report_free(&ch->found);
	if (ch->cap < (size_t)want) {
		free(ch->rows);
		ch->rows = malloc((size_t)want * sizeof(*ch->rows));
		ch->cap = ch->rows ? (size_t)want : 0;
		if (ch->rows == NULL) {
			snprintf(err, errlen, "%s: verify: out of memory", path);
			return -1;
		}
	}
	sqlite3_bind_int64(c->rows, 1, lo);
	sqlite3_bind_int64(c->rows, 2, hi);
	c->ch = ch; /* each step reads one row into ch (row_fn) */
	while ((rc = sqlite3_step(c->rows)) == SQLITE_ROW && !ch->oom)
		;
	sqlite3_reset(c->rows);
	c->ch = NULL;
	if (ch->oom) {
		snprintf(err, errlen, "%s: verify: out of memory", path);
		return -1;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		snprintf(err, errlen, "%s: read records: %s", path, sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct vfy_reader *r = w->r;
	char err[512];

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct slot *s;
		int64_t lo, hi;
		int rc;

		while (!r->stop && !r->failed && r->more &&
		       r->slots[r->claimed % r->nslots].state != FREE)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop || r->failed || !r->more)
			break;
		s = &r->slots[r->claimed % r->nslots];
		rc = claim_range(r, &w->c, &lo, &hi);
		if (rc != 0) {
			if (rc < 0)
				r->failed = 1;
			pthread_cond_broadcast(&r->cv);
			break;
		}
		s->state = BUSY;
		s->idx = r->claimed++;
		pthread_mutex_unlock(&r->mu);
		rc = fill(&w->c, &s->c, lo, hi, r->chunk, sbx_audit_path(r->a), err, sizeof(err));
		pthread_mutex_lock(&r->mu);
		if (rc < 0 && !r->failed) {
			r->failed = 1;
			snprintf(r->err, sizeof(r->err), "%s", err);
		}
		s->state = READY;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* The processors this process may run on (taskset, cpusets), not all. */
static int auto_threads(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 2)
		return 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* The range of seq from `from` on in the caller's snapshot (two seeks). */
static int snapshot_range(sqlite3 *db, int64_t from, int64_t *lo, int64_t *hi, int *empty)
{
	sqlite3_stmt *st;
	int ok = 0;

	*empty = 1;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT min(seq) FROM records WHERE seq >= ?1), "
			       "(SELECT max(seq) FROM records WHERE seq >= ?1)", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, from);
	if (sqlite3_step(st) == SQLITE_ROW) {
		ok = 1;
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			*empty = 0;
			*lo = sqlite3_column_int64(st, 0);
			*hi = sqlite3_column_int64(st, 1);
		}
	}
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

int vfy_reader_start(struct vfy_reader **out, struct sbx_audit *a, int64_t from, int threads,
		     unsigned chunk_rows, char *err, size_t errlen)
{
	struct vfy_reader *r = calloc(1, sizeof(*r));
	int empty, i;

	*out = NULL;
	if (r == NULL) {
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		return -1;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->a = a;
	r->cur = -1;
	r->chunk = chunk_rows ? chunk_rows : DEFAULT_CHUNK;
	if (snapshot_range(sbx_audit_db(a), from, &r->next_lo, &r->max, &empty) < 0) {
		snprintf(err, errlen, "%s: read records: %s", sbx_audit_path(a),
			 sqlite3_errmsg(sbx_audit_db(a)));
		vfy_reader_free(r);
		return -1;
	}
	r->more = !empty;
	if (threads <= 0)
		/* a few chunks (an incremental verify) are not worth a thread */
		threads = r->more && r->max - r->next_lo < 4 * r->chunk ? 1 : auto_threads();
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	r->nslots = threads > 1 ? 2 * (size_t)threads + 2 : 1;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	if (r->slots == NULL) {
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		vfy_reader_free(r);
		return -1;
	}
	for (i = 0; threads > 1 && i < threads; i++) {
		struct worker *w = &r->w[r->nthreads];
		w->r = r;
		/* Without a connection of its own (e.g. no access to create
		 * the -shm file) the work is shared by fewer threads. */
		if (conn_open(&w->c, a) < 0)
			continue;
		if (pthread_create(&w->t, NULL, work, w) != 0) {
			conn_close(&w->c);
			continue;
		}
		w->started = 1;
		r->nthreads++;
	}
	if (r->nthreads == 0) {
		r->inline_c.db = sbx_audit_db(a);
		if (conn_prepare(&r->inline_c, err, errlen, sbx_audit_path(a)) < 0) {
			vfy_reader_free(r);
			return -1;
		}
	}
	*out = r;
	return 0;
}

static const struct vfy_chunk *next_inline(struct vfy_reader *r, char *err, size_t errlen)
{
	int64_t lo, hi;
	int rc = claim_range(r, &r->inline_c, &lo, &hi);

	if (rc < 0)
		snprintf(err, errlen, "%s", r->err);
	if (rc != 0)
		return NULL;
	if (fill(&r->inline_c, &r->slots[0].c, lo, hi, r->chunk, sbx_audit_path(r->a),
		 err, errlen) < 0)
		return NULL;
	return &r->slots[0].c;
}

const struct vfy_chunk *vfy_reader_next(struct vfy_reader *r, char *err, size_t errlen)
{
	struct slot *s;

	err[0] = '\0';
	if (r->nthreads == 0)
		return next_inline(r, err, errlen);
	pthread_mutex_lock(&r->mu);
	if (r->cur >= 0) {
		r->slots[r->cur].state = FREE;
		r->cur = -1;
		r->walked++;
		pthread_cond_broadcast(&r->cv);
	}
	s = &r->slots[r->walked % r->nslots];
	while (!r->failed && !(s->state == READY && s->idx == r->walked) &&
	       (r->more || r->walked < r->claimed))
		pthread_cond_wait(&r->cv, &r->mu);
	if (r->failed) {
		snprintf(err, errlen, "%s", r->err);
		pthread_mutex_unlock(&r->mu);
		return NULL;
	}
	if (!(s->state == READY && s->idx == r->walked)) {
		pthread_mutex_unlock(&r->mu);
		return NULL; /* all walked */
	}
	r->cur = (int)(r->walked % r->nslots);
	pthread_mutex_unlock(&r->mu);
	return &s->c;
}

void vfy_reader_free(struct vfy_reader *r)
{
	size_t i;
	int k;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	for (k = 0; k < MAX_THREADS; k++) {
		if (r->w[k].started)
			pthread_join(r->w[k].t, NULL);
		if (r->w[k].c.db != NULL)
			conn_close(&r->w[k].c);
	}
	if (r->inline_c.db != NULL)
		conn_release(&r->inline_c);
	for (i = 0; r->slots != NULL && i < r->nslots; i++) {
		free(r->slots[i].c.rows);
		sbx_verify_report_free(&r->slots[i].c.found);
	}
	free(r->slots);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
