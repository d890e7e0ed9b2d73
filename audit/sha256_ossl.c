/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 from OpenSSL's libcrypto for sbx-audit (never the setuid
 * helper: RULES.md). Its assembly uses the SHA-NI instructions where the
 * CPU has them, about five times libsodium's portable C on 64-byte chain
 * links and Merkle nodes, which is most of a verify.
 *
 * The SHA256_Init/Update/Final interface is deprecated since OpenSSL 3.0
 * in favour of EVP, but EVP's provider dispatch doubles the cost of a
 * two-block hash (measured: 330 ns against 160 ns on this machine), and
 * verify makes four of them per record. OpenSSL 3 still ships it; moving
 * to EVP is one function here.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "sha256.h"
#include "sha256_ossl.h"

static void ossl_parts(unsigned char out[32], const unsigned char *const *p,
		       const size_t *n, int k)
{
	SHA256_CTX c;
	int i;

	SHA256_Init(&c);
	for (i = 0; i < k; i++)
		SHA256_Update(&c, p[i], n[i]);
	SHA256_Final(out, &c);
}

void audit_sha256_fast(void)
{
	sbx_sha256_use(ossl_parts);
}
