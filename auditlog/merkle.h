/* SPDX-License-Identifier: ISC */
/*
 * RFC 6962 Merkle tree hashing over the audit log's leaves (the `leaf`
 * column, already SHA-256(0x00 || blob), RFC 6962 section 2.1). Interior
 * nodes are SHA-256(0x01 || left || right); the tree over n leaves splits
 * at the largest power of two below n. Inclusion proofs and their check
 * follow RFC 6962 section 2.1.1 and RFC 9162 section 2.1.3.2.
 */
#ifndef SBX_MERKLE_H
#define SBX_MERKLE_H
#include <stddef.h>
#include <stdint.h>

#define SBX_HASH_LEN 32
#define SBX_MERKLE_MAX_PATH 64 /* hashes in a proof: tree height for 2^64 leaves */

/* out = SHA-256(0x01 || l || r). */
void sbx_merkle_node(const unsigned char l[32], const unsigned char r[32], unsigned char out[32]);

/*
 * A tree grown one leaf at a time in O(log n) memory: stack[k] holds the
 * root of the perfect subtree of 2^k leaves when bit k of size is set.
 * Used by the verifier (root of every prefix in one pass) and the
 * checkpointer (stored between checkpoints as the frontier).
 */
struct sbx_mtree {
	uint64_t size;                 /* leaves pushed */
	unsigned char stack[64][32];
};

void sbx_mtree_init(struct sbx_mtree *t);
void sbx_mtree_push(struct sbx_mtree *t, const unsigned char leaf[32]);
/* MTH of the leaves pushed so far; SHA-256("") for none (RFC 6962 2.1). */
void sbx_mtree_root(const struct sbx_mtree *t, unsigned char root[32]);
/* The frontier as bytes: 8-byte big-endian size then 32 bytes per set bit
 * of size, lowest level first. buf must hold SBX_FRONTIER_MAX bytes; returns the
 * length. load returns 0, or -1 if the bytes are not such a frontier. */
#define SBX_FRONTIER_MAX (8 + 64 * 32)
size_t sbx_mtree_save(const struct sbx_mtree *t, unsigned char *buf);
int sbx_mtree_load(struct sbx_mtree *t, const unsigned char *buf, size_t len);

/* MTH(leaves[0..n)) by recursion; n may be 0. */
void sbx_merkle_root(const unsigned char (*leaves)[32], uint64_t n, unsigned char root[32]);

/*
 * Audit path of leaf m in the tree of the first n leaves (RFC 6962
 * PATH(m, D[n])), leaf side first. path must hold SBX_MERKLE_MAX_PATH
 * hashes. Returns the number of hashes, or -1 if m >= n.
 */
int sbx_merkle_inclusion_proof(const unsigned char (*leaves)[32], uint64_t n,
			       uint64_t m, unsigned char (*path)[32]);

/* 1 if path proves leaf is at index m of a tree of size n with this root,
 * else 0 (RFC 9162 2.1.3.2). */
int sbx_merkle_inclusion_ok(const unsigned char leaf[32], uint64_t m, uint64_t n,
			    const unsigned char (*path)[32], size_t path_len,
			    const unsigned char root[32]);

/*
 * Consistency proof between the tree of the first m leaves and that of the
 * first n (RFC 9162 section 2.1.4.1, PROOF(m, D[n]) = SUBPROOF(m, D[n],
 * true)), into proof (SBX_MERKLE_MAX_PATH hashes). 0 < m < n: the RFC's
 * proof; m == n or m == 0: the empty proof (every tree is consistent with
 * itself and extends the empty tree). Returns the number of hashes, or -1
 * if m > n.
 */
int sbx_merkle_consistency_proof(const unsigned char (*leaves)[32], uint64_t n, uint64_t m,
				 unsigned char (*proof)[32]);

/*
 * 1 if proof shows that the tree of size m with root old_root is a prefix
 * of the tree of size n with root new_root, else 0. 0 < m < n: RFC 9162
 * section 2.1.4.2, step by step (an empty proof fails); m == n: the proof
 * must be empty and the roots equal; m == 0: the proof must be empty.
 * m > n is never consistent.
 */
int sbx_merkle_consistency_ok(uint64_t m, uint64_t n, const unsigned char old_root[32],
			      const unsigned char new_root[32], const unsigned char (*proof)[32],
			      size_t proof_len);

#endif
