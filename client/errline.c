/* SPDX-License-Identifier: ISC */
#include "errline.h"

#include <string.h>

static void end_line(struct errline *e)
{
	static const char pfx[] = "sbx-helper: ";

	if (e->n >= sizeof(pfx) - 1 && memcmp(e->cur, pfx, sizeof(pfx) - 1) == 0) {
		memcpy(e->last, e->cur, e->n);
		e->last[e->n] = '\0';
		e->have = true;
	}
	e->n = 0;
}

void errline_feed(struct errline *e, const char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] == '\n')
			end_line(e);
		else if (e->n < sizeof(e->cur) - 1)
			e->cur[e->n++] = buf[i];
	}
}

void errline_finish(struct errline *e)
{
	if (e->n > 0)
		end_line(e);
}
