/* SPDX-License-Identifier: ISC */
/*
 * RFC 6962 Merkle tree: node hashing, incremental root, inclusion proofs.
 * Kept free of SQLite so the same code serves the writer, the verifier and
 * the offline proof checker.
 */
#include "merkle.h"
#include "sha256.h"

#include <sodium.h>
#include <string.h>

void sbx_merkle_node(const unsigned char l[32], const unsigned char r[32], unsigned char out[32])
{
	const unsigned char one = 0x01; /* RFC 6962: interior node prefix */
	const unsigned char *p[3] = {&one, l, r};
	size_t n[3] = {1, 32, 32};

	sbx_sha256_parts(out, p, n, 3);
}

void sbx_mtree_init(struct sbx_mtree *t)
{
	memset(t, 0, sizeof(*t));
}

void sbx_mtree_push(struct sbx_mtree *t, const unsigned char leaf[32])
{
	unsigned char h[32];
	int k = 0;

	memcpy(h, leaf, 32);
	/* Carry like a binary counter: equal-sized perfect subtrees merge. */
	while (k < 64 && (t->size >> k) & 1) {
		sbx_merkle_node(t->stack[k], h, h);
		k++;
	}
	if (k < 64)
		memcpy(t->stack[k], h, 32);
	t->size++;
}

void sbx_mtree_root(const struct sbx_mtree *t, unsigned char root[32])
{
	int k, have = 0;

	if (t->size == 0) {
		sbx_sha256(root, NULL, 0);
		return;
	}
	/* MTH puts the largest perfect subtree on the left and recurses on the
	 * rest, so fold from the smallest subtree upwards. */
	for (k = 0; k < 64; k++) {
		if (!((t->size >> k) & 1))
			continue;
		if (!have) {
			memcpy(root, t->stack[k], 32);
			have = 1;
		} else {
			sbx_merkle_node(t->stack[k], root, root);
		}
	}
}

size_t sbx_mtree_save(const struct sbx_mtree *t, unsigned char *buf)
{
	size_t n = 8;
	int k;

	for (k = 0; k < 8; k++)
		buf[k] = (unsigned char)(t->size >> (56 - 8 * k));
	for (k = 0; k < 64; k++) {
		if ((t->size >> k) & 1) {
			memcpy(buf + n, t->stack[k], 32);
			n += 32;
		}
	}
	return n;
}

int sbx_mtree_load(struct sbx_mtree *t, const unsigned char *buf, size_t len)
{
	size_t n = 8;
	int k;

	sbx_mtree_init(t);
	if (buf == NULL || len < 8)
		return -1;
	for (k = 0; k < 8; k++)
		t->size = t->size << 8 | buf[k];
	if (len != 8 + 32 * (size_t)__builtin_popcountll(t->size))
		return -1;
	for (k = 0; k < 64; k++) {
		if ((t->size >> k) & 1) {
			memcpy(t->stack[k], buf + n, 32);
			n += 32;
		}
	}
	return 0;
}

/* Largest power of two strictly below n (n >= 2). */
static uint64_t split(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

/* Recursion depth is log2(n) <= 64: the RFC 6962 definition, read as written. */
void sbx_merkle_root(const unsigned char (*leaves)[32], uint64_t n, unsigned char root[32]) // NOLINT(misc-no-recursion)
{
	unsigned char l[32], r[32];
	uint64_t k;

	if (n == 0) {
		sbx_sha256(root, NULL, 0);
		return;
	}
	if (n == 1) {
		memcpy(root, leaves[0], 32);
		return;
	}
	k = split(n);
	sbx_merkle_root(leaves, k, l);
	sbx_merkle_root(leaves + k, n - k, r);
	sbx_merkle_node(l, r, root);
}

static int path_rec(const unsigned char (*d)[32], uint64_t n, uint64_t m, // NOLINT(misc-no-recursion): depth log2(n)
		    unsigned char (*path)[32], int at)
{
	uint64_t k;

	if (n <= 1)
		return at;
	k = split(n);
	/* PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) when m < k, else
	 * PATH(m - k, D[k:n]) : MTH(D[0:k]) (RFC 6962 2.1.1). */
	if (m < k) {
		at = path_rec(d, k, m, path, at);
		sbx_merkle_root(d + k, n - k, path[at]);
	} else {
		at = path_rec(d + k, n - k, m - k, path, at);
		sbx_merkle_root(d, k, path[at]);
	}
	return at + 1;
}

int sbx_merkle_inclusion_proof(const unsigned char (*leaves)[32], uint64_t n,
			       uint64_t m, unsigned char (*path)[32])
{
	if (m >= n)
		return -1;
	return path_rec(leaves, n, m, path, 0);
}

int sbx_merkle_inclusion_ok(const unsigned char leaf[32], uint64_t m, uint64_t n,
			    const unsigned char (*path)[32], size_t path_len,
			    const unsigned char root[32])
{
	uint64_t fn = m, sn;
	unsigned char r[32];
	size_t i;

	if (m >= n)
		return 0;
	sn = n - 1;
	memcpy(r, leaf, 32);
	for (i = 0; i < path_len; i++) {
		if (sn == 0)
			return 0;
		if ((fn & 1) || fn == sn) {
			sbx_merkle_node(path[i], r, r);
			if (!(fn & 1)) {
				while (!(fn & 1) && fn != 0) {
					fn >>= 1;
					sn >>= 1;
				}
			}
		} else {
			sbx_merkle_node(r, path[i], r);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && sodium_memcmp(r, root, 32) == 0;
}

/* SUBPROOF(m, D[n], b) of RFC 9162 section 2.1.4.1 (0 < m <= n), appended
 * at proof[at]; returns the new count. Depth log2(n) <= 64. */
static int subproof(const unsigned char (*d)[32], uint64_t n, uint64_t m, int b, // NOLINT(misc-no-recursion)
		    unsigned char (*proof)[32], int at)
{
	uint64_t k;

	if (m == n) {
		/* The old tree is this subtree: the verifier knows its root
		 * already when it is the whole old tree (b), else it needs it. */
		if (!b)
			sbx_merkle_root(d, n, proof[at++]);
		return at;
	}
	k = split(n);
	if (m <= k) {
		at = subproof(d, k, m, b, proof, at);
		sbx_merkle_root(d + k, n - k, proof[at]);
	} else {
		at = subproof(d + k, n - k, m - k, 0, proof, at);
		sbx_merkle_root(d, k, proof[at]);
	}
	return at + 1;
}

int sbx_merkle_consistency_proof(const unsigned char (*leaves)[32], uint64_t n, uint64_t m,
				 unsigned char (*proof)[32])
{
	if (m > n)
		return -1;
	if (m == 0 || m == n)
		return 0;
	return subproof(leaves, n, m, 1, proof, 0);
}

int sbx_merkle_consistency_ok(uint64_t m, uint64_t n, const unsigned char old_root[32],
			      const unsigned char new_root[32], const unsigned char (*proof)[32],
			      size_t proof_len)
{
	unsigned char fr[32], sr[32];
	uint64_t fn, sn;
	size_t i = 0;

	if (m > n || proof_len > SBX_MERKLE_MAX_PATH)
		return 0;
	if (m == n)
		return proof_len == 0 && sodium_memcmp(old_root, new_root, 32) == 0;
	if (m == 0)
		return proof_len == 0;
	/* 1. An empty proof cannot prove 0 < m < n. */
	if (proof_len == 0)
		return 0;
	/* 2. When m is a power of two the old root is the proof's first
	 * value (prepended, not sent). 5. fr = sr = the first value. */
	if ((m & (m - 1)) == 0) {
		memcpy(fr, old_root, 32);
	} else {
		memcpy(fr, proof[0], 32);
		i = 1;
	}
	memcpy(sr, fr, 32);
	/* 3. */
	fn = m - 1;
	sn = n - 1;
	/* 4. */
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	/* 6. */
	for (; i < proof_len; i++) {
		if (sn == 0)
			return 0;
		if ((fn & 1) || fn == sn) {
			sbx_merkle_node(proof[i], fr, fr);
			sbx_merkle_node(proof[i], sr, sr);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			sbx_merkle_node(sr, proof[i], sr);
		}
		fn >>= 1;
		sn >>= 1;
	}
	/* 7. */
	return sn == 0 && sodium_memcmp(fr, old_root, 32) == 0 && sodium_memcmp(sr, new_root, 32) == 0;
}
