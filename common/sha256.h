/*
 * SHA-256 of the audit log's hot paths: record leaves, chain links and
 * Merkle nodes. libsodium's SHA-256 is portable C (about 130 MB/s here);
 * verifying a log of a million records spends most of its time in it. A
 * program may install a faster implementation of the same function
 * (sbx-audit uses OpenSSL's, which uses the CPU's SHA extensions); the
 * setuid helper and the recorder keep libsodium's. Digests are identical.
 */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H
#include <stddef.h>

/* SHA-256 of the concatenation of k parts (p[i], n[i] bytes) into out. */
typedef void (*sbx_sha256_fn)(unsigned char out[32], const unsigned char *const *p,
			      const size_t *n, int k);

/* Use fn from now on (NULL: libsodium). Call before any thread starts. */
void sbx_sha256_set(sbx_sha256_fn fn);
void sbx_sha256_parts(unsigned char out[32], const unsigned char *const *p,
		      const size_t *n, int k);

#endif
