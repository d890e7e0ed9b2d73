/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 over several parts, for the audit log's hot paths: record
 * leaves, chain links and Merkle nodes (libsodium's implementation).
 */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H
#include <stddef.h>

/* SHA-256 of the concatenation of k parts (p[i], n[i] bytes) into out. */
void sbx_sha256_parts(unsigned char out[32], const unsigned char *const *p,
		      const size_t *n, int k);

#endif
