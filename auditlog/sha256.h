/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 over several parts, for the audit log's hot paths: record
 * leaves, chain links, Merkle nodes, code texts. libsodium's
 * implementation by default (portable C, what the recorder links); a
 * program may install a faster one before it starts any thread: sbx-audit
 * installs OpenSSL's libcrypto, which uses the CPU's SHA extensions
 * (audit/sha256_ossl.c). The setuid helper never links libcrypto.
 */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H
#include <stddef.h>

typedef void sbx_sha256_fn(unsigned char out[32], const unsigned char *const *p,
			   const size_t *n, int k);

/* SHA-256 of the concatenation of k parts (p[i], n[i] bytes) into out. */
void sbx_sha256_parts(unsigned char out[32], const unsigned char *const *p,
		      const size_t *n, int k);

/* SHA-256 of one buffer (p may be NULL when n is 0). */
void sbx_sha256(unsigned char out[32], const void *p, size_t n);

/* Use fn for every later hash (NULL: libsodium's again). Not thread-safe:
 * call it once, at start-up. fn must give the same digests (a unit test
 * compares them). */
void sbx_sha256_use(sbx_sha256_fn *fn);

#endif
