/* SPDX-License-Identifier: ISC */
#include "textutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t sbx_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* E0: no overlongs; ED: no surrogates */
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
		unsigned char hi = c == 0xed ? 0x9f : 0xbf;
		return n >= 3 && s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* F0: no overlongs; F4: nothing above U+10FFFF */
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
		return n >= 4 && s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
	}
	return 0;
}

char *sbx_utf8_sanitize(const char *in, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	char *out, *o;
	size_t i = 0;

	/* worst case: every byte becomes the 3-byte U+FFFD */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	out = malloc(len * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	while (i < len) {
		size_t k = sbx_utf8_seq(p + i, len - i);
		if (k == 0 || p[i] == '\0') {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, p + i, k);
			o += k;
			i += k;
		}
	}
	*o = '\0';
	return out;
}

static int suffix(const char *name, const char *s)
{
	size_t a = strlen(name), b = strlen(s);
	return a >= b && strcasecmp(name + a - b, s) == 0;
}

const char *sbx_media_type(const char *name, const unsigned char *h, size_t n)
{
	if (n >= 8 && memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && memcmp(h, "\xff\xd8\xff", 3) == 0)
		return "image/jpeg";
	if (n >= 6 && (memcmp(h, "GIF87a", 6) == 0 || memcmp(h, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 5 && memcmp(h, "%PDF-", 5) == 0)
		return "application/pdf";
	if (n >= 4 && memcmp(h, "PK\x03\x04", 4) == 0)
		return "application/zip";
	if (n >= 2 && memcmp(h, "\x1f\x8b", 2) == 0)
		return "application/gzip";
	if (suffix(name, ".svg"))
		return "image/svg+xml";
	if (suffix(name, ".csv"))
		return "text/csv";
	if (suffix(name, ".json"))
		return "application/json";
	if (suffix(name, ".html") || suffix(name, ".htm"))
		return "text/html";
	if (suffix(name, ".md"))
		return "text/markdown";
	if (suffix(name, ".txt") || suffix(name, ".log"))
		return "text/plain";
	return "application/octet-stream";
}

void sbx_put_pctpath(FILE *f, const char *p)
{
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch <= ' ' || ch > '~' || ch == '%')
			fprintf(f, "%%%02X", ch);
		else
			fputc(ch, f);
	}
}
