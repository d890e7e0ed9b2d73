/*
 * sbx-audit hashes with OpenSSL's SHA-256, which uses the CPU's SHA
 * extensions (about ten times libsodium's portable code): verifying a log
 * of a million records is mostly leaf hashing. Only sbx-audit links
 * libcrypto; the setuid helper keeps libsodium. If OpenSSL cannot provide
 * SHA-256 (a restricted provider configuration), libsodium stays.
 */
#include "fastsha.h"

#include <openssl/evp.h>
#include <stdlib.h>

#include "sha256.h"

static EVP_MD *md;
static _Thread_local EVP_MD_CTX *ctx; /* reused: one allocation per thread */

static void openssl_sha256(unsigned char out[32], const unsigned char *const *p,
			   const size_t *n, int k)
{
	unsigned int len = 0;
	int i, ok;

	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		abort();
	ok = EVP_DigestInit_ex(ctx, md, NULL);
	for (i = 0; ok && i < k; i++)
		ok = EVP_DigestUpdate(ctx, p[i], n[i]);
	/* Cannot fail once SHA-256 was fetched; a digest that silently went
	 * wrong would make verify report tampering, so stop instead. */
	if (!ok || !EVP_DigestFinal_ex(ctx, out, &len) || len != 32)
		abort();
}

void fastsha_init(void)
{
	static const unsigned char abc[3] = "abc";
	static const unsigned char want[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde,
		0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
		0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
	const unsigned char *p[1] = {abc};
	size_t n[1] = {3};
	unsigned char got[32];
	int i, same = 1;

	md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (md == NULL)
		return;
	openssl_sha256(got, p, n, 1);
	for (i = 0; i < 32; i++)
		same &= got[i] == want[i];
	if (same)
		sbx_sha256_set(openssl_sha256);
}
