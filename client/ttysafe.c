/* SPDX-License-Identifier: ISC */
#include "ttysafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t put_c1(unsigned char c, char *out)
{
	return (size_t)snprintf(out, 7, "\\u%04x", c);
}

size_t ttysafe_escape(struct ttysafe *s, const char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		if (s->lead_c2) {
			s->lead_c2 = false;
			if (c >= 0x80 && c <= 0x9f) { /* U+0080..U+009F, the C1 controls */
				o += put_c1(c, out + o);
				continue;
			}
			out[o++] = (char)0xc2;
		}
		if (c == 0xc2) {
			s->lead_c2 = true;
		} else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\b') || c == 0x7f) {
			out[o++] = '^';
			out[o++] = (char)(c ^ 0x40); /* ESC -> ^[, DEL -> ^? */
		} else {
			out[o++] = (char)c;
		}
	}
	return o;
}

size_t ttysafe_finish(struct ttysafe *s, char *out)
{
	if (!s->lead_c2)
		return 0;
	s->lead_c2 = false;
	out[0] = (char)0xc2;
	return 1;
}

char *ttysafe_name(const char *name)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(name), o = 0;
	char *out = malloc(n * 4 + 1);

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else if (c < 0x20 || c == 0x7f) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}
