/* SPDX-License-Identifier: ISC */
/* Ed25519 checkpoint cosignatures (cosign.h, c2sp.org/tlog-cosignature). */
#include "cosign.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

#define EM_DASH "\xe2\x80\x94 "
#define COSIG_ALG 0x04

void cosign_key_id(const char *name, const unsigned char pk[32], unsigned char id[4])
{
	crypto_hash_sha256_state st;
	unsigned char h[32], sep[2] = {'\n', COSIG_ALG};

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)name, strlen(name));
	crypto_hash_sha256_update(&st, sep, 2);
	crypto_hash_sha256_update(&st, pk, 32);
	crypto_hash_sha256_final(&st, h);
	memcpy(id, h, 4);
}

int cosign_vkey(const char *name, const unsigned char pk[32], char *out)
{
	unsigned char id[4], key[33];
	char b64[64];

	if (!sbx_note_name_ok(name))
		return -1;
	cosign_key_id(name, pk, id);
	key[0] = COSIG_ALG;
	memcpy(key + 1, pk, 32);
	sodium_bin2base64(b64, sizeof(b64), key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	snprintf(out, VKEY_MAX, "%s+%02x%02x%02x%02x+%s", name, id[0], id[1], id[2], id[3], b64);
	return 0;
}

/* The body of a note: up to and including the newline before the blank
 * line that starts the signatures; 0 if there is none. */
static size_t body_len(const char *note, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (note[i] == '\n' && note[i + 1] == '\n')
			return i + 1;
	return 0;
}

static unsigned char *message(const char *note, size_t blen, uint64_t t, size_t *mlen)
{
	char head[64];
	int h = snprintf(head, sizeof(head), "cosignature/v1\ntime %" PRIu64 "\n", t);
	unsigned char *m = malloc((size_t)h + blen);

	if (m == NULL)
		return NULL;
	memcpy(m, head, (size_t)h);
	memcpy(m + h, note, blen);
	*mlen = (size_t)h + blen;
	return m;
}

char *cosign_note(const char *note, size_t len, const char *name, const unsigned char *sk,
		  uint64_t t)
{
	unsigned char sig[4 + 8 + 64], *m;
	char b64[sizeof(sig) * 2], *out;
	size_t blen = body_len(note, len), mlen, nlen = strlen(name), olen;
	int k;

	if (blen == 0 || !sbx_note_name_ok(name) || t > INT64_MAX || note[len - 1] != '\n')
		return NULL;
	m = message(note, blen, t, &mlen);
	if (m == NULL)
		return NULL;
	cosign_key_id(name, sk + 32, sig);
	for (k = 0; k < 8; k++)
		sig[4 + k] = (unsigned char)(t >> (56 - 8 * k));
	crypto_sign_detached(sig + 12, NULL, m, mlen, sk);
	free(m);
	sodium_bin2base64(b64, sizeof(b64), sig, sizeof(sig), sodium_base64_VARIANT_ORIGINAL);
	olen = len + strlen(EM_DASH) + nlen + 1 + strlen(b64) + 2;
	out = malloc(olen);
	if (out == NULL)
		return NULL;
	snprintf(out, olen, "%.*s" EM_DASH "%s %s\n", (int)len, note, name, b64);
	return out;
}

int cosign_ok(const char *note, size_t len, const char *name, const unsigned char pk[32],
	      uint64_t *t)
{
	size_t blen = body_len(note, len), nlen = strlen(name), mlen, dl = strlen(EM_DASH);
	const char *p, *end = note + len;
	unsigned char id[4];

	if (blen == 0)
		return 0;
	cosign_key_id(name, pk, id);
	for (p = note + blen + 1; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		unsigned char sig[4 + 8 + 64 + 3], *m;
		size_t got = 0;
		const char *b;
		uint64_t ts = 0;
		int k, ok;

		if (n > dl + nlen + 1 && memcmp(p, EM_DASH, dl) == 0 && memcmp(p + dl, name, nlen) == 0 &&
		    p[dl + nlen] == ' ') {
			b = p + dl + nlen + 1;
			if (sodium_base642bin(sig, sizeof(sig), b, (size_t)(p + n - b), NULL, &got, NULL,
					      sodium_base64_VARIANT_ORIGINAL) == 0 &&
			    got == 76 && memcmp(sig, id, 4) == 0) {
				for (k = 0; k < 8; k++)
					ts = ts << 8 | sig[4 + k];
				m = message(note, blen, ts, &mlen);
				ok = m != NULL && ts <= INT64_MAX &&
				     crypto_sign_verify_detached(sig + 12, m, mlen, pk) == 0;
				free(m);
				if (ok) {
					*t = ts;
					return 1;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}
