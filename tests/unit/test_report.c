/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit report --applies over a log written here with the real
 * writer: the cases a test of sbx apply cannot stage in real time (a
 * begin before --since whose end is inside the window, a begin whose end
 * comes after --until, a malformed report, a run that does not exist, an
 * end whose begin named another digest), and sbx_field itself (absent
 * fields, undecodable blobs, keys outside the record-field table).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auditdb.h"
#include "record.h"
#include "report.h"
#include "sqlfield.h"

#define S(n) ((int64_t)(n) * 1000000000LL)
#define T0 1714564800LL /* 2024-05-01T12:00:00Z */

struct fx {
	char dir[64], db[128];
	struct sbx_audit *a;
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	unsigned char d1[32], d2[32];
};

static void common(struct sbx_record *r, int kind, const char *id, int64_t sec, const char *user)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->run_id, sizeof(r->run_id), "%s", id);
	strcpy(r->boot_id, "6a3a0c1e-0000-4000-8000-000000000001");
	r->realtime_ns = S(T0 + sec);
	strcpy(r->host, "h");
	r->uid = strcmp(user, "alice") == 0 ? 1000 : 1001;
	r->gid = r->uid;
	snprintf(r->user, sizeof(r->user), "%s", user);
}

static void append(struct fx *f, struct sbx_record *r)
{
	char err[512];

	if (sbx_audit_append(f->a, r, f->sk, "test/report", NULL, err, sizeof(err)) < 0)
		fail_msg("append: %s", err);
	sbx_rext_free(&r->ext);
}

/* A --workspace run: START, and END signing digest d. */
static void run(struct fx *f, const char *id, int64_t sec, const unsigned char *d)
{
	static const char code[] = "print(1)\n";
	struct sbx_record r;

	common(&r, SBX_REC_START, id, sec, "alice");
	strcpy(r.policy, "default");
	strcpy(r.language, "python");
	crypto_hash_sha256(r.code_sha256, (const unsigned char *)code, strlen(code));
	r.code = code;
	r.code_len = strlen(code);
	append(f, &r);
	common(&r, SBX_REC_END, id, sec + 1, "alice");
	strcpy(r.policy, "default");
	strcpy(r.language, "python");
	crypto_hash_sha256(r.code_sha256, (const unsigned char *)code, strlen(code));
	strcpy(r.outcome, "ok");
	assert_int_equal(sbx_rec_put_digest(&r, SBX_F_WS_CHANGESET, d, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_WS_ENTRIES, 3, NULL, 0), 0);
	append(f, &r);
}

/* One APPLY record as the recorder writes it (recorder/workspace.c). */
static void apply(struct fx *f, const char *id, int64_t sec, const char *user, const char *phase,
		  const char *target, const unsigned char *d, const char *subset, const char *result,
		  const char *check, uint64_t files, const char *begin)
{
	struct sbx_record r;

	common(&r, SBX_REC_APPLY, id, sec, user);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_RUN, target, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_digest(&r, SBX_F_APPLY_CHANGESET, d, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_CHECK, check, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_PHASE, phase, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_SUBSET, subset, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_RESULT, result, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_APPLY_FILES, files, NULL, 0), 0);
	if (begin != NULL)
		assert_int_equal(sbx_rec_put_str(&r, SBX_F_APPLY_BEGIN, begin, NULL, 0), 0);
	append(f, &r);
}

#define RUN1 "11111111111111111111111111111111"
#define RUN2 "22222222222222222222222222222222"
#define NORUN "99999999999999999999999999999999"
#define B1 "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"
#define E1 "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1"
#define B2 "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
#define E2 "e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2"
#define B3 "b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3"
#define C4 "c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4"
#define X5 "d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5"
#define N6 "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"

/*
 * Time line (seconds after T0):
 *   0  run 1 (END signs d1)          10  run 2 (END signs d1 too)
 * 100  begin B1 of run 1, only, 2    200  end E1 of B1: applied, 2
 * 300  begin B2 of run 2 (bob)       900  end E2 of B2: partial, 1
 * 400  begin B3 of run 1, no end (begun)
 * 500  conflict C4 of run 1, digest d2 (not the END's)
 * 600  malformed report X5: refused, no run
 * 700  begin N6 of a run that does not exist: refused
 */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], zero[32] = {0};
	char err[512];

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-report-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(pk, f->sk);
	memset(f->d1, 0xd1, 32);
	memset(f->d2, 0xd2, 32);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	run(f, RUN1, 0, f->d1);
	run(f, RUN2, 10, f->d1);
	apply(f, B1, 100, "alice", "begin", RUN1, f->d1, "only", "begun", "verified", 2, NULL);
	apply(f, E1, 200, "alice", "end", RUN1, f->d1, "only", "applied", "verified", 2, B1);
	apply(f, B2, 300, "bob", "begin", RUN2, f->d1, "all", "begun", "verified", 3, NULL);
	apply(f, B3, 400, "alice", "begin", RUN1, f->d1, "all", "begun", "verified", 1, NULL);
	apply(f, C4, 500, "alice", "end", RUN1, f->d2, "all", "conflict", "changeset differs from the run's", 1,
	      NULL);
	apply(f, X5, 600, "alice", "", "", zero, "", "refused", "a line without a value", 0, NULL);
	apply(f, N6, 700, "alice", "begin", NORUN, f->d1, "all", "refused", "no such run", 1, NULL);
	apply(f, E2, 900, "bob", "end", RUN2, f->d1, "all", "partial", "verified", 1, B2);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	static const char *const files[] = {"audit.db", "audit.db-wal", "audit.db-shm"};
	char path[160];
	size_t i;

	sbx_audit_close(f->a);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		unlink(path);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static const struct rcell *cell(const struct rtable *t, size_t row, const char *col)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c], col) == 0)
			return RT_CELL(t, row, c);
	fail_msg("no column %s in %s", col, t->name);
	return NULL;
}

static const char *text(const struct rtable *t, size_t row, const char *col)
{
	const struct rcell *c = cell(t, row, col);

	return c->type == RC_TEXT ? c->s : c->type == RC_NULL ? "(null)" : "(int)";
}

/* The row whose apply id is id, or fails. */
static size_t row_of(const struct rtable *t, const char *id)
{
	size_t r;

	for (r = 0; r < t->nrows; r++)
		if (strcmp(text(t, r, "apply"), id) == 0)
			return r;
	fail_msg("no apply %s", id);
	return 0;
}

static void build(struct fx *f, int64_t since, int64_t until, struct report *r)
{
	struct ropts o = {.since_ns = since, .until_ns = until, .sections = RS_APPLIES, .failed_max = -1};

	assert_int_equal(report_build(sbx_audit_db(f->a), f->db, &o, r), 0);
	assert_non_null(report_find(r, "applies"));
	assert_non_null(report_find(r, "applies_by_result"));
}

static void test_whole_log(void **state)
{
	struct fx *f = *state;
	struct report r;
	const struct rtable *t;
	size_t i;

	build(f, 0, INT64_MAX, &r);
	t = report_find(&r, "applies");
	/* a begin and its end are one apply: 6 applies from 8 APPLY records */
	assert_int_equal(t->nrows, 6);
	i = row_of(t, B1);
	assert_string_equal(text(t, i, "result"), "applied");
	assert_string_equal(text(t, i, "subset"), "only");
	assert_int_equal(cell(t, i, "files")->i, 2);
	assert_int_equal(cell(t, i, "entries")->i, 3);
	assert_string_equal(text(t, i, "matches_run"), "yes");
	assert_string_equal(text(t, i, "run_user"), "alice");
	assert_false(rtable_flagged(t, i));
	i = row_of(t, B2);
	assert_string_equal(text(t, i, "user"), "bob");
	assert_int_equal(cell(t, i, "uid")->i, 1001);
	assert_string_equal(text(t, i, "result"), "partial");
	assert_string_equal(text(t, i, "time"), "2024-05-01T12:15:00Z"); /* the end's */
	i = row_of(t, B3);
	assert_string_equal(text(t, i, "result"), "begun");
	i = row_of(t, C4);
	assert_string_equal(text(t, i, "matches_run"), "NO: not the run's changeset");
	assert_true(rtable_flagged(t, i));
	i = row_of(t, X5);
	assert_string_equal(text(t, i, "result"), "refused");
	assert_string_equal(text(t, i, "matches_run"), "NO: no such run");
	i = row_of(t, N6);
	assert_string_equal(text(t, i, "matches_run"), "NO: no such run");
	assert_string_equal(text(t, i, "check"), "no such run");
	/* oldest first */
	for (i = 1; i < t->nrows; i++)
		assert_true(strcmp(text(t, i - 1, "time"), text(t, i, "time")) <= 0);
	t = report_find(&r, "applies_by_result");
	assert_int_equal(t->nrows, 5);
	for (i = 0; i < t->nrows; i++)
		if (strcmp(text(t, i, "result"), "refused") == 0) {
			assert_int_equal(cell(t, i, "applies")->i, 2);
			assert_int_equal(cell(t, i, "not_the_runs_changeset")->i, 2);
		}
	report_free(&r);
}

/* An end inside the window brings its begin from before it; a begin
 * whose end is after the window is left to that end's window. */
static void test_window(void **state)
{
	struct fx *f = *state;
	struct report r;
	const struct rtable *t;
	size_t i;

	build(f, S(T0 + 150), S(T0 + 450), &r);
	t = report_find(&r, "applies");
	assert_int_equal(t->nrows, 2);
	i = row_of(t, B1);
	assert_string_equal(text(t, i, "check"), "verified");
	assert_string_equal(text(t, i, "result"), "applied");
	row_of(t, B3);
	report_free(&r);
	build(f, S(T0 + 800), INT64_MAX, &r);
	t = report_find(&r, "applies");
	assert_int_equal(t->nrows, 1);
	assert_string_equal(text(t, row_of(t, B2), "result"), "partial");
	report_free(&r);
}

/* An end whose begin named another digest is not exactly the run's. */
static void test_begin_digest(void **state)
{
	struct fx *f = *state;
	struct report r;
	const struct rtable *t;

	apply(f, "a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7", 1000, "alice", "begin", RUN1, f->d2, "all", "begun",
	      "verified", 1, NULL);
	apply(f, "e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7", 1001, "alice", "end", RUN1, f->d1, "all", "applied",
	      "verified", 1, "a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7");
	build(f, S(T0 + 1000), INT64_MAX, &r);
	t = report_find(&r, "applies");
	assert_int_equal(t->nrows, 1);
	assert_string_equal(text(t, 0, "matches_run"), "NO: not the run's changeset");
	report_free(&r);
}

static void test_sql_function(void **state)
{
	struct fx *f = *state;
	sqlite3 *db = sbx_audit_db(f->a);
	sqlite3_stmt *st;

	assert_int_equal(sqlfield_register(db), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sbx_field(blob, 'apply_result'),"
					    " sbx_field(blob, 'applied_changeset_sha256'), sbx_field(blob, 'apply_files'),"
					    " sbx_field(blob, 'apply_begin'), sbx_field(x'00', 'apply_result')"
					    " FROM records WHERE run_id = '" E1 "'", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "applied");
	assert_string_equal((const char *)sqlite3_column_text(st, 1),
			    "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1");
	assert_int_equal(sqlite3_column_type(st, 2), SQLITE_INTEGER);
	assert_int_equal(sqlite3_column_int64(st, 2), 2);
	assert_string_equal((const char *)sqlite3_column_text(st, 3), B1);
	assert_int_equal(sqlite3_column_type(st, 4), SQLITE_NULL); /* not a record */
	sqlite3_finalize(st);
	/* absent in this record: NULL */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sbx_field(blob, 'apply_begin') FROM records"
					    " WHERE run_id = '" B1 "'", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_type(st, 0), SQLITE_NULL);
	sqlite3_finalize(st);
	/* a key the table does not have, or one that is not a scalar: an error */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sbx_field(blob, 'no_such_field') FROM records LIMIT 1",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ERROR);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sbx_field(blob, 'inputs') FROM records LIMIT 1",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ERROR);
	sqlite3_finalize(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_whole_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_digest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sql_function, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
