/* SPDX-License-Identifier: ISC */
/*
 * C2SP signed-note checkpoints: formatting, signing, parsing, verifying.
 * A note read back may have been edited, so parsing checks every line's
 * shape before trusting the numbers in it.
 */
#include "checkpoint.h"
#include "textutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The code point of the valid UTF-8 sequence of len bytes at s. */
static uint32_t code_point(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t c = s[0] & lead_mask[len];
	size_t i;

	for (i = 1; i < len; i++)
		c = (c << 6) | (s[i] & 0x3f);
	return c;
}

/* Unicode White_Space: what signed-note means by "Unicode spaces" (and
 * what Go's unicode.IsSpace, used by its note package, tests). */
static int unicode_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

/* Key names (c2sp.org/signed-note): non-empty valid UTF-8 without Unicode
 * spaces or '+'; control characters cannot be in a note at all. At most
 * max bytes. */
static int name_ok_max(const char *s, size_t n, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, len;

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i += len) {
		uint32_t c;
		len = sbx_utf8_seq(u + i, n - i);
		if (len == 0)
			return 0;
		c = code_point(u + i, len);
		if (c < 0x20 || c == 0x7f || c == '+' || unicode_space(c))
			return 0;
	}
	return 1;
}

static int name_ok(const char *s, size_t n)
{
	return name_ok_max(s, n, SBX_ORIGIN_MAX);
}

int sbx_note_name_ok(const char *name)
{
	return name_ok(name, strlen(name));
}

void sbx_default_origin(char *out, size_t outlen)
{
	char host[SBX_ORIGIN_MAX + 1] = "";

	if (gethostname(host, sizeof(host) - 5) < 0 || !name_ok(host, strlen(host)))
		snprintf(host, sizeof(host), "localhost");
	snprintf(out, outlen, "%s/sbx", host);
}

int sbx_checkpoint_syslog(const char *note, char *out, size_t outlen)
{
	struct sbx_checkpoint cp;
	size_t len = strlen(note), need = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	int n;

	if (sbx_checkpoint_parse(note, len, &cp, NULL, 0) < 0)
		return -1;
	n = snprintf(out, outlen, "checkpoint size=%" PRIu64 " note=", cp.size);
	if (n < 0 || (size_t)n + need > outlen)
		return -1;
	sodium_bin2base64(out + n, outlen - (size_t)n, (const unsigned char *)note, len,
			  sodium_base64_VARIANT_ORIGINAL);
	return 0;
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

/* Valid UTF-8 without control characters other than newline (signed-note). */
static int text_ok(const char *note, size_t len)
{
	const unsigned char *u = (const unsigned char *)note;
	size_t i, l;

	for (i = 0; i < len; i += l) {
		l = sbx_utf8_seq(u + i, len - i);
		if (l == 0 || (l == 1 && ((u[i] < 0x20 && u[i] != '\n') || u[i] == 0x7f)))
			return 0;
	}
	return 1;
}

int sbx_checkpoint_open(const char *note, size_t len, const unsigned char *pk,
			struct sbx_checkpoint *cp, char *err, size_t errlen)
{
	const char *sep = NULL, *p, *end = note + len, *s;
	unsigned char want_id[4], blob[4 + crypto_sign_BYTES];
	unsigned char other[4 + crypto_sign_BYTES + 64];
	size_t i, n, blen, tlen, dl = sizeof(EM_DASH) - 1;
	int found = 0, nsig = 0;

	memset(cp, 0, sizeof(*cp));
	if (len == 0 || len > SBX_NOTE_READ_MAX || memchr(note, '\0', len) != NULL)
		return fail(err, errlen, "empty, too long or holds NUL");
	if (!text_ok(note, len))
		return fail(err, errlen, "not UTF-8, or a control character other than newline");
	/* The text ends at the last blank line (signed-note). */
	for (i = len - 1; i > 0; i--) {
		if (note[i] == '\n' && note[i - 1] == '\n') {
			sep = note + i;
			break;
		}
	}
	if (sep == NULL || note[len - 1] != '\n' || sep + 1 == end)
		return fail(err, errlen, "no signature block");
	tlen = (size_t)(sep - note);
	if (parse_body(note, tlen, cp, err, errlen) < 0)
		return -1;
	sbx_note_key_id(cp->origin, pk, want_id);
	p = sep + 1;
	while (p < end) {
		const char *name, *sp;
		int ours;
		if (line(&p, end, &s, &n) < 0 || n < dl || memcmp(s, EM_DASH, dl) != 0)
			return fail(err, errlen, "malformed signature line");
		if (++nsig > SBX_NOTE_MAX_SIGS)
			return fail(err, errlen, "more than 100 signature lines");
		name = s + dl;
		sp = memchr(name, ' ', n - dl);
		/* every line must be well formed, whoever signed it */
		if (sp == NULL || !name_ok_max(name, (size_t)(sp - name), n))
			return fail(err, errlen, "malformed signature line (key name)");
		ours = (size_t)(sp - name) == strlen(cp->origin) &&
		       memcmp(name, cp->origin, (size_t)(sp - name)) == 0;
		if (sodium_base642bin(other, sizeof(other), sp + 1, (size_t)(s + n - sp - 1), NULL,
				      &blen, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 || blen < 5) {
			if (!ours && (size_t)(s + n - sp - 1) > sodium_base64_ENCODED_LEN(sizeof(other),
					sodium_base64_VARIANT_ORIGINAL))
				continue; /* another scheme's long signature: not ours to judge */
			return fail(err, errlen, "signature is not base64 of key id and signature");
		}
		if (!ours || found || blen != sizeof(blob) || memcmp(other, want_id, 4) != 0)
			continue; /* another signer (a witness), or another key of this name */
		memcpy(blob, other, sizeof(blob));
		found = 1;
	}
	if (!found)
		return fail(err, errlen, "not signed by this key (no signature line with its key id)");
	if (crypto_sign_verify_detached(blob + 4, (const unsigned char *)note, tlen, pk) != 0)
		return fail(err, errlen, "signature does not verify");
	return 0;
}
