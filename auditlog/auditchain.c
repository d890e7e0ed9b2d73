/* SPDX-License-Identifier: ISC */
/*
 * The hash chain and signatures of the audit log. Kept apart from the
 * SQLite code so that the writer and the verifier provably compute the
 * same bytes.
 */
#include "record.h"
#include "sha256.h"

#include <string.h>

#define CHAIN_TAG "sbx-chain-v1"
#define SIG_TAG "sbx-rec-v1"

void sbx_audit_leaf(const unsigned char *blob, size_t len, unsigned char leaf[32])
{
	/* RFC 6962 leaf prefix: a leaf can never be confused with an inner node
	 * of a Merkle tree built over the same leaves for checkpoints. */
	const unsigned char zero = 0x00;
	const unsigned char *p[2] = {&zero, blob};
	size_t n[2] = {1, len};

	sbx_sha256_parts(leaf, p, n, 2);
}

void sbx_audit_chain(const unsigned char prev[32], const unsigned char leaf[32],
		     unsigned char chain[32])
{
	const unsigned char *p[3] = {(const unsigned char *)CHAIN_TAG, prev, leaf};
	size_t n[3] = {sizeof(CHAIN_TAG) - 1, 32, 32};

	sbx_sha256_parts(chain, p, n, 3);
}

/* msg must hold SBX_ORIGIN_MAX + 64 bytes; returns the message length. */
static size_t sig_message(unsigned char *msg, const char *origin, size_t olen,
			  uint64_t seq, const unsigned char chain[32])
{
	size_t n = 0;
	int i;

	memcpy(msg, SIG_TAG, sizeof(SIG_TAG) - 1);
	n += sizeof(SIG_TAG) - 1;
	memcpy(msg + n, origin, olen);
	n += olen;
	msg[n++] = 0x00;
	for (i = 7; i >= 0; i--)
		msg[n++] = (unsigned char)(seq >> (8 * i));
	memcpy(msg + n, chain, 32);
	return n + 32;
}

int sbx_audit_sign(const unsigned char *sk, const char *origin, uint64_t seq,
		   const unsigned char chain[32],
		   unsigned char sig[crypto_sign_BYTES])
{
	unsigned char msg[SBX_ORIGIN_MAX + 64];
	size_t olen, mlen;

	if (origin == NULL)
		return -1;
	olen = strnlen(origin, SBX_ORIGIN_MAX + 1);
	if (olen == 0 || olen > SBX_ORIGIN_MAX)
		return -1;
	mlen = sig_message(msg, origin, olen, seq, chain);
	return crypto_sign_detached(sig, NULL, msg, mlen, sk) == 0 ? 0 : -1;
}

int sbx_audit_sig_ok(const unsigned char *pk, const char *origin,
		     size_t origin_len, uint64_t seq,
		     const unsigned char chain[32],
		     const unsigned char sig[crypto_sign_BYTES])
{
	unsigned char msg[SBX_ORIGIN_MAX + 64];
	size_t mlen;

	/* The signer never signs these, so they cannot verify. */
	if (origin_len == 0 || origin_len > SBX_ORIGIN_MAX ||
	    memchr(origin, '\0', origin_len) != NULL)
		return 0;
	mlen = sig_message(msg, origin, origin_len, seq, chain);
	return crypto_sign_verify_detached(sig, msg, mlen, pk) == 0;
}
