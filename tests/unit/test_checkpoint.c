/* SPDX-License-Identifier: ISC */
/*
 * Merkle tree (RFC 6962), C2SP checkpoints, and verification against
 * stored checkpoints and a saved --state checkpoint: the tamper cases of
 * issue 6 (edit a column, edit a blob, delete a row, swap two rows,
 * truncate the tail, replace the log with one signed by a new key, roll
 * back to an older copy), each expected to give the named finding.
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
#include "merkle.h"
#include "record.h"

#define ORIGIN "host1.example/sbx"

/* ---- Merkle tree ---- */

/* RFC 6962 roots of the first n of the certificate-transparency test
 * leaves (as used by its reference implementations' tests). */
static const char *const ct_roots[8] = {
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

static void ct_leaves(unsigned char l[8][32])
{
	static const unsigned char d[] = {0x00, 0x10, 0x20, 0x21, 0x30, 0x31, 0x40, 0x41, 0x42, 0x43,
		0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65,
		0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f};
	static const size_t off[9] = {0, 0, 1, 2, 4, 6, 10, 18, 34};
	int i;

	for (i = 0; i < 8; i++)
		sbx_audit_leaf(d + off[i], off[i + 1] - off[i], l[i]);
}

static void test_merkle_vectors(void **state)
{
	unsigned char l[8][32], r1[32], r2[32];
	char hex[65];
	struct sbx_mtree t;
	int n;

	(void)state;
	ct_leaves(l);
	sbx_mtree_init(&t);
	for (n = 1; n <= 8; n++) {
		sbx_mtree_push(&t, l[n - 1]);
		sbx_mtree_root(&t, r1);
		sbx_merkle_root((const unsigned char (*)[32])l, (uint64_t)n, r2);
		sodium_bin2hex(hex, sizeof(hex), r1, 32);
		assert_string_equal(hex, ct_roots[n - 1]);
		assert_memory_equal(r1, r2, 32);
	}
	/* the empty tree is SHA-256 of nothing */
	sbx_mtree_init(&t);
	sbx_mtree_root(&t, r1);
	sodium_bin2hex(hex, sizeof(hex), r1, 32);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_merkle_frontier(void **state)
{
	unsigned char l[8][32], buf[8 + 64 * 32], r1[32], r2[32];
	struct sbx_mtree t, u;
	size_t n;
	int i;

	(void)state;
	ct_leaves(l);
	sbx_mtree_init(&t);
	for (i = 0; i < 5; i++)
		sbx_mtree_push(&t, l[i]);
	n = sbx_mtree_save(&t, buf);
	assert_int_equal(n, 8 + 2 * 32); /* 5 = 101b: two subtrees */
	assert_int_equal(sbx_mtree_load(&u, buf, n), 0);
	for (i = 5; i < 8; i++) {
		sbx_mtree_push(&t, l[i]);
		sbx_mtree_push(&u, l[i]);
	}
	sbx_mtree_root(&t, r1);
	sbx_mtree_root(&u, r2);
	assert_memory_equal(r1, r2, 32);
	assert_int_equal(sbx_mtree_load(&u, buf, n - 1), -1);
}

static void test_inclusion(void **state)
{
	unsigned char l[20][32], root[32], path[SBX_MERKLE_MAX_PATH][32];
	uint64_t n, m;
	int k;

	(void)state;
	for (k = 0; k < 20; k++)
		crypto_hash_sha256(l[k], (unsigned char *)&k, sizeof(k));
	for (n = 1; n <= 20; n++) {
		sbx_merkle_root((const unsigned char (*)[32])l, n, root);
		for (m = 0; m < n; m++) {
			k = sbx_merkle_inclusion_proof((const unsigned char (*)[32])l, n, m, path);
			assert_true(k >= 0);
			assert_true(sbx_merkle_inclusion_ok(l[m], m, n,
				(const unsigned char (*)[32])path, (size_t)k, root));
			/* wrong index, wrong size, wrong leaf, damaged path: all fail */
			if (n > 1) {
				assert_false(sbx_merkle_inclusion_ok(l[m], (m + 1) % n, n,
					(const unsigned char (*)[32])path, (size_t)k, root));
				assert_false(sbx_merkle_inclusion_ok(l[(m + 1) % n], m, n,
					(const unsigned char (*)[32])path, (size_t)k, root));
				path[0][3] ^= 1;
				assert_false(sbx_merkle_inclusion_ok(l[m], m, n,
					(const unsigned char (*)[32])path, (size_t)k, root));
			}
			assert_false(sbx_merkle_inclusion_ok(l[m], m, n + 1,
				(const unsigned char (*)[32])path, (size_t)k, root));
		}
		assert_int_equal(sbx_merkle_inclusion_proof((const unsigned char (*)[32])l, n, n, path), -1);
	}
}

/* ---- notes ---- */

static void test_note(void **state)
{
	unsigned char pk[32], sk[64], pk2[32], sk2[64], id[4];
	struct sbx_checkpoint cp = {ORIGIN, 42, {0}}, got;
	char note[SBX_NOTE_MAX], bad[SBX_NOTE_MAX + 200], err[200], b64[16];
	int n;

	(void)state;
	crypto_sign_keypair(pk, sk);
	crypto_sign_keypair(pk2, sk2);
	memset(cp.root, 0xab, 32);
	n = sbx_checkpoint_sign(&cp, sk, note);
	assert_true(n > 0);
	/* origin, size, base64 root, blank line, em dash signature line */
	{
		const char *want = ORIGIN "\n42\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n\n"
				   "\xe2\x80\x94 " ORIGIN " ";
		assert_memory_equal(note, want, strlen(want));
		/* key id (4) + signature (64) = 68 bytes = 92 base64 chars, newline */
		assert_int_equal((size_t)n, strlen(want) + 92 + 1);
	}
	/* the signature blob starts with the key id */
	sbx_note_key_id(ORIGIN, pk, id);
	sodium_bin2base64(b64, sizeof(b64), id, 3, sodium_base64_VARIANT_ORIGINAL);
	assert_non_null(strstr(note, b64));
	assert_int_equal(sbx_checkpoint_open(note, (size_t)n, pk, &got, err, sizeof(err)), 0);
	assert_int_equal(got.size, 42);
	assert_memory_equal(got.root, cp.root, 32);
	assert_string_equal(got.origin, ORIGIN);

	assert_int_equal(sbx_checkpoint_open(note, (size_t)n, pk2, &got, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not signed by this key"));
	/* a witness's line is ignored */
	snprintf(bad, sizeof(bad), "%s\xe2\x80\x94 witness.example AAAAAAAA\n", note);
	assert_int_equal(sbx_checkpoint_open(bad, strlen(bad), pk, &got, err, sizeof(err)), 0);
	/* any change to the text breaks the signature */
	memcpy(bad, note, (size_t)n + 1);
	bad[strlen(ORIGIN) + 2] = '3'; /* 42 -> 43 */
	assert_int_equal(sbx_checkpoint_open(bad, (size_t)n, pk, &got, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "does not verify"));
	/* origins that cannot be key names are refused */
	strcpy(cp.origin, "has space");
	assert_int_equal(sbx_checkpoint_sign(&cp, sk, note), -1);
}

/* ---- logs ---- */

struct fx {
	char dir[64], db[128];
	struct sbx_audit *a;
	unsigned char pk[32], sk[64];
	char note[SBX_NOTE_MAX];     /* the auditor's saved checkpoint */
};

static void fill(struct sbx_record *r, int kind, int run, int64_t t)
{
	static const char code[] = "print(1)\n";

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", 0x5000 + run);
	strcpy(r->boot_id, "boot-1");
	r->realtime_ns = t;
	strcpy(r->host, "host1");
	r->uid = 1000;
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	strcpy(r->language, "python");
	r->limits.wall_ms = 30000;
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code, strlen(code));
	r->code = code;
	r->code_len = strlen(code);
	if (kind == SBX_REC_END)
		strcpy(r->outcome, "ok");
}

static void append_runs(struct sbx_audit *a, const unsigned char *sk, int from, int n)
{
	struct sbx_record r;
	char err[512];
	int run;

	/* record i (from 1): odd a START, even its END */
	for (run = from; run < from + n; run++) {
		fill(&r, run % 2 ? SBX_REC_START : SBX_REC_END, (run + 1) / 2,
		     1714564800000000000LL + run * 1000000000LL);
		if (sbx_audit_append(a, &r, sk, ORIGIN, NULL, err, sizeof(err)) < 0)
			fail_msg("append: %s", err);
	}
}

static void checkpoint(struct fx *f, struct sbx_audit *a, const unsigned char *sk, char *note)
{
	char err[512];

	if (sbx_audit_checkpoint(a, sk, ORIGIN, 0, 0, note, err, sizeof(err)) != 1)
		fail_msg("checkpoint: %s", err);
	(void)f;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[512];

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-ckpt-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(f->pk, f->sk);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	append_runs(f->a, f->sk, 1, 6);
	checkpoint(f, f->a, f->sk, f->note);
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
static void sql(const char *db, const char *q)
{
	sqlite3 *h;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_exec(h, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
	sqlite3_close(h);
}

static void run_verify(struct sbx_audit *a, const unsigned char *pk, int full,
		       const char *state, struct sbx_verify_report *rep)
{
	/* a START without END is a run in progress this close to its time */
	struct sbx_verify_opts o = {.full = full, .state_note = state,
				    .state_len = state ? strlen(state) : 0,
				    .now_ns = 1714564800000000000LL + 100LL * 1000000000};
	char err[512];
	size_t i;

	if (sbx_audit_verify_opts(a, pk, &o, rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
	for (i = 0; i < rep->n_findings; i++)
		print_message("# seq %lld: %s: %s (expected %s, actual %s)\n",
			      (long long)rep->findings[i].seq,
			      sbx_finding_kind_name(rep->findings[i].kind), rep->findings[i].what,
			      rep->findings[i].expected, rep->findings[i].actual);
}

/* The finding (seq, kind) is among those reported; seq -1: any seq. */
static int has(const struct sbx_verify_report *rep, int64_t seq, enum sbx_finding_kind kind)
{
	size_t i;

	for (i = 0; i < rep->n_findings; i++)
		if (rep->findings[i].kind == kind && (seq < 0 || rep->findings[i].seq == seq))
			return 1;
	return 0;
}

static void test_clean(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	run_verify(f->a, f->pk, 0, f->note, &rep);
	assert_int_equal(rep.n_findings, 0);
	assert_int_equal(rep.n_records, 6);
	assert_int_equal(rep.n_checkpoints, 1);
	assert_int_equal(rep.latest_size, 6);
	assert_string_equal(rep.latest_note, f->note);
	sbx_verify_report_free(&rep);
	/* two more records: a warning for the tail, nothing else */
	append_runs(f->a, f->sk, 7, 2);
	run_verify(f->a, f->pk, 1, f->note, &rep);
	assert_int_equal(rep.n_findings, 1);
	assert_true(has(&rep, 7, SBX_FIND_UNCHECKPOINTED_TAIL));
	assert_true(sbx_finding_is_warning(rep.findings[0].kind));
	sbx_verify_report_free(&rep);
}

static void test_checkpoint_due(void **state)
{
	struct fx *f = *state;
	char note[SBX_NOTE_MAX], err[512];

	/* nothing new since the setup's checkpoint */
	assert_int_equal(sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 0, 0, note, err, sizeof(err)), 0);
	assert_string_equal(note, f->note);
	append_runs(f->a, f->sk, 7, 3);
	assert_int_equal(sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 4, 0, note, err, sizeof(err)), 0);
	append_runs(f->a, f->sk, 10, 1);
	assert_int_equal(sbx_audit_checkpoint(f->a, f->sk, ORIGIN, 4, 0, note, err, sizeof(err)), 1);
	assert_non_null(strstr(note, "\n10\n"));
	/* the grown tree equals one rebuilt from scratch: verify agrees */
	{
		struct sbx_verify_report rep;
		run_verify(f->a, f->pk, 0, f->note, &rep);
		assert_int_equal(rep.n_findings, 0);
		assert_int_equal(rep.n_checkpoints, 2);
		sbx_verify_report_free(&rep);
	}
	/* a read-only log cannot be checkpointed */
	{
		struct sbx_audit *ro;
		assert_int_equal(sbx_audit_open(f->db, 1, &ro, err, sizeof(err)), 0);
		append_runs(f->a, f->sk, 11, 1);
		assert_int_equal(sbx_audit_checkpoint(ro, f->sk, ORIGIN, 0, 0, note, err, sizeof(err)), -1);
		sbx_audit_close(ro);
	}
}

static void test_edit_column(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	sql(f->db, "UPDATE records SET user='mallory' WHERE seq=3");
	run_verify(f->a, f->pk, 0, f->note, &rep);
	assert_int_equal(rep.n_findings, 1);
	assert_true(has(&rep, 3, SBX_FIND_COLUMNS_MISMATCH));
	assert_string_equal(rep.findings[0].expected, "'alice'");
	assert_string_equal(rep.findings[0].actual, "'mallory'");
	sbx_verify_report_free(&rep);
}

static void test_edit_blob(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	/* flip a byte inside the user name in the blob */
	sql(f->db, "UPDATE records SET blob=CAST(replace(CAST(blob AS TEXT),'alice','alicf') AS BLOB)"
		   " WHERE seq=2");
	run_verify(f->a, f->pk, 0, f->note, &rep);
	/* one edit, one finding: the tree is built from the stored leaf */
	assert_int_equal(rep.n_findings, 1);
	assert_true(has(&rep, 2, SBX_FIND_RECORD_MODIFIED));
	sbx_verify_report_free(&rep);
}

static void test_delete_row(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	sql(f->db, "DELETE FROM records WHERE seq=4");
	run_verify(f->a, f->pk, 0, f->note, &rep);
	assert_true(has(&rep, 4, SBX_FIND_SEQ_GAP));
	assert_true(has(&rep, -1, SBX_FIND_TRUNCATED)); /* 5 leaves, checkpoint of 6 */
	sbx_verify_report_free(&rep);
}

static void test_swap_rows(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	/* swap everything but seq between rows 2 and 3 */
	sql(f->db, "UPDATE records SET seq=100 WHERE seq=2;"
		   "UPDATE records SET seq=2 WHERE seq=3;"
		   "UPDATE records SET seq=3 WHERE seq=100");
	run_verify(f->a, f->pk, 1, f->note, &rep);
	assert_true(has(&rep, 2, SBX_FIND_CHAIN_BROKEN) || has(&rep, 2, SBX_FIND_COLUMNS_MISMATCH));
	assert_true(has(&rep, 6, SBX_FIND_CHECKPOINT_MISMATCH));
	assert_true(has(&rep, 6, SBX_FIND_FORKED));
	sbx_verify_report_free(&rep);
}

/* Cut the tail together with the checkpoints: only --state can tell. */
static void test_truncate_tail(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	sql(f->db, "DELETE FROM records WHERE seq>4; DELETE FROM checkpoints");
	run_verify(f->a, f->pk, 1, NULL, &rep);
	assert_false(has(&rep, -1, SBX_FIND_TRUNCATED)); /* no state: undetectable */
	sbx_verify_report_free(&rep);
	run_verify(f->a, f->pk, 1, f->note, &rep);
	assert_true(has(&rep, 5, SBX_FIND_TRUNCATED));
	sbx_verify_report_free(&rep);
}

static void new_log(struct fx *f, const char *name, struct sbx_audit **a)
{
	char path[200], err[512];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (sbx_audit_open(path, 0, a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
}

/* A fresh log signed by a new key, with the new public key installed. */
static void test_replaced_log(void **state)
{
	struct fx *f = *state;
	unsigned char pk2[32], sk2[64];
	struct sbx_verify_report rep;
	struct sbx_audit *b;
	char note[SBX_NOTE_MAX];

	crypto_sign_keypair(pk2, sk2);
	new_log(f, "fake.db", &b);
	append_runs(b, sk2, 101, 8); /* other runs: the forger's story */
	checkpoint(f, b, sk2, note);
	run_verify(b, pk2, 1, NULL, &rep);
	assert_int_equal(rep.n_findings, 0); /* self-consistent... */
	sbx_verify_report_free(&rep);
	run_verify(b, pk2, 1, f->note, &rep);
	assert_true(has(&rep, 0, SBX_FIND_LOG_REPLACED)); /* ...but not the log we saw */
	sbx_verify_report_free(&rep);
	run_verify(b, f->pk, 0, f->note, &rep); /* the auditor's own key */
	assert_true(has(&rep, -1, SBX_FIND_BAD_SIGNATURE));
	assert_true(has(&rep, -1, SBX_FIND_CHECKPOINT_BAD));
	assert_true(has(&rep, 6, SBX_FIND_FORKED));
	sbx_verify_report_free(&rep);
	sbx_audit_close(b);
}

/* A consistent copy, as an attacker's backup would be. */
static void copy_db(struct fx *f, const char *name)
{
	char path[200];
	sqlite3 *src, *dst;
	sqlite3_backup *b;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(sqlite3_open(f->db, &src), SQLITE_OK);
	assert_int_equal(sqlite3_open(path, &dst), SQLITE_OK);
	b = sqlite3_backup_init(dst, "main", src, "main");
	assert_non_null(b);
	assert_int_equal(sqlite3_backup_step(b, -1), SQLITE_DONE);
	sqlite3_backup_finish(b);
	sqlite3_close(dst);
	sqlite3_close(src);
}

/* The log is put back to an older copy (same key): the auditor's state
 * is ahead of it. Appending to the old copy instead makes a fork. */
static void test_rollback(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;
	struct sbx_audit *old;
	char note[SBX_NOTE_MAX];

	copy_db(f, "old.db");
	append_runs(f->a, f->sk, 7, 4);
	checkpoint(f, f->a, f->sk, note);  /* the auditor now trusts size 10 */
	new_log(f, "old.db", &old);
	run_verify(old, f->pk, 1, note, &rep);
	assert_true(has(&rep, 7, SBX_FIND_TRUNCATED));
	sbx_verify_report_free(&rep);
	/* rolled back, then appended to: as long as the state, other records */
	append_runs(old, f->sk, 107, 4);
	checkpoint(f, old, f->sk, NULL);
	run_verify(old, f->pk, 1, note, &rep);
	assert_true(has(&rep, 10, SBX_FIND_FORKED));
	assert_false(has(&rep, -1, SBX_FIND_TRUNCATED));
	sbx_verify_report_free(&rep);
	sbx_audit_close(old);
}

/* By default only the last signature is checked; --full checks all. */
static void test_full_vs_default(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	sql(f->db, "UPDATE records SET sig=randomblob(64) WHERE seq=3");
	run_verify(f->a, f->pk, 0, NULL, &rep);
	assert_false(has(&rep, -1, SBX_FIND_BAD_SIGNATURE));
	sbx_verify_report_free(&rep);
	run_verify(f->a, f->pk, 1, NULL, &rep);
	assert_int_equal(rep.n_findings, 1);
	assert_true(has(&rep, 3, SBX_FIND_BAD_SIGNATURE));
	sbx_verify_report_free(&rep);
	sql(f->db, "UPDATE records SET sig=randomblob(64) WHERE seq=6");
	run_verify(f->a, f->pk, 0, NULL, &rep);
	assert_int_equal(rep.n_findings, 1);
	assert_true(has(&rep, 6, SBX_FIND_BAD_SIGNATURE));
	sbx_verify_report_free(&rep);
}

static void test_time_backwards(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;
	struct sbx_record r;
	char err[512];

	fill(&r, SBX_REC_START, 50, 1714564800000000000LL - 60000000000LL); /* a minute back */
	assert_int_equal(sbx_audit_append(f->a, &r, f->sk, ORIGIN, NULL, err, sizeof(err)), 0);
	checkpoint(f, f->a, f->sk, NULL);
	run_verify(f->a, f->pk, 1, f->note, &rep);
	assert_int_equal(rep.n_findings, 2);
	assert_true(has(&rep, 7, SBX_FIND_TIME_BACKWARDS));
	/* and, started 160 s before "now" with a 30 s limit, incomplete */
	assert_true(has(&rep, 7, SBX_FIND_INCOMPLETE));
	sbx_verify_report_free(&rep);
}

static void test_checkpoint_tampered(void **state)
{
	struct fx *f = *state;
	struct sbx_verify_report rep;

	sql(f->db, "UPDATE checkpoints SET note=replace(note, char(10)||'6'||char(10), "
		   "char(10)||'5'||char(10))");
	run_verify(f->a, f->pk, 0, NULL, &rep);
	assert_true(has(&rep, 0, SBX_FIND_CHECKPOINT_BAD));
	sbx_verify_report_free(&rep);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merkle_vectors),
		cmocka_unit_test(test_merkle_frontier),
		cmocka_unit_test(test_inclusion),
		cmocka_unit_test(test_note),
		T(test_clean),
		T(test_checkpoint_due),
		T(test_edit_column),
		T(test_edit_blob),
		T(test_delete_row),
		T(test_swap_rows),
		T(test_truncate_tail),
		T(test_replaced_log),
		T(test_rollback),
		T(test_full_vs_default),
		T(test_time_backwards),
		T(test_checkpoint_tampered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
