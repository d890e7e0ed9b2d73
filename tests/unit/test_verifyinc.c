/* SPDX-License-Identifier: ISC */
/*
 * Incremental verify (sbx_verify_opts.frontier, verify --state of version
 * 3): a verify that starts from the state of an earlier one at record 21
 * (a run open there, checkpoints at 16, 32 and 40) must report, for
 * tampering after the state's head, exactly what a verify of the whole
 * log reports; a head that is gone or changed makes it walk the whole log
 * (truncated, rolled-back). And the two SHA-256 implementations agree.
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
#include "sha256.h"
#include "sha256_ossl.h"

#define ORIGIN "host1.example/sbx"
#define NREC 40
#define HEAD 21

struct fx {
	char dir[64];
	char db[128];
	struct sbx_audit *a;
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_verify_report at_head; /* the earlier verify */
};

static void fill(struct sbx_record *r, int seq)
{
	static const char code[] = "print(1)\n";

	memset(r, 0, sizeof(*r));
	r->kind = seq % 2 ? SBX_REC_START : SBX_REC_END;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", (seq + 1) / 2);
	strcpy(r->boot_id, "6a3a0c1e-0000-4000-8000-000000000001");
	r->realtime_ns = 1714564800000000000LL + seq * 1000000000LL;
	strcpy(r->host, "host1");
	r->uid = 1000;
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	strcpy(r->language, "python");
	r->limits.wall_ms = 10000;
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code, strlen(code));
	r->code = code;
	r->code_len = strlen(code);
	if (r->kind == SBX_REC_END)
		strcpy(r->outcome, "ok");
}

/* from: the state of an earlier verify; with frontier 0 only its head
 * and checkpoint (a version 2 state: the whole log is walked). */
static void run(struct fx *f, const struct sbx_verify_report *from, int frontier,
		struct sbx_verify_report *rep)
{
	struct sbx_verify_opts o = {.now_ns = 1714564800000000000LL + 60 * 1000000000LL};
	char err[512];

	if (from != NULL) {
		o.have_head = 1;
		o.head_seq = from->head_seq;
		memcpy(o.head_chain, from->head_chain, 32);
		memcpy(o.head_sig, from->head_sig, crypto_sign_BYTES);
		o.frontier = frontier ? from->frontier : NULL;
		o.frontier_len = from->frontier_len;
		o.state_base = from->base_seq;
		o.open = from->open;
		o.n_open = from->n_open;
		o.state_note = from->latest_note;
		o.state_len = strlen(from->latest_note);
	}
	if (sbx_audit_verify_opts(f->a, f->pk, &o, rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sbx_record r;
	char err[512];
	int seq;

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-vinc-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(f->pk, f->sk);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	for (seq = 1; seq <= NREC; seq++) {
		fill(&r, seq);
		if (sbx_audit_append(f->a, &r, f->sk, ORIGIN, NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
		if ((seq == 16 || seq == 32 || seq == 40) &&
		    sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 0, 0, NULL, err, sizeof(err)) != 1)
			fail_msg("checkpoint: %s", err);
		if (seq == HEAD)
			run(f, NULL, 0, &f->at_head);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	sbx_verify_report_free(&f->at_head);
	sbx_audit_close(f->a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void sql(struct fx *f, const char *q)
{
	sqlite3 *h;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	if (sqlite3_exec(h, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
	sqlite3_close(h);
}

static void same(const struct sbx_verify_report *want, const struct sbx_verify_report *got)
{
	size_t i;

	for (i = 0; i < want->n_findings; i++)
		print_message("# whole: seq %lld: %s: %s\n", (long long)want->findings[i].seq,
			      sbx_finding_kind_name(want->findings[i].kind), want->findings[i].what);
	assert_int_equal(got->n_findings, want->n_findings);
	assert_int_equal(got->n_records, want->n_records);
	assert_int_equal(got->n_checkpoints, want->n_checkpoints);
	assert_int_equal(got->latest_size, want->latest_size);
	for (i = 0; i < want->n_findings; i++) {
		assert_int_equal(got->findings[i].seq, want->findings[i].seq);
		assert_int_equal(got->findings[i].kind, want->findings[i].kind);
		assert_string_equal(got->findings[i].what, want->findings[i].what);
	}
}

/* The tampering in q, verified whole and from the state at HEAD. */
static void tampered(struct fx *f, const char *q, int incremental)
{
	struct sbx_verify_report whole, inc;

	if (q != NULL)
		sql(f, q);
	run(f, &f->at_head, 0, &whole);
	run(f, &f->at_head, 1, &inc);
	assert_int_equal(inc.incremental, incremental);
	if (incremental)
		assert_int_equal(inc.n_new, NREC - HEAD - (q != NULL && strstr(q, "DELETE FROM records")
							    ? (strstr(q, ">") ? 3 : 1) : 0));
	same(&whole, &inc);
	sbx_verify_report_free(&whole);
	sbx_verify_report_free(&inc);
}

static void test_state_at_head(void **state)
{
	struct fx *f = *state;

	/* the run of seq 21 was open: its END (22) must pair with it */
	assert_int_equal(f->at_head.head_seq, HEAD);
	assert_int_equal(f->at_head.frontier_len, 8 + 3 * 32); /* 21 = 10101b */
	assert_int_equal(f->at_head.n_open, 1);
	assert_int_equal(f->at_head.open[0].seq, HEAD);
	assert_non_null(f->at_head.latest_note);
}

static void test_clean(void **state)
{
	tampered(*state, NULL, 1);
}

static void test_new_record_altered(void **state)
{
	tampered(*state, "UPDATE records SET blob = blob || x'00' WHERE seq = 25", 1);
}

static void test_new_record_deleted(void **state)
{
	tampered(*state, "DELETE FROM records WHERE seq = 30", 1);
}

static void test_new_tail_cut(void **state)
{
	tampered(*state, "DELETE FROM records WHERE seq > 37", 1);
}

static void test_new_checkpoint_altered(void **state)
{
	tampered(*state, "UPDATE checkpoints SET note = replace(note, '\n32\n', '\n33\n') "
		 "WHERE size = 32", 1);
}

/* The END of the run the state carried open: the same findings as the
 * whole walk (test_clean shows the END pairs with the carried START). */
static void test_open_run_end_removed(void **state)
{
	tampered(*state, "DELETE FROM records WHERE seq = 22", 1);
}

static void test_head_gone(void **state)
{
	tampered(*state, "DELETE FROM records WHERE seq = 21", 0);
}

static void test_head_replaced(void **state)
{
	tampered(*state, "UPDATE records SET sig = zeroblob(64) WHERE seq = 21", 0);
}

static void test_sha256_same(void **state)
{
	unsigned char buf[1000], a[32], b[32];
	const unsigned char *p[3] = {buf, buf + 1, buf + 100};
	size_t n[3] = {1, 99, 900}, i, len;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7);
	for (len = 0; len <= sizeof(buf); len += 37) {
		sbx_sha256_use(NULL);
		sbx_sha256(a, buf, len);
		crypto_hash_sha256(b, buf, len);
		assert_memory_equal(a, b, 32);
		audit_sha256_fast();
		sbx_sha256(a, buf, len);
		assert_memory_equal(a, b, 32);
	}
	sbx_sha256_parts(a, p, n, 3);
	sbx_sha256_use(NULL);
	sbx_sha256_parts(b, p, n, 3);
	assert_memory_equal(a, b, 32);
	sbx_sha256(a, NULL, 0);
	crypto_hash_sha256(b, NULL, 0);
	assert_memory_equal(a, b, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_state_at_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_record_altered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_record_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_tail_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_checkpoint_altered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_run_end_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_replaced, setup, teardown),
		cmocka_unit_test(test_sha256_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
