/* SPDX-License-Identifier: ISC */
/*
 * RFC 9162 section 2.1.4 consistency proofs (auditlog/merkle.c): the
 * proof sizes of the certificate-transparency reference vectors, every
 * (m, n) up to 70 leaves proven and checked, and each way a proof can lie
 * (a changed hash, a dropped or added hash, the wrong sizes, a root of a
 * tree that does not extend the old one) refused. Go's tlog.ProveTree and
 * CheckTree cross-check the same code in tests/integration/111-fleet-consistency.t.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "merkle.h"
#include "record.h"

#define N 70

static void leaves(unsigned char l[N][32], unsigned char tag)
{
	unsigned char d[2];
	int i;

	for (i = 0; i < N; i++) {
		d[0] = tag;
		d[1] = (unsigned char)i;
		sbx_audit_leaf(d, 2, l[i]);
	}
}

/* The CT reference tests' consistency vectors over its 8 leaves: proof
 * lengths for (1,1) 0, (1,8) 3, (6,8) 3, (2,5) 2. */
static void test_ct_sizes(void **state)
{
	static const struct { uint64_t m, n; int len; } v[] = {{1, 1, 0}, {1, 8, 3}, {6, 8, 3}, {2, 5, 2}};
	unsigned char l[N][32], p[SBX_MERKLE_MAX_PATH][32], r1[32], r2[32];
	size_t i;

	(void)state;
	leaves(l, 1);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int k = sbx_merkle_consistency_proof((const unsigned char (*)[32])l, v[i].n, v[i].m, p);
		assert_int_equal(k, v[i].len);
		sbx_merkle_root((const unsigned char (*)[32])l, v[i].m, r1);
		sbx_merkle_root((const unsigned char (*)[32])l, v[i].n, r2);
		assert_true(sbx_merkle_consistency_ok(v[i].m, v[i].n, r1, r2, (const unsigned char (*)[32])p,
						      (size_t)k));
	}
}

static void test_all_sizes(void **state)
{
	unsigned char l[N][32], p[SBX_MERKLE_MAX_PATH + 1][32], roots[N + 1][32], x[32];
	uint64_t m, n;
	int k, j;

	(void)state;
	leaves(l, 2);
	for (n = 0; n <= N; n++)
		sbx_merkle_root((const unsigned char (*)[32])l, n, roots[n]);
	for (n = 1; n <= N; n++) {
		for (m = 0; m <= n; m++) {
			const unsigned char (*pp)[32] = (const unsigned char (*)[32])p;

			k = sbx_merkle_consistency_proof((const unsigned char (*)[32])l, n, m, p);
			assert_true(k >= 0);
			assert_true(sbx_merkle_consistency_ok(m, n, roots[m], roots[n], pp, (size_t)k));
			if (m == 0 || m == n) {
				assert_int_equal(k, 0);
				continue;
			}
			/* a changed hash */
			for (j = 0; j < k; j++) {
				p[j][j % 32] ^= 0x40;
				assert_false(sbx_merkle_consistency_ok(m, n, roots[m], roots[n], pp, (size_t)k));
				p[j][j % 32] ^= 0x40;
			}
			/* one hash fewer, one more */
			assert_false(sbx_merkle_consistency_ok(m, n, roots[m], roots[n], pp, (size_t)k - 1));
			memcpy(p[k], roots[0], 32);
			assert_false(sbx_merkle_consistency_ok(m, n, roots[m], roots[n], pp, (size_t)k + 1));
			/* other sizes or roots */
			assert_false(sbx_merkle_consistency_ok(m, n, roots[m - 1], roots[n], pp, (size_t)k));
			assert_false(sbx_merkle_consistency_ok(m, n, roots[m], roots[n - 1], pp, (size_t)k));
			if (m + 1 < n)
				assert_false(sbx_merkle_consistency_ok(m + 1, n, roots[m], roots[n], pp,
								       (size_t)k));
			assert_false(sbx_merkle_consistency_ok(n, m, roots[n], roots[m], pp, (size_t)k));
		}
	}
	/* m > n: no proof, never consistent */
	assert_int_equal(sbx_merkle_consistency_proof((const unsigned char (*)[32])l, 3, 4, p), -1);
	/* equal sizes: equal roots and an empty proof only */
	assert_true(sbx_merkle_consistency_ok(5, 5, roots[5], roots[5], NULL, 0));
	assert_false(sbx_merkle_consistency_ok(5, 5, roots[5], roots[4], NULL, 0));
	memcpy(x, roots[5], 32);
	assert_false(sbx_merkle_consistency_ok(5, 5, roots[5], x, (const unsigned char (*)[32])roots, 1));
}

/* A log truncated and regrown (the rolled-back host): the new tree of
 * the same or larger size does not extend the old one, whatever proof
 * the honest new tree yields. */
static void test_rollback(void **state)
{
	unsigned char a[N][32], b[N][32], p[SBX_MERKLE_MAX_PATH][32], ra[32], rb[32];
	uint64_t m, n, cut;
	int k;

	(void)state;
	leaves(a, 3);
	memcpy(b, a, sizeof(b));
	for (cut = 1; cut < 20; cut += 3) {
		leaves(b, 4); /* the regrown tail differs from leaf cut on */
		memcpy(b, a, cut * 32);
		for (m = cut + 1; m <= 30; m += 2) {
			for (n = m; n <= 40; n += 3) {
				sbx_merkle_root((const unsigned char (*)[32])a, m, ra);
				sbx_merkle_root((const unsigned char (*)[32])b, n, rb);
				k = sbx_merkle_consistency_proof((const unsigned char (*)[32])b, n, m, p);
				assert_false(sbx_merkle_consistency_ok(m, n, ra, rb,
								       (const unsigned char (*)[32])p, (size_t)k));
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ct_sizes),
		cmocka_unit_test(test_all_sizes),
		cmocka_unit_test(test_rollback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
