/* SPDX-License-Identifier: ISC */
/*
 * C2SP signed-note checkpoints: formatting, signing, parsing, verifying.
 * A note read back may have been edited, so parsing checks every line's
 * shape before trusting the numbers in it.
 */
#include "checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EM_DASH "\xe2\x80\x94 " /* U+2014 and a space: signature line prefix */
#define SIG_ED25519 0x01        /* C2SP signature type of Ed25519 */

void sbx_note_key_id(const char *name, const unsigned char *pk, unsigned char id[4])
{
	crypto_hash_sha256_state st;
	unsigned char h[32];
	const unsigned char sep[2] = {0x0a, SIG_ED25519};

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)name, strlen(name));
	crypto_hash_sha256_update(&st, sep, 2);
	crypto_hash_sha256_update(&st, pk, crypto_sign_PUBLICKEYBYTES);
	crypto_hash_sha256_final(&st, h);
	memcpy(id, h, 4);
}

/* Key names: non-empty, no spaces, no '+', no controls (signed-note). */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > SBX_ORIGIN_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c == 0x7f || c == '+')
			return 0;
	}
	return 1;
}

static int body(const struct sbx_checkpoint *cp, char *out, size_t outlen)
{
	char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_ORIGINAL)];

	sodium_bin2base64(b64, sizeof(b64), cp->root, 32, sodium_base64_VARIANT_ORIGINAL);
	return snprintf(out, outlen, "%s\n%" PRIu64 "\n%s\n", cp->origin, cp->size, b64);
}

int sbx_checkpoint_sign(const struct sbx_checkpoint *cp, const unsigned char *sk, char *out)
{
	unsigned char blob[4 + crypto_sign_BYTES];
	char b64[sodium_base64_ENCODED_LEN(sizeof(blob), sodium_base64_VARIANT_ORIGINAL)];
	const unsigned char *pk = sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES;
	int n, m;

	if (!name_ok(cp->origin, strnlen(cp->origin, sizeof(cp->origin))))
		return -1;
	n = body(cp, out, SBX_NOTE_MAX);
	if (n < 0 || n >= SBX_NOTE_MAX)
		return -1;
	sbx_note_key_id(cp->origin, pk, blob);
	if (crypto_sign_detached(blob + 4, NULL, (const unsigned char *)out, (unsigned long long)n, sk) != 0)
		return -1;
	sodium_bin2base64(b64, sizeof(b64), blob, sizeof(blob), sodium_base64_VARIANT_ORIGINAL);
	m = snprintf(out + n, SBX_NOTE_MAX - (size_t)n, "\n" EM_DASH "%s %s\n", cp->origin, b64);
	if (m < 0 || m >= SBX_NOTE_MAX - n)
		return -1;
	return n + m;
}

static int fail(char *err, size_t errlen, const char *why)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "checkpoint: %s", why);
	return -1;
}

/* Next line of [*p, end) without its newline; -1 if there is no newline. */
static int line(const char **p, const char *end, const char **s, size_t *n)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (nl == NULL)
		return -1;
	*s = *p;
	*n = (size_t)(nl - *p);
	*p = nl + 1;
	return 0;
}

static int parse_body(const char *text, size_t len, struct sbx_checkpoint *cp,
		      char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *s;
	char num[24], b64[64];
	size_t n, binlen;
	char *e;

	if (line(&p, end, &s, &n) < 0 || !name_ok(s, n))
		return fail(err, errlen, "bad origin line");
	memcpy(cp->origin, s, n);
	cp->origin[n] = '\0';
	if (line(&p, end, &s, &n) < 0 || n == 0 || n >= sizeof(num) ||
	    strspn(s, "0123456789") < n || (n > 1 && s[0] == '0'))
		return fail(err, errlen, "bad tree size line");
	memcpy(num, s, n);
	num[n] = '\0';
	errno = 0;
	cp->size = strtoull(num, &e, 10);
	if (errno != 0)
		return fail(err, errlen, "tree size out of range");
	if (line(&p, end, &s, &n) < 0 || n >= sizeof(b64))
		return fail(err, errlen, "bad root hash line");
	memcpy(b64, s, n);
	b64[n] = '\0';
	if (sodium_base642bin(cp->root, 32, b64, n, NULL, &binlen, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 || binlen != 32)
		return fail(err, errlen, "root hash is not 32 bytes of base64");
	/* Extension lines may follow; they are signed with the rest. */
	return 0;
}

int sbx_checkpoint_parse(const char *note, size_t len, struct sbx_checkpoint *cp,
			 char *err, size_t errlen)
{
	size_t i;

	memset(cp, 0, sizeof(*cp));
	for (i = len; i > 1; i--)
		if (note[i - 1] == '\n' && note[i - 2] == '\n')
			return parse_body(note, i - 1, cp, err, errlen);
	return fail(err, errlen, "no signature block");
}

int sbx_checkpoint_open(const char *note, size_t len, const unsigned char *pk,
			struct sbx_checkpoint *cp, char *err, size_t errlen)
{
	const char *sep = NULL, *p, *end = note + len, *s;
	unsigned char want_id[4], blob[4 + crypto_sign_BYTES];
	size_t i, n, blen, tlen, dl = sizeof(EM_DASH) - 1;
	int found = 0;

	memset(cp, 0, sizeof(*cp));
	if (len == 0 || len >= SBX_NOTE_MAX || memchr(note, '\0', len) != NULL)
		return fail(err, errlen, "empty, too long or holds NUL");
	for (i = 0; i < len; i++)
		if ((unsigned char)note[i] < 0x20 && note[i] != '\n')
			return fail(err, errlen, "control character in note");
	/* The text ends at the last blank line (signed-note). */
	for (i = len - 1; i > 0; i--) {
		if (note[i] == '\n' && note[i - 1] == '\n') {
			sep = note + i;
			break;
		}
	}
	if (sep == NULL)
		return fail(err, errlen, "no signature block");
	tlen = (size_t)(sep - note);
	if (parse_body(note, tlen, cp, err, errlen) < 0)
		return -1;
	sbx_note_key_id(cp->origin, pk, want_id);
	p = sep + 1;
	while (p < end) {
		const char *name, *sp;
		if (line(&p, end, &s, &n) < 0 || n < dl || memcmp(s, EM_DASH, dl) != 0)
			return fail(err, errlen, "malformed signature line");
		name = s + dl;
		sp = memchr(name, ' ', n - dl);
		if (sp == NULL)
			return fail(err, errlen, "malformed signature line");
		if ((size_t)(sp - name) != strlen(cp->origin) ||
		    memcmp(name, cp->origin, (size_t)(sp - name)) != 0)
			continue; /* another signer (a witness): not ours to judge */
		if (sodium_base642bin(blob, sizeof(blob), sp + 1, (size_t)(s + n - sp - 1), NULL,
				      &blen, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
		    blen != sizeof(blob))
			return fail(err, errlen, "signature is not base64 of key id and signature");
		if (memcmp(blob, want_id, 4) != 0)
			continue;
		found = 1;
		break;
	}
	if (!found)
		return fail(err, errlen, "not signed by this key (no signature line with its key id)");
	if (crypto_sign_verify_detached(blob + 4, (const unsigned char *)note, tlen, pk) != 0)
		return fail(err, errlen, "signature does not verify");
	return 0;
}
