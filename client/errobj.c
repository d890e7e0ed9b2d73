/* SPDX-License-Identifier: ISC */
#include "errobj.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "outcome.h"

/* Longest "message" taken from the last stderr line (bytes). */
#define LAST_LINE_MAX 512

static json_t *make(const char *type, json_t *message, json_t *line, json_t *traceback)
{
	return json_pack("{s:s,s:o,s:o,s:o}", "type", type, "message", message ? message : json_null(),
			 "line", line ? line : json_null(), "traceback", traceback ? traceback : json_null());
}

/* The last non-empty line of stderr, at most LAST_LINE_MAX bytes, cut at a
 * UTF-8 character boundary (the helper already made stderr valid UTF-8). */
static json_t *last_line(const char *s)
{
	const char *end, *begin;
	size_t n;

	if (s == NULL)
		return NULL;
	end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	begin = end;
	while (begin > s && begin[-1] != '\n')
		begin--;
	if (begin == end)
		return NULL;
	n = (size_t)(end - begin);
	if (n > LAST_LINE_MAX) {
		n = LAST_LINE_MAX;
		while (n > 0 && ((unsigned char)begin[n] & 0xC0) == 0x80)
			n--;
	}
	return json_stringn(begin, n);
}

/* "wall-time limit of 2000 ms reached": the limit of the result's outcome
 * (outcome and limit tables), with its value from the result's limits. */
static json_t *limit_message(json_t *res)
{
	const char *name = json_string_value(json_object_get(res, "outcome"));
	const struct sbx_outcome_def *o = name ? sbx_outcome_by_name(name) : NULL;
	const struct sbx_limit_def *l;
	json_t *v;
	char buf[128];

	if (o == NULL || o->limit == SBX_LIMIT_NONE)
		return NULL;
	l = &sbx_limit_defs[o->limit];
	v = json_object_get(json_object_get(res, "limits"), l->json);
	if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%s of %" JSON_INTEGER_FORMAT "%s%s reached", l->what, json_integer_value(v),
			 sbx_unit_name(l->unit)[0] ? " " : "", sbx_unit_name(l->unit));
	else
		snprintf(buf, sizeof(buf), "%s reached", l->what);
	return json_string(buf);
}

json_t *result_error(json_t *res)
{
	const char *outcome = json_string_value(json_object_get(res, "outcome"));
	json_t *tb = json_object_get(res, "traceback");
	json_t *old = json_object_get(res, "error");
	json_t *msg;

	if (outcome == NULL || strcmp(outcome, "ok") == 0)
		return json_null();
	if (strcmp(outcome, "sandbox_error") == 0)
		return make("sandbox_error", json_is_string(old) ? json_incref(old) : NULL, NULL, NULL);
	if (json_is_object(tb) && json_is_string(json_object_get(tb, "type")))
		return make(json_string_value(json_object_get(tb, "type")),
			    json_incref(json_object_get(tb, "message")), json_incref(json_object_get(tb, "line")),
			    json_incref(json_object_get(tb, "text")));
	msg = limit_message(res);
	if (msg == NULL && strcmp(outcome, "signal") == 0) {
		const char *name = json_string_value(json_object_get(res, "signal_name"));
		char buf[64];

		snprintf(buf, sizeof(buf), "killed by signal SIG%s", name ? name : "?");
		msg = json_string(buf);
	}
	if (msg == NULL)
		msg = last_line(json_string_value(json_object_get(res, "stderr")));
	return make(outcome, msg, NULL, NULL);
}

int result_set_error(json_t *res)
{
	json_t *e = result_error(res);

	return e == NULL ? -1 : json_object_set_new(res, "error", e);
}
