/* SPDX-License-Identifier: ISC */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textutil.h"

size_t utf8_incomplete_tail(const char *buf, size_t len)
{
	size_t k;

	/* Look back at most 3 bytes for a lead byte whose sequence runs past
	 * the end. */
	for (k = 1; k <= 3 && k <= len; k++) {
		unsigned char c = (unsigned char)buf[len - k];
		size_t need;

		if ((c & 0xC0) == 0x80)
			continue; /* continuation: keep looking for the lead */
		if (c >= 0xF0 && c <= 0xF4)
			need = 4;
		else if (c >= 0xE0 && c <= 0xEF)
			need = 3;
		else if (c >= 0xC2 && c < 0xE0)
			need = 2;
		else
			return 0;
		return need > k ? k : 0;
	}
	return 0;
}

static void print_line(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	/* Even without memory a reader must get a line it can parse. */
	puts(text ? text : "{\"event\":\"error\",\"error\":\"out of memory\"}");
	fflush(stdout);
	free(text);
	json_decref(o);
}

void event_data(const char *name, struct utf8_carry *c, const char *buf, size_t len)
{
	size_t total = c->n + len, keep;
	char *joined = malloc(total + 1), *clean;

	if (joined == NULL)
		return;
	memcpy(joined, c->b, c->n);
	if (len > 0)
		memcpy(joined + c->n, buf, len);
	keep = len > 0 ? utf8_incomplete_tail(joined, total) : 0;
	c->n = keep;
	memcpy(c->b, joined + total - keep, keep);
	if (total - keep > 0) {
		clean = sbx_utf8_sanitize(joined, total - keep);
		if (clean != NULL)
			print_line(json_pack("{s:s,s:s}", "event", name, "data", clean));
		free(clean);
	}
	free(joined);
}

void event_emit(const char *name, json_t *members)
{
	json_t *o = json_pack("{s:s}", "event", name);

	if (o != NULL && members != NULL)
		json_object_update(o, members);
	json_decref(members);
	print_line(o);
}
