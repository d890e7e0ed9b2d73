/* SPDX-License-Identifier: ISC */
#include "ttysafe.h"

#include <stdio.h>

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
