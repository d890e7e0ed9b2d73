/* SPDX-License-Identifier: ISC */
/* SHA-256 over several parts (see sha256.h). */
#include "sha256.h"

#include <sodium.h>

static void sodium_parts(unsigned char out[32], const unsigned char *const *p,
			 const size_t *n, int k)
{
	crypto_hash_sha256_state st;
	int i;

	crypto_hash_sha256_init(&st);
	for (i = 0; i < k; i++)
		crypto_hash_sha256_update(&st, p[i], n[i]);
	crypto_hash_sha256_final(&st, out);
}

static sbx_sha256_fn *impl = sodium_parts;

void sbx_sha256_use(sbx_sha256_fn *fn)
{
	impl = fn != NULL ? fn : sodium_parts;
}

void sbx_sha256_parts(unsigned char out[32], const unsigned char *const *p,
		      const size_t *n, int k)
{
	impl(out, p, n, k);
}

void sbx_sha256(unsigned char out[32], const void *p, size_t n)
{
	static const unsigned char none[1];
	const unsigned char *part = p != NULL ? p : none;

	impl(out, &part, &n, 1);
}
