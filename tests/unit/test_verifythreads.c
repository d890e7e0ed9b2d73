/* SPDX-License-Identifier: ISC */
/*
 * The verifier's readers (audit/verifyrows.c): however the records are
 * cut into chunks and shared among threads, verify must report exactly
 * what one reader over one chunk reports. Each case tampers with a log of
 * 40 records (checkpoints at 16 and 32, a clock step back at seq 9) at
 * the boundaries of small chunks, where a reader's work meets the walk's:
 * the first record of a chunk has no precomputed chain link, and a
 * changed chain or leaf makes the walk leave the precomputed one.
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
#include "checkpoint.h"
#include "record.h"

#define ORIGIN "host1.example/sbx"
#define NREC 40

struct fx {
	char dir[64];
	char db[128];
	struct sbx_audit *a;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	char state[SBX_NOTE_MAX];    /* checkpoint note at 16, as --state */
};

static void fill(struct sbx_record *r, int seq)
{
	static const char code[] = "print(1)\n";

	memset(r, 0, sizeof(*r));
	r->kind = seq % 2 ? SBX_REC_START : SBX_REC_END;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", (seq + 1) / 2);
	strcpy(r->boot_id, "6a3a0c1e-0000-4000-8000-000000000001");
	/* seq 9 is 100 s before seq 8: a time-backwards warning on a boundary */
	r->realtime_ns = 1714564800000000000LL + (seq == 9 ? -100 : seq) * 1000000000LL;
	strcpy(r->host, "host1");
	r->uid = 1000 + (uint32_t)seq;
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	strcpy(r->language, "python");
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code, strlen(code));
	r->code = code;
	r->code_len = strlen(code);
	if (r->kind == SBX_REC_END)
		strcpy(r->outcome, "ok");
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sbx_record r;
	char err[512], note[SBX_NOTE_MAX];
	int seq;

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-vthreads-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(f->pk, f->sk);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	for (seq = 1; seq <= NREC; seq++) {
		fill(&r, seq);
		if (sbx_audit_append(f->a, &r, f->sk, ORIGIN, NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
		if (seq == 16 || seq == 32) {
			if (sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 0, 0, note, err, sizeof(err)) != 1)
				fail_msg("checkpoint: %s", err);
			if (seq == 16)
				memcpy(f->state, note, sizeof(note));
		}
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	sbx_audit_close(f->a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The attacker: plain SQL on its own connection. */
static void sql(struct fx *f, const char *q)
{
	sqlite3 *h;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	if (sqlite3_exec(h, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
	sqlite3_close(h);
}

static void run(struct fx *f, int full, int use_state, int threads, unsigned chunk,
		struct sbx_verify_report *rep)
{
	/* a fixed "now": findings that name an age are the same on every run */
	struct sbx_verify_opts o = {.full = full, .threads = threads, .chunk_rows = chunk,
				    .now_ns = 1800000000LL * 1000000000};
	char err[512];

	if (use_state) {
		o.state_note = f->state;
		o.state_len = strlen(f->state);
	}
	if (sbx_audit_verify_opts(f->a, f->pk, &o, rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
}

static void same(const struct sbx_verify_report *want, const struct sbx_verify_report *got,
		 int threads, unsigned chunk)
{
	size_t i;

	if (got->n_findings != want->n_findings)
		fail_msg("%d threads, chunks of %u: %zu findings, one reader %zu",
			 threads, chunk, got->n_findings, want->n_findings);
	assert_int_equal(got->n_records, want->n_records);
	assert_int_equal(got->n_checkpoints, want->n_checkpoints);
	assert_int_equal(got->latest_size, want->latest_size);
	for (i = 0; i < want->n_findings; i++) {
		const struct sbx_finding *a = &want->findings[i], *b = &got->findings[i];
		if (a->seq != b->seq || a->kind != b->kind || strcmp(a->what, b->what) != 0 ||
		    strcmp(a->expected, b->expected) != 0 || strcmp(a->actual, b->actual) != 0)
			fail_msg("%d threads, chunks of %u, finding %zu: seq %lld %s: %s (%s, %s); "
				 "one reader: seq %lld %s: %s (%s, %s)", threads, chunk, i,
				 (long long)b->seq, sbx_finding_kind_name(b->kind), b->what,
				 b->expected, b->actual, (long long)a->seq,
				 sbx_finding_kind_name(a->kind), a->what, a->expected, a->actual);
	}
}

static int has(const struct sbx_verify_report *rep, int64_t seq, enum sbx_finding_kind kind)
{
	size_t i;

	for (i = 0; i < rep->n_findings; i++)
		if (rep->findings[i].seq == seq && rep->findings[i].kind == kind)
			return 1;
	return 0;
}

/* Every split against one reader over one chunk, by default and --full,
 * with and without --state. Returns the one-reader default report. */
static void check_splits(struct fx *f, struct sbx_verify_report *out)
{
	static const struct { int threads; unsigned chunk; } split[] = {
		{1, 1}, {1, 7}, {2, 1}, {2, 2}, {2, 3}, {2, 7}, {2, 8}, {2, 9},
		{2, 16}, {3, 5}, {4, 4}, {0, 0},
	};
	int full, st;
	size_t i;

	for (full = 0; full <= 1; full++) {
		for (st = 0; st <= 1; st++) {
			struct sbx_verify_report want;
			run(f, full, st, 1, 1000, &want);
			for (i = 0; i < sizeof(split) / sizeof(split[0]); i++) {
				struct sbx_verify_report got;
				run(f, full, st, split[i].threads, split[i].chunk, &got);
				same(&want, &got, split[i].threads, split[i].chunk);
				sbx_verify_report_free(&got);
			}
			if (!full && !st) {
				for (i = 0; i < want.n_findings; i++)
					print_message("# seq %lld: %s: %s\n", (long long)want.findings[i].seq,
						      sbx_finding_kind_name(want.findings[i].kind),
						      want.findings[i].what);
				*out = want;
			} else {
				sbx_verify_report_free(&want);
			}
		}
	}
}

static void test_clean(void **state)
{
	struct sbx_verify_report rep;

	check_splits(*state, &rep);
	assert_int_equal(rep.n_records, NREC);
	assert_int_equal(rep.n_checkpoints, 2);
	assert_true(has(&rep, 9, SBX_FIND_TIME_BACKWARDS));
	assert_true(has(&rep, 33, SBX_FIND_UNCHECKPOINTED_TAIL));
	assert_int_equal(rep.n_findings, 2);
	sbx_verify_report_free(&rep);
}

static void test_column_at_end_of_chunk(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET user='mallory', uid=0 WHERE seq=8");
	check_splits(*state, &rep);
	assert_true(has(&rep, 8, SBX_FIND_COLUMNS_MISMATCH));
	sbx_verify_report_free(&rep);
}

static void test_blob_at_start_of_chunk(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET blob=(SELECT blob FROM records WHERE seq=11) WHERE seq=9");
	check_splits(*state, &rep);
	assert_true(has(&rep, 9, SBX_FIND_RECORD_MODIFIED));
	/* the stored leaf still holds the chain and the checkpoints; seq 9 is
	 * not decoded, so no time finding either */
	assert_int_equal(rep.n_findings, 2);
	sbx_verify_report_free(&rep);
}

static void test_delete_across_chunks(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "DELETE FROM records WHERE seq IN (8, 9, 16, 17, 18)");
	check_splits(*state, &rep);
	assert_true(has(&rep, 8, SBX_FIND_SEQ_GAP));
	assert_true(has(&rep, 16, SBX_FIND_SEQ_GAP));
	sbx_verify_report_free(&rep);
}

static void test_swap_across_chunks(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET seq=-8 WHERE seq=8; UPDATE records SET seq=8 WHERE seq=9;"
		    "UPDATE records SET seq=9 WHERE seq=-8");
	check_splits(*state, &rep);
	assert_true(rep.n_findings > 2);
	sbx_verify_report_free(&rep);
}

/* The walk recomputes the link from the previous record's chain: across
 * a chunk boundary that record was read by another reader. */
static void test_leaf_at_start_of_chunk(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET leaf=zeroblob(32) WHERE seq=9;"
		    "UPDATE records SET leaf=x'00' WHERE seq=17");
	check_splits(*state, &rep);
	assert_true(has(&rep, 9, SBX_FIND_RECORD_MODIFIED));
	assert_false(has(&rep, 9, SBX_FIND_CHAIN_BROKEN));
	assert_false(has(&rep, 16, SBX_FIND_CHECKPOINT_MISMATCH));
	sbx_verify_report_free(&rep);
}

/* An altered chain value: the next record's precomputed link started from
 * it, but the walk goes on from the recomputed one. */
static void test_chain_at_end_of_chunk(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET chain=zeroblob(32) WHERE seq=8;"
		    "UPDATE records SET chain=x'0102' WHERE seq=12;"
		    "UPDATE records SET chain=zeroblob(32), sig=zeroblob(64) WHERE seq=24");
	check_splits(*state, &rep);
	assert_true(has(&rep, 8, SBX_FIND_CHAIN_BROKEN));
	assert_false(has(&rep, 9, SBX_FIND_CHAIN_BROKEN));
	assert_true(has(&rep, 12, SBX_FIND_CHAIN_BROKEN));
	sbx_verify_report_free(&rep);
}

static void test_sig_and_origin(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "UPDATE records SET origin=hex(randomblob(200)) WHERE seq=16;"
		    "UPDATE records SET sig=x'00' WHERE seq=17;"
		    "UPDATE records SET sig=zeroblob(64) WHERE seq=40");
	check_splits(*state, &rep);
	assert_true(has(&rep, 40, SBX_FIND_BAD_SIGNATURE));
	assert_true(has(&rep, 17, SBX_FIND_BAD_SIGNATURE));
	sbx_verify_report_free(&rep);
}

static void test_undecodable_and_seq(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;
	unsigned char leaf[32];
	char q[256], hex[65];

	/* a blob that is not a record, with its leaf made to match */
	sbx_audit_leaf((const unsigned char *)"junk", 4, leaf);
	sodium_bin2hex(hex, sizeof(hex), leaf, 32);
	snprintf(q, sizeof(q), "UPDATE records SET blob=CAST('junk' AS BLOB), leaf=x'%s' WHERE seq=10", hex);
	sql(f, q);
	sql(f, "UPDATE records SET seq=-3 WHERE seq=1; UPDATE records SET seq=1000 WHERE seq=40");
	check_splits(f, &rep);
	assert_true(has(&rep, 10, SBX_FIND_UNDECODABLE));
	sbx_verify_report_free(&rep);
}

static void test_truncated(void **state)
{
	struct sbx_verify_report rep;

	sql(*state, "DELETE FROM records WHERE seq > 24");
	check_splits(*state, &rep);
	assert_true(has(&rep, 25, SBX_FIND_TRUNCATED));
	sbx_verify_report_free(&rep);
}

/*
 * The walk keeps each START's code digest once, in a hash table that
 * starts at 4096 slots and doubles at half full (audit/verifyruns.c):
 * 2100 runs with code of their own make it grow once. Each code row must
 * still be found, and each one deleted named at the first START that ran
 * it: the first run's, one in the middle and the last one's, by one
 * reader and by two.
 */
#define NCODE 2100

static void test_many_codes(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;
	struct sbx_record r;
	char err[512], note[SBX_NOTE_MAX], code[32], q[300];
	int i, seq = NREC, k;
	static const int gone[] = {1, 1500, NCODE};

	/* the records of the fixture, then the runs; no fsync per append */
	assert_int_equal(sqlite3_exec(sbx_audit_db(f->a), "PRAGMA synchronous=OFF", NULL, NULL, NULL),
			 SQLITE_OK);
	for (i = 1; i <= NCODE; i++) {
		for (k = 0; k < 2; k++) {
			fill(&r, ++seq);
			snprintf(r.run_id, sizeof(r.run_id), "%032x", 0x10000 + i);
			r.kind = k == 0 ? SBX_REC_START : SBX_REC_END;
			strcpy(r.outcome, k == 0 ? "" : "ok");
			snprintf(code, sizeof(code), "run(%d)\n", i);
			crypto_hash_sha256(r.code_sha256, (const unsigned char *)code, strlen(code));
			r.code = code;
			r.code_len = strlen(code);
			if (sbx_audit_append(f->a, &r, f->sk, ORIGIN, NULL, err, sizeof(err)) < 0)
				fail_msg("append: %s", err);
		}
	}
	if (sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 0, 0, note, err, sizeof(err)) != 1)
		fail_msg("checkpoint: %s", err);
	run(f, 0, 0, 2, 64, &rep);
	assert_int_equal(rep.n_records, NREC + 2 * NCODE);
	for (k = 0; k < (int)rep.n_findings; k++)
		assert_int_not_equal(rep.findings[k].kind, SBX_FIND_CODE_MISSING);
	sbx_verify_report_free(&rep);
	for (k = 0; k < 3; k++) {
		unsigned char d[32];
		char hex[65];
		snprintf(code, sizeof(code), "run(%d)\n", gone[k]);
		crypto_hash_sha256(d, (const unsigned char *)code, strlen(code));
		sodium_bin2hex(hex, sizeof(hex), d, 32);
		snprintf(q, sizeof(q), "DELETE FROM code WHERE sha256 = '%s'", hex);
		sql(f, q);
	}
	run(f, 0, 0, 1, 1000, &rep);
	for (k = 0; k < 3; k++)
		assert_true(has(&rep, NREC + 2 * gone[k] - 1, SBX_FIND_CODE_MISSING));
	{
		struct sbx_verify_report got;
		run(f, 0, 0, 2, 64, &got);
		same(&rep, &got, 2, 64);
		sbx_verify_report_free(&got);
	}
	sbx_verify_report_free(&rep);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_clean),
		T(test_column_at_end_of_chunk),
		T(test_blob_at_start_of_chunk),
		T(test_delete_across_chunks),
		T(test_swap_across_chunks),
		T(test_leaf_at_start_of_chunk),
		T(test_chain_at_end_of_chunk),
		T(test_sig_and_origin),
		T(test_undecodable_and_seq),
		T(test_many_codes),
		T(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
