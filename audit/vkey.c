/* SPDX-License-Identifier: ISC */
/* C2SP verifier keys (vkey.h). */
#include "vkey.h"

#include <stdio.h>
#include <string.h>

#include "checkpoint.h"

#define ALG_ED25519 0x01

int vkey_format(const char *name, const unsigned char *pk, char *out)
{
	unsigned char id[4], key[1 + crypto_sign_PUBLICKEYBYTES];
	char b64[sodium_base64_ENCODED_LEN(sizeof(key), sodium_base64_VARIANT_ORIGINAL)];

	if (!sbx_note_name_ok(name))
		return -1;
	sbx_note_key_id(name, pk, id);
	key[0] = ALG_ED25519;
	memcpy(key + 1, pk, crypto_sign_PUBLICKEYBYTES);
	sodium_bin2base64(b64, sizeof(b64), key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	snprintf(out, VKEY_MAX, "%s+%02x%02x%02x%02x+%s", name, id[0], id[1], id[2], id[3], b64);
	return 0;
}

static int fail(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "verifier key: %s (want NAME+HASH+BASE64, as sbx-audit key "
		 "--verifier prints)", why);
	return -1;
}

int vkey_parse(const char *s, size_t len, char *name, unsigned char *pk, char *err,
	       size_t errlen)
{
	const char *p1, *p2;
	unsigned char id[4], want[4], key[1 + crypto_sign_PUBLICKEYBYTES + 1];
	size_t n, bin = 0;

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	/* split at the first two '+' (names have none; base64 may) */
	p1 = len ? memchr(s, '+', len) : NULL;
	p2 = p1 ? memchr(p1 + 1, '+', (size_t)(s + len - p1 - 1)) : NULL;
	if (p2 == NULL)
		return fail(err, errlen, "not three parts joined by '+'");
	n = (size_t)(p1 - s);
	if (n == 0 || n > SBX_ORIGIN_MAX)
		return fail(err, errlen, "bad name");
	memcpy(name, s, n);
	name[n] = '\0';
	if (!sbx_note_name_ok(name))
		return fail(err, errlen, "the name is not a valid key name");
	if (p2 - p1 - 1 != 8 || sodium_hex2bin(id, 4, p1 + 1, 8, NULL, &bin, NULL) != 0 || bin != 4)
		return fail(err, errlen, "the hash is not 8 hex digits");
	if (sodium_base642bin(key, sizeof(key), p2 + 1, (size_t)(s + len - p2 - 1), NULL, &bin, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    bin != 1 + crypto_sign_PUBLICKEYBYTES || key[0] != ALG_ED25519)
		return fail(err, errlen, "the key is not base64 of 0x01 and an Ed25519 public key");
	memcpy(pk, key + 1, crypto_sign_PUBLICKEYBYTES);
	sbx_note_key_id(name, pk, want);
	if (memcmp(id, want, 4) != 0)
		return fail(err, errlen, "the hash does not match the name and key");
	return 0;
}
