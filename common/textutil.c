/* SPDX-License-Identifier: ISC */
#include "textutil.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return p[0] != 0;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

char *sbx_utf8_sanitize(const char *in, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	char *out = malloc(len * 3 + 1), *o = out;
	size_t i = 0;

	if (out == NULL)
		return NULL;
	while (i < len) {
		size_t k = utf8_seq(p + i, len - i);
		if (k == 0) {
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
