/* SPDX-License-Identifier: ISC */
/*
 * UTF-8 validation for text that leaves the audit log as JSON or on a
 * terminal: record strings are bytes from the caller and the payload, and
 * JSON (jansson) refuses invalid UTF-8 outright.
 */
#include "auditdb.h"

#include <stdlib.h>
#include <string.h>

static int cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

size_t sbx_audit_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return n >= 2 && cont(s[1]) ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		/* E0: no overlongs; ED: no surrogates */
		unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
		unsigned char hi = c == 0xED ? 0x9F : 0xBF;
		return n >= 3 && s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		/* F0: no overlongs; F4: nothing above U+10FFFF */
		unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
		return n >= 4 && s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
	}
	return 0;
}

char *sbx_audit_utf8_clean(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;
	size_t i = 0;

	/* Worst case: every byte becomes the 3-byte U+FFFD. */
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	out = malloc(n * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	while (i < n) {
		size_t k = sbx_audit_utf8_seq(p + i, n - i);
		if (k == 0 || p[i] == '\0') {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, p + i, k);
		o += k;
		i += k;
	}
	*o = '\0';
	return out;
}
