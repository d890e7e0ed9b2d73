/* SPDX-License-Identifier: ISC */
/* SHA-256 over several parts (see sha256.h). */
#include "sha256.h"

#include <sodium.h>

void sbx_sha256_parts(unsigned char out[32], const unsigned char *const *p,
		      const size_t *n, int k)
{
	crypto_hash_sha256_state st;
	int i;

	crypto_hash_sha256_init(&st);
	for (i = 0; i < k; i++)
		crypto_hash_sha256_update(&st, p[i], n[i]);
	crypto_hash_sha256_final(&st, out);
}
