/* SPDX-License-Identifier: ISC */
/*
 * Audit log: canonical encoding, hash chain, signatures and the verifier.
 * Each tamper test starts from a fresh log of three runs (seq 1..6, START
 * and END alternating), edits it the way an attacker with write access to
 * the file would (plain SQL on a second connection), and checks that the
 * verifier names exactly the expected seq and kind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "auditdb.h"
#include "record.h"

struct fx {
	char dir[64];
	char db[128];
	struct sbx_audit *a;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_artifact arts[2];
};

static const char code_text[] = "print(6*7)\n";

static void fill(struct sbx_record *r, int kind, int run, struct sbx_artifact *arts)
{
	static const char argv[] = "/usr/bin/python3\0-I\0/code/main.py";

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", 0xabc000 + run);
	strcpy(r->boot_id, "6a3a0c1e-0000-4000-8000-000000000001");
	r->realtime_ns = 1714564800123456789LL + run * 1000000000LL;
	r->boottime_ns = 5000000000LL;
	strcpy(r->host, "host1");
	r->uid = 1000;
	r->gid = 1000;
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	memset(r->policy_sha256, 0x11, 32);
	r->limits = (struct sbx_limits){30000, 30000, 512u << 20, 64, 1000,
					64u << 20, 64u << 20, 1u << 20, 64u << 20, 256, 5, 0, 0, 0, 0, 0, 0, 0};
	strcpy(r->language, "python");
	memcpy(r->argv, argv, sizeof(argv));
	r->argv_len = sizeof(argv);
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code_text, strlen(code_text));
	r->code = code_text;
	r->code_len = strlen(code_text);
	strcpy(r->session, "sess-1");
	r->attempt = (uint32_t)run;
	if (kind == SBX_REC_END) {
		strcpy(r->outcome, run == 2 ? "error" : "ok");
		r->exit_code = run == 2 ? 1 : 0;
		r->wall_ms = 120;
		r->cpu_ms = 80;
		r->memory_peak_bytes = 12345678;
		r->stdout_bytes = 3;
		r->stderr_bytes = 0;
		memset(r->stdout_sha256, 0x22, 32);
		strcpy(r->stderr_excerpt, "Traceback (most recent call last):\n  boom\n");
		if (arts != NULL) {
			memset(arts, 0, 2 * sizeof(*arts));
			strcpy(arts[0].name, "plot.png");
			arts[0].size = 4096;
			strcpy(arts[0].media_type, "image/png");
			memset(arts[0].sha256, 0x33, 32);
			strcpy(arts[1].name, "bad\xff name.bin"); /* not UTF-8 */
			arts[1].size = 1;
			strcpy(arts[1].media_type, "application/octet-stream");
			r->artifacts = arts;
			r->n_artifacts = 2;
		}
	}
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sbx_record r;
	char err[512];
	int run;

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-audit-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(f->pk, f->sk);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	for (run = 1; run <= 3; run++) {
		fill(&r, SBX_REC_START, run, NULL);
		if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
		fill(&r, SBX_REC_END, run, f->arts);
		if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
		assert_int_equal(r.seq, (uint64_t)run * 2);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];
	const char *suffix[] = {"", "-wal", "-shm", "-journal"};
	size_t i;

	sbx_audit_close(f->a);
	for (i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", f->db, suffix[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/key", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/link", f->dir);
	unlink(p);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The attacker: a plain connection, none of our hardening. */
static void sql(struct fx *f, const char *fmt, ...)
{
	char q[1024], *msg = NULL;
	sqlite3 *db;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
	sqlite3_close(db);
}

static void get_blob(struct fx *f, const char *col, int seq, unsigned char **out, size_t *len)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char q[128];

	snprintf(q, sizeof(q), "SELECT %s FROM records WHERE seq=%d", col, seq);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	*len = (size_t)sqlite3_column_bytes(st, 0);
	*out = malloc(*len + 1);
	assert_non_null(*out);
	memcpy(*out, sqlite3_column_blob(st, 0), *len);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void set_blob(struct fx *f, const char *col, int seq, const unsigned char *v, size_t len)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char q[128];

	snprintf(q, sizeof(q), "UPDATE records SET %s=?1 WHERE seq=%d", col, seq);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, v, (int)len, SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void verify(struct fx *f, const unsigned char *pk, struct sbx_verify_report *rep)
{
	char err[512];
	size_t i, j;

	if (sbx_audit_verify(f->a, pk, rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
	/* These logs have no checkpoint, so the uncheckpointed-tail warning is
	 * always there; checkpoints are tested in test_checkpoint.c. */
	assert_true(rep->n_findings > 0);
	for (i = j = 0; i < rep->n_findings; i++)
		if (rep->findings[i].kind != SBX_FIND_UNCHECKPOINTED_TAIL)
			rep->findings[j++] = rep->findings[i];
	assert_int_equal(j, rep->n_findings - 1);
	rep->n_findings = j;
	for (i = 0; i < rep->n_findings; i++)
		print_message("# seq %lld: %s: %s\n", (long long)rep->findings[i].seq,
			      sbx_finding_kind_name(rep->findings[i].kind), rep->findings[i].what);
}

/* Expect exactly these (seq, kind) findings, in order. */
static void expect(struct fx *f, int n, ...)
{
	struct sbx_verify_report rep;
	va_list ap;
	int i;

	verify(f, f->pk, &rep);
	assert_int_equal(rep.n_findings, n);
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		int64_t seq = va_arg(ap, int);
		int kind = va_arg(ap, int);
		assert_int_equal(rep.findings[i].seq, seq);
		assert_string_equal(sbx_finding_kind_name(rep.findings[i].kind),
				    sbx_finding_kind_name(kind));
	}
	va_end(ap);
	sbx_verify_report_free(&rep);
}

/* ---- encoding ---- */

static void test_roundtrip(void **state)
{
	struct sbx_artifact arts[2];
	struct sbx_record r, d;
	unsigned char *b1, *b2;
	size_t l1, l2;
	int kind;

	(void)state;
	for (kind = SBX_REC_START; kind <= SBX_REC_END; kind++) {
		fill(&r, kind, 2, arts);
		r.seq = 42;
		r.exit_code = -1;
		r.signal = 9;
		r.realtime_ns = -1500000; /* before 1970: signed path */
		assert_int_equal(sbx_record_encode(&r, &b1, &l1, NULL, 0), 0);
		assert_memory_equal(b1, "SBXR\x02", 5);
		assert_int_equal(sbx_record_decode(b1, l1, &d, NULL, 0), 0);
		assert_int_equal(d.seq, 42);
		assert_int_equal(d.kind, kind);
		assert_string_equal(d.run_id, r.run_id);
		assert_string_equal(d.user, "alice");
		assert_int_equal(d.realtime_ns, -1500000);
		assert_int_equal(d.argv_len, r.argv_len);
		assert_memory_equal(d.argv, r.argv, r.argv_len);
		assert_memory_equal(&d.limits, &r.limits, sizeof(r.limits));
		assert_null(d.code);
		if (kind == SBX_REC_END) {
			assert_int_equal(d.exit_code, -1);
			assert_int_equal(d.signal, 9);
			assert_int_equal(d.n_artifacts, 2);
			assert_string_equal(d.artifacts[1].name, arts[1].name);
			assert_memory_equal(d.artifacts[0].sha256, arts[0].sha256, 32);
			assert_string_equal(d.stderr_excerpt, r.stderr_excerpt);
		} else {
			assert_int_equal(d.n_artifacts, 0);
			assert_string_equal(d.outcome, "");
		}
		/* One record, one encoding. */
		assert_int_equal(sbx_record_encode(&d, &b2, &l2, NULL, 0), 0);
		assert_int_equal(l1, l2);
		assert_memory_equal(b1, b2, l1);
		sbx_record_free(&d);
		free(b1);
		free(b2);
	}
}

static void test_decode_rejects(void **state)
{
	struct sbx_artifact arts[2];
	struct sbx_record r, d;
	unsigned char *b, *big;
	size_t l, i;
	char err[256];

	(void)state;
	fill(&r, SBX_REC_END, 1, arts);
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), 0);
	for (i = 0; i < l; i++)
		assert_int_equal(sbx_record_decode(b, i, &d, NULL, 0), -1);
	assert_int_equal(sbx_record_decode(NULL, 0, &d, NULL, 0), -1);

	big = malloc(l + 1);
	assert_non_null(big);
	memcpy(big, b, l);
	big[l] = 0;
	/* version 2: what follows the fixed fields is extension fields */
	assert_int_equal(sbx_record_decode(big, l + 1, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "extension field header truncated"));
	/* version 1: nothing may follow */
	big[4] = 1;
	assert_int_equal(sbx_record_decode(big, l + 1, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "trailing"));

	memcpy(big, b, l);
	big[4] = 3; /* version */
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	memcpy(big, b, l);
	big[0] = 'X'; /* magic */
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	memcpy(big, b, l);
	big[5] = 0xff; /* first length: runs past the end */
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "seq: length runs past the end (at byte 5)"));
	memcpy(big, b, l);
	big[8] = 7; /* seq is 7 bytes long: not an integer */
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "seq: integer is not 8 bytes"));
	/* a big-endian integer comes back whole: seq set to 0x01000000000000fe */
	memcpy(big, b, l);
	big[9] = 0x01;
	big[16] = 0xfe;
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), 0);
	assert_true(d.seq == 0x01000000000000feULL);
	sbx_record_free(&d);

	/* An embedded NUL in a string. */
	memcpy(big, b, l);
	{
		unsigned char *u = memmem(big, l, "alice", 5);
		assert_non_null(u);
		u[2] = '\0';
	}
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "user"));

	/* An artifact count the remaining bytes cannot hold. */
	memcpy(big, b, l);
	{
		/* the last "length 8, value 2" field is the count (kind is one too) */
		static const char cnt[] = "\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x02";
		unsigned char *u = NULL, *p = big;
		while ((p = memmem(p, l - (size_t)(p - big), cnt, 12)) != NULL)
			u = p++;
		assert_non_null(u);
		u[4] = 0x7f;
	}
	assert_int_equal(sbx_record_decode(big, l, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "artifact count"));
	free(big);
	free(b);
}

static void test_encode_rejects(void **state)
{
	struct sbx_record r;
	unsigned char *b;
	size_t l;

	(void)state;
	fill(&r, SBX_REC_START, 1, NULL);
	memset(r.user, 'x', sizeof(r.user)); /* not terminated */
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), -1);
	fill(&r, SBX_REC_START, 1, NULL);
	r.argv_len = sizeof(r.argv) + 1;
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), -1);
	fill(&r, SBX_REC_START, 1, NULL);
	r.kind = 99;
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), -1);
	fill(&r, SBX_REC_END, 1, NULL);
	r.n_artifacts = 1; /* with artifacts NULL */
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), -1);
}

static void test_columns(void **state)
{
	struct sbx_artifact arts[2];
	struct sbx_record r;
	struct sbx_cols c;
	char hex[65];
	int i;

	(void)state;
	fill(&r, SBX_REC_END, 1, arts);
	assert_int_equal(sbx_record_columns(&r, &c, NULL, 0), 0);
	assert_string_equal(c.v[SBX_COL_TIME].s, "2024-05-01T12:00:01.123Z");
	assert_string_equal(c.v[SBX_COL_KIND].s, "end");
	assert_int_equal(c.v[SBX_COL_LIMIT_FIRED].type, SBX_COL_NULL);
	assert_non_null(strstr(c.artifacts_json, "\"name\":\"bad\xef\xbf\xbd name.bin\""));
	/* every byte value in the digest: hex as sodium_bin2hex writes it */
	for (i = 0; i < 32; i++)
		r.code_sha256[i] = (unsigned char)(i * 8 + 7 * (i & 1));
	sodium_bin2hex(hex, sizeof(hex), r.code_sha256, 32);
	sbx_cols_free(&c);
	assert_int_equal(sbx_record_columns(&r, &c, NULL, 0), 0);
	assert_int_equal(c.v[SBX_COL_CODE_SHA256].n, 64);
	assert_string_equal(c.v[SBX_COL_CODE_SHA256].s, hex);
	sbx_cols_free(&c);
}

/* The columns of a record without artifacts: "[]", as jansson writes an
 * empty array (the writer's own columns come from the same function). */
static void test_columns_no_artifacts(void **state)
{
	struct sbx_record r;
	struct sbx_cols c;
	json_t *arr = json_array();
	char *want = json_dumps(arr, JSON_COMPACT);

	(void)state;
	fill(&r, SBX_REC_END, 1, NULL);
	assert_int_equal(sbx_record_columns(&r, &c, NULL, 0), 0);
	assert_int_equal(c.v[SBX_COL_ARTIFACTS].type, SBX_COL_TEXT);
	assert_int_equal(c.v[SBX_COL_ARTIFACTS].n, strlen(want));
	assert_memory_equal(c.v[SBX_COL_ARTIFACTS].s, want, strlen(want));
	sbx_cols_free(&c);
	free(want);
	json_decref(arr);
}

/* What sbx_iso_time did with gmtime_r and snprintf (log format 1: the
 * time column must not change). */
static int iso_ref(int64_t ns, char *buf, size_t len)
{
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	struct tm tm;
	time_t t;

	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
		return -1;
	if (snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     (int)(rem / 1000000)) >= (int)len)
		return -1;
	return 0;
}

static void iso_same(int64_t ns)
{
	char a[48], b[48];
	int ra = sbx_iso_time(ns, a, sizeof(a)), rb = iso_ref(ns, b, sizeof(b));

	if (ra != rb || (ra == 0 && strcmp(a, b) != 0))
		fail_msg("sbx_iso_time(%lld): %d '%s', gmtime %d '%s'", (long long)ns,
			 ra, ra == 0 ? a : "", rb, rb == 0 ? b : "");
}

static void test_iso_time(void **state)
{
	const int64_t s = 1000000000;
	/* edges: 1970, leap days, centuries, the ends of int64 nanoseconds
	 * (1677 and 2262: years outside 0..9999 cannot occur) */
	const int64_t edge[] = {
		0, -1, 1, s - 1, -s, -s - 1, 86400 * s - 1, 86400 * s, -86400 * s,
		951782400 * s, 951868800 * s, 951868800 * s - 1, 4107542400 * s,
		4107628800 * s, -2208988800 * s, -2208988800 * s - 1,
		1714564800123456789LL, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
	};
	char buf[24];
	size_t i;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		iso_same(edge[i]);
	for (i = 0; i < 200000; i++) {
		/* xorshift over all of int64, and over years 0..9999 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		iso_same((int64_t)x);
		iso_same((int64_t)(x % 4000000000ULL) * s); /* whole seconds, 1970..2096 */
	}
	assert_int_equal(sbx_iso_time(0, buf, sizeof(buf)), -1); /* no room for the NUL */
}

/* ---- the log ---- */

static void test_verify_clean(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;
	char v[80];

	verify(f, f->pk, &rep);
	assert_int_equal(rep.n_records, 6);
	assert_int_equal(rep.n_findings, 0);
	sbx_verify_report_free(&rep);
	assert_int_equal(sbx_audit_meta_get(f->a, "format", v, sizeof(v), NULL, 0), 0);
	assert_string_equal(v, "2");
	assert_int_equal(sbx_audit_meta_get(f->a, "pubkey", v, sizeof(v), NULL, 0), 0);
	assert_int_equal(strlen(v), 64);
}

static void test_file_mode(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(stat(f->db, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_tamper_column(void **state)
{
	sql(*state, "UPDATE records SET outcome='ok' WHERE seq=4");
	expect(*state, 1, 4, SBX_FIND_COLUMNS_MISMATCH);
}

static void test_tamper_column_type(void **state)
{
	/* Another type: text where the blob says integer. */
	sql(*state, "UPDATE records SET wall_ms='a lot' WHERE seq=2");
	expect(*state, 1, 2, SBX_FIND_COLUMNS_MISMATCH);
}

static void test_tamper_blob_byte(void **state)
{
	struct fx *f = *state;
	unsigned char *b, *u;
	size_t l;

	get_blob(f, "blob", 3, &b, &l);
	u = memmem(b, l, "alice", 5);
	assert_non_null(u);
	u[0] = 'm';
	set_blob(f, "blob", 3, b, l);
	free(b);
	expect(f, 1, 3, SBX_FIND_RECORD_MODIFIED);
}

static void test_delete_row(void **state)
{
	/* the START of run 2: a gap, and its END has no START */
	sql(*state, "DELETE FROM records WHERE seq=3");
	expect(*state, 2, 3, SBX_FIND_SEQ_GAP, 4, SBX_FIND_END_WITHOUT_START);
}

/* A live session (recorder/live.c): its START, two calls (cell 1, 2) each
 * a START and END with the session's run id, its END; seq 7-12. */
static void append_session(struct fx *f)
{
	struct sbx_record r;
	char err[512];
	static const struct {
		int kind;
		uint64_t cell;
	} recs[] = {{SBX_REC_START, 0}, {SBX_REC_START, 1}, {SBX_REC_END, 1},
		    {SBX_REC_START, 2}, {SBX_REC_END, 2}, {SBX_REC_END, 0}};

	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		fill(&r, recs[i].kind, 9, NULL);
		if (recs[i].cell)
			assert_int_equal(sbx_rec_put_u64(&r, SBX_F_CELL, recs[i].cell, err, sizeof(err)), 0);
		if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
		sbx_rext_free(&r.ext);
	}
}

static void test_live_session_pairs_by_cell(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	append_session(f);
	verify(f, f->pk, &rep);
	assert_int_equal(rep.n_records, 12);
	assert_int_equal(rep.n_findings, 0);
	sbx_verify_report_free(&rep);
	/* cell 2's START gone: its END (seq 11) has none, though the
	 * session's START and cell 1's are there */
	sql(f, "DELETE FROM records WHERE seq=10");
	expect(f, 2, 10, SBX_FIND_SEQ_GAP, 11, SBX_FIND_END_WITHOUT_START);
}

static void test_delete_first_rows(void **state)
{
	sql(*state, "DELETE FROM records WHERE seq<=2");
	expect(*state, 1, 1, SBX_FIND_SEQ_GAP);
}

static void test_swap_blobs(void **state)
{
	struct fx *f = *state;
	unsigned char *b2, *b3;
	size_t l2, l3;

	get_blob(f, "blob", 2, &b2, &l2);
	get_blob(f, "blob", 3, &b3, &l3);
	set_blob(f, "blob", 2, b3, l3);
	set_blob(f, "blob", 3, b2, l2);
	free(b2);
	free(b3);
	expect(f, 2, 2, SBX_FIND_RECORD_MODIFIED, 3, SBX_FIND_RECORD_MODIFIED);
}

static void test_tamper_sig(void **state)
{
	struct fx *f = *state;
	unsigned char *b;
	size_t l;

	get_blob(f, "sig", 5, &b, &l);
	b[10] ^= 1;
	set_blob(f, "sig", 5, b, l);
	free(b);
	expect(f, 1, 5, SBX_FIND_BAD_SIGNATURE);
}

static void test_tamper_chain(void **state)
{
	struct fx *f = *state;
	unsigned char *b;
	size_t l;

	get_blob(f, "chain", 2, &b, &l);
	b[0] ^= 1;
	set_blob(f, "chain", 2, b, l);
	free(b);
	expect(f, 1, 2, SBX_FIND_CHAIN_BROKEN);
}

static void test_tamper_leaf(void **state)
{
	struct fx *f = *state;
	unsigned char *b;
	size_t l;

	get_blob(f, "leaf", 2, &b, &l);
	b[0] ^= 1;
	set_blob(f, "leaf", 2, b, l);
	free(b);
	expect(f, 1, 2, SBX_FIND_RECORD_MODIFIED);
}

static void test_tamper_origin(void **state)
{
	/* version 2: the blob holds the origin too */
	sql(*state, "UPDATE records SET origin='elsewhere' WHERE seq=1");
	expect(*state, 2, 1, SBX_FIND_COLUMNS_MISMATCH, 1, SBX_FIND_BAD_SIGNATURE);
}

/* The attacker rewrites a record consistently (blob, columns, leaf,
 * chain) but has no signing key: its signature fails and the next record
 * no longer extends the chain. */
static void test_forged_record(void **state)
{
	struct fx *f = *state;
	unsigned char *b, *prev, leaf[32], chain[32];
	size_t l, pl;
	struct sbx_record r;

	get_blob(f, "blob", 3, &b, &l);
	assert_int_equal(sbx_record_decode(b, l, &r, NULL, 0), 0);
	free(b);
	strcpy(r.user, "mallory");
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), 0);
	sbx_record_free(&r);
	get_blob(f, "chain", 2, &prev, &pl);
	sbx_audit_leaf(b, l, leaf);
	sbx_audit_chain(prev, leaf, chain);
	set_blob(f, "blob", 3, b, l);
	set_blob(f, "leaf", 3, leaf, 32);
	set_blob(f, "chain", 3, chain, 32);
	sql(f, "UPDATE records SET user='mallory' WHERE seq=3");
	free(b);
	free(prev);
	expect(f, 2, 3, SBX_FIND_BAD_SIGNATURE, 4, SBX_FIND_CHAIN_BROKEN);
}

static void test_undecodable(void **state)
{
	struct fx *f = *state;
	unsigned char leaf[32];

	sbx_audit_leaf((const unsigned char *)"junk", 4, leaf);
	set_blob(f, "blob", 6, (const unsigned char *)"junk", 4);
	set_blob(f, "leaf", 6, leaf, 32);
	expect(f, 2, 6, SBX_FIND_UNDECODABLE, 6, SBX_FIND_CHAIN_BROKEN);
}

static void test_code_modified(void **state)
{
	sql(*state, "UPDATE code SET text=CAST('import os' AS BLOB)");
	expect(*state, 1, 1, SBX_FIND_CODE_MODIFIED);
}

/* A fourth run (seq 7 and 8) whose START carries its policy's text. */
static const char policy_text[] = "[policy]\ndescription = a test policy\n";

static void append_policy_run(struct fx *f, const char *text)
{
	struct sbx_record r;
	char err[512];

	fill(&r, SBX_REC_START, 4, NULL);
	r.policy_text = policy_text;
	r.policy_len = strlen(policy_text);
	crypto_hash_sha256(r.policy_sha256, (const unsigned char *)policy_text, strlen(policy_text));
	if (text != NULL)
		r.policy_text = text; /* not the digest's text: refused */
	if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0) {
		assert_non_null(text);
		assert_non_null(strstr(err, "policy_sha256 does not match"));
		sbx_rext_free(&r.ext);
		return;
	}
	sbx_rext_free(&r.ext);
	fill(&r, SBX_REC_END, 4, NULL);
	if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0)
		fail_msg("append: %s", err);
	sbx_rext_free(&r.ext);
}

static int64_t policy_rows(struct fx *f)
{
	sqlite3_stmt *st;
	int64_t n;

	assert_int_equal(sqlite3_prepare_v2(sbx_audit_db(f->a), "SELECT count(*) FROM policy", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_policy_stored(void **state)
{
	struct fx *f = *state;

	append_policy_run(f, "[policy]\nusers = mallory\n");
	assert_int_equal(policy_rows(f), 0);
	append_policy_run(f, NULL);
	append_policy_run(f, NULL); /* the same text again: one row */
	assert_int_equal(policy_rows(f), 1);
	expect(f, 0);
}

static void test_policy_modified(void **state)
{
	append_policy_run(*state, NULL);
	sql(*state, "UPDATE policy SET text=CAST('[policy]\nusers = mallory\n' AS BLOB)");
	expect(*state, 1, 7, SBX_FIND_POLICY_MODIFIED);
}

static void test_policy_missing(void **state)
{
	append_policy_run(*state, NULL);
	sql(*state, "DELETE FROM policy");
	expect(*state, 1, 7, SBX_FIND_POLICY_MISSING);
}

/* The code table dropped (its index too): code-missing at the first
 * START of the code, not a log verify cannot read. */
static void test_code_table_dropped(void **state)
{
	sql(*state, "DROP TABLE IF EXISTS code_fts; DROP TABLE code");
	expect(*state, 1, 1, SBX_FIND_CODE_MISSING);
}

/* The whole table dropped: still a finding at the START, not "cannot read". */
static void test_policy_table_dropped(void **state)
{
	append_policy_run(*state, NULL);
	sql(*state, "DROP TABLE policy");
	expect(*state, 1, 7, SBX_FIND_POLICY_MISSING);
}

/* Another text under its own digest: the START still names the old one. */
static void test_policy_substituted(void **state)
{
	append_policy_run(*state, NULL);
	sql(*state, "DELETE FROM policy");
	sql(*state, "INSERT INTO policy(sha256, text) VALUES('2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881', CAST('x' AS BLOB))");
	expect(*state, 1, 7, SBX_FIND_POLICY_MISSING);
}

/* A refusal before a policy loaded: one REFUSED record, verified clean. */
static void test_refused_record(void **state)
{
	struct fx *f = *state;
	struct sbx_record r;
	char err[512];

	fill(&r, SBX_REC_REFUSED, 4, NULL);
	r.policy[0] = r.language[0] = '\0';
	memset(r.policy_sha256, 0, 32);
	r.argv_len = 0;
	r.code = NULL;
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_REQ_POLICY, "nothere", err, sizeof(err)), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_REFUSAL, "policy_denied", err, sizeof(err)), 0);
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_UNRECORDED, 3, err, sizeof(err)), 0);
	if (sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0)
		fail_msg("append: %s", err);
	sbx_rext_free(&r.ext);
	assert_int_equal(r.seq, 7);
	expect(f, 0);
}

static void test_wrong_key(void **state)
{
	struct fx *f = *state;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_verify_report rep;
	size_t i;

	crypto_sign_keypair(pk, sk);
	verify(f, pk, &rep);
	assert_int_equal(rep.n_findings, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(rep.findings[i].seq, (int64_t)i + 1);
		assert_int_equal(rep.findings[i].kind, SBX_FIND_BAD_SIGNATURE);
	}
	sbx_verify_report_free(&rep);
}

static int64_t count_rows(struct fx *f)
{
	sqlite3_stmt *st;
	int64_t n;

	assert_int_equal(sqlite3_prepare_v2(sbx_audit_db(f->a), "SELECT count(*) FROM records",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_append_refusals(void **state)
{
	struct fx *f = *state;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_record r;
	char err[512];

	crypto_sign_keypair(pk, sk);
	fill(&r, SBX_REC_START, 4, NULL);
	assert_int_equal(sbx_audit_append(f->a, &r, sk, "host1.example", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not the key of this log"));
	fill(&r, SBX_REC_START, 4, NULL);
	r.code = "something else";
	assert_int_equal(sbx_audit_append(f->a, &r, f->sk, "host1.example", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "code_sha256"));
	fill(&r, SBX_REC_START, 4, NULL);
	assert_int_equal(sbx_audit_append(f->a, &r, f->sk, "", NULL, err, sizeof(err)), -1);
	assert_int_equal(count_rows(f), 6);
	expect(f, 0);
}

static void test_two_writers(void **state)
{
	struct fx *f = *state;
	struct sbx_audit *b;
	struct sbx_record r;
	unsigned char chain[32];
	char err[512];
	int i;

	if (sbx_audit_open(f->db, 0, &b, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	for (i = 0; i < 6; i++) {
		fill(&r, i % 2 ? SBX_REC_END : SBX_REC_START, 10 + i / 2, f->arts);
		assert_int_equal(sbx_audit_append(i % 3 ? f->a : b, &r, f->sk, "host1.example",
						  chain, err, sizeof(err)), 0);
		assert_int_equal(r.seq, (uint64_t)7 + (uint64_t)i);
	}
	sbx_audit_close(b);
	assert_int_equal(count_rows(f), 12);
	expect(f, 0);
}

/*
 * 16 writers open a log that does not exist yet, at once, and each
 * appends a run: none may be refused ("database is locked" while the
 * journal mode is set up) and the log must verify. The failing input of
 * the bug where the set-up lock's close(2) dropped SQLite's own POSIX
 * locks and corrupted the log.
 */
static void test_first_open_race(void **state)
{
	struct fx *f = *state;
	char db[160];
	int i, st, bad = 0, round;

	for (round = 0; round < 3; round++) {
		struct sbx_audit *a;
		struct sbx_verify_report rep;
		char err[512];

		snprintf(db, sizeof(db), "%s/race%d.db", f->dir, round);
		for (i = 0; i < 16; i++) {
			pid_t p = fork();
			assert_true(p >= 0);
			if (p == 0) {
				struct sbx_audit *w;
				struct sbx_record r;
				if (sbx_audit_open(db, 0, &w, err, sizeof(err)) < 0) {
					fprintf(stderr, "# writer %d: open: %s\n", i, err);
					_exit(1);
				}
				fill(&r, SBX_REC_START, 100 + i, NULL);
				if (sbx_audit_append(w, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0) {
					fprintf(stderr, "# writer %d: %s\n", i, err);
					_exit(1);
				}
				fill(&r, SBX_REC_END, 100 + i, NULL);
				if (sbx_audit_append(w, &r, f->sk, "host1.example", NULL, err, sizeof(err)) < 0) {
					fprintf(stderr, "# writer %d: %s\n", i, err);
					_exit(1);
				}
				sbx_audit_close(w);
				_exit(0);
			}
		}
		while (wait(&st) > 0)
			bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		assert_int_equal(bad, 0);
		assert_int_equal(sbx_audit_open(db, 1, &a, err, sizeof(err)), 0);
		assert_int_equal(sbx_audit_verify(a, f->pk, &rep, err, sizeof(err)), 0);
		assert_int_equal(rep.n_records, 32);
		/* warnings only: no checkpoint, and the runs' times interleave */
		for (i = 0; i < (int)rep.n_findings; i++)
			assert_true(sbx_finding_is_warning(rep.findings[i].kind));
		sbx_verify_report_free(&rep);
		sbx_audit_close(a);
		for (i = 0; i < 3; i++) {
			char p[200];
			snprintf(p, sizeof(p), "%s%s", db, i == 0 ? "" : i == 1 ? "-wal" : "-shm");
			unlink(p);
		}
	}
}

static void test_readonly(void **state)
{
	struct fx *f = *state;
	struct sbx_audit *ro;
	struct sbx_record r;
	char err[512], p[160];

	assert_int_equal(sbx_audit_open(f->db, 1, &ro, err, sizeof(err)), 0);
	fill(&r, SBX_REC_START, 9, NULL);
	assert_int_equal(sbx_audit_append(ro, &r, f->sk, "h", NULL, err, sizeof(err)), -1);
	sbx_audit_close(ro);
	snprintf(p, sizeof(p), "%s/missing.db", f->dir);
	assert_int_equal(sbx_audit_open(p, 1, &ro, err, sizeof(err)), -1);
	snprintf(p, sizeof(p), "%s/link", f->dir);
	assert_int_equal(symlink(f->db, p), 0);
	assert_int_equal(sbx_audit_open(p, 1, &ro, err, sizeof(err)), -1);
	assert_int_equal(sbx_audit_open(p, 0, &ro, err, sizeof(err)), -1);
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_keys(void **state)
{
	struct fx *f = *state;
	unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	char path[160], link[160], hex[2 * crypto_sign_SECRETKEYBYTES + 2], err[512];

	snprintf(path, sizeof(path), "%s/key", f->dir);
	snprintf(link, sizeof(link), "%s/link", f->dir);
	write_file(path, f->sk, sizeof(f->sk), 0400);
	assert_int_equal(sbx_key_load_secret(path, sk, err, sizeof(err)), 0);
	assert_memory_equal(sk, f->sk, sizeof(sk));

	write_file(path, f->sk, sizeof(f->sk), 0440);
	assert_int_equal(sbx_key_load_secret(path, sk, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "group or others"));

	sodium_bin2hex(hex, sizeof(hex), f->sk, sizeof(f->sk));
	strcat(hex, "\n");
	write_file(path, hex, strlen(hex), 0400);
	assert_int_equal(sbx_key_load_secret(path, sk, err, sizeof(err)), 0);
	assert_memory_equal(sk, f->sk, sizeof(sk));

	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(sbx_key_load_secret(link, sk, err, sizeof(err)), -1);

	memcpy(sk, f->sk, sizeof(sk));
	sk[63] ^= 1; /* public half damaged */
	write_file(path, sk, sizeof(sk), 0400);
	assert_int_equal(sbx_key_load_secret(path, sk, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "damaged"));

	sodium_bin2hex(hex, sizeof(hex), f->pk, sizeof(f->pk));
	strcat(hex, "\n");
	write_file(path, hex, strlen(hex), 0644);
	assert_int_equal(sbx_key_load_public(path, pk, err, sizeof(err)), 0);
	assert_memory_equal(pk, f->pk, sizeof(pk));
	write_file(path, "abc\n", 4, 0644);
	assert_int_equal(sbx_key_load_public(path, pk, err, sizeof(err)), -1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_encode_rejects),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_columns_no_artifacts),
		cmocka_unit_test(test_iso_time),
		T(test_verify_clean),
		T(test_file_mode),
		T(test_tamper_column),
		T(test_tamper_column_type),
		T(test_tamper_blob_byte),
		T(test_delete_row),
		T(test_live_session_pairs_by_cell),
		T(test_delete_first_rows),
		T(test_swap_blobs),
		T(test_tamper_sig),
		T(test_tamper_chain),
		T(test_tamper_leaf),
		T(test_tamper_origin),
		T(test_forged_record),
		T(test_undecodable),
		T(test_code_modified),
		T(test_policy_stored),
		T(test_policy_modified),
		T(test_policy_missing),
		T(test_policy_substituted),
		T(test_policy_table_dropped),
		T(test_code_table_dropped),
		T(test_refused_record),
		T(test_wrong_key),
		T(test_append_refusals),
		T(test_two_writers),
		T(test_first_open_race),
		T(test_readonly),
		T(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
