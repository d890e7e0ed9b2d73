/* SPDX-License-Identifier: ISC */
#include "errobj.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hint.h"
#include "limit.h"
#include "outcome.h"

/* Longest "message" taken from the last stderr line (bytes). */
#define LAST_LINE_MAX 512

/* The option of `sbx run` that lowered limit id in this run, or NULL (the
 * policy's value). */
static const char *asked(const struct run_opts *o, enum sbx_limit id)
{
	if (o == NULL)
		return NULL;
	switch (id) {
	case SBX_LIMIT_WALL_TIME: return o->timeout_ms != 0 ? "--timeout" : NULL;
	case SBX_LIMIT_MEMORY: return o->memory_bytes != 0 ? "--memory" : NULL;
	case SBX_LIMIT_PIDS: return o->pids != 0 ? "--pids" : NULL;
	default: return NULL;
	}
}

/* The limits table's row whose JSON key is json, or NULL. */
static const struct sbx_limit_def *limit_by_json(const char *json)
{
	for (size_t i = 0; i < SBX_LIMIT_N; i++)
		if (strcmp(sbx_limit_defs[i].json, json) == 0)
			return &sbx_limit_defs[i];
	return NULL;
}

static bool limit_value(json_t *res, const struct run_opts *o, const struct sbx_limit_def *d, char *buf, size_t len)
{
	json_t *v = json_object_get(json_object_get(res, "limits"), d->json);
	const char *policy = json_string_value(json_object_get(res, "policy"));
	const char *option = asked(o, d->id);
	char val[32];

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	sbx_limit_format(d, (uint64_t)json_integer_value(v), val, sizeof(val));
	if (option != NULL)
		snprintf(buf, len, "%s (%s)", val, option);
	else
		snprintf(buf, len, "%s (policy %s)", val, policy ? policy : "?");
	return true;
}

bool result_limit_value(json_t *res, const struct run_opts *o, const char *limit_key, char *buf, size_t len)
{
	const struct sbx_limit_def *d = limit_by_json(limit_key);

	return d != NULL && limit_value(res, o, d, buf, len);
}

/* The limit of the result's outcome (outcome and limit tables). */
bool result_limit_message(json_t *res, const struct run_opts *o, char *buf, size_t len)
{
	const char *name = json_string_value(json_object_get(res, "outcome"));
	const struct sbx_outcome_def *oc = name ? sbx_outcome_by_name(name) : NULL;
	const struct sbx_limit_def *d;
	char val[128];

	if (oc == NULL || oc->limit == SBX_LIMIT_NONE)
		return false;
	d = &sbx_limit_defs[oc->limit];
	if (limit_value(res, o, d, val, sizeof(val)))
		snprintf(buf, len, "%s of %s reached", d->what, val);
	else
		snprintf(buf, len, "%s reached", d->what);
	return true;
}

static json_t *make(const char *code, const char *type, json_t *message, json_t *line, json_t *traceback,
		    json_t *hint)
{
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "code", code, "type", type,
			 "message", message ? message : json_null(), "hint", hint ? hint : json_null(),
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

/* A hint for a traceback sbx recognises, or NULL. */
static json_t *traceback_hint(json_t *tb, const char *image)
{
	const char *type = json_string_value(json_object_get(tb, "type"));
	const char *msg = json_string_value(json_object_get(tb, "message"));
	char mod[128], buf[512];
	const char *q;

	/* "No module named 'polars'" (Python's import system) */
	if (type == NULL || msg == NULL || strcmp(type, "ModuleNotFoundError") != 0 ||
	    strncmp(msg, "No module named '", 17) != 0 || (q = strchr(msg + 17, '\'')) == NULL ||
	    (size_t)(q - msg - 17) >= sizeof(mod))
		return NULL;
	memcpy(mod, msg + 17, (size_t)(q - msg - 17));
	mod[q - msg - 17] = '\0';
	return hint_missing_module(mod, image, buf, sizeof(buf)) ? json_string(buf) : NULL;
}

json_t *result_error(json_t *res, const struct run_opts *o)
{
	const char *outcome = json_string_value(json_object_get(res, "outcome"));
	json_t *tb = json_object_get(res, "traceback");
	json_t *old = json_object_get(res, "error");
	const char *tbtext = json_string_value(json_object_get(tb, "text"));
	char buf[256];

	if (outcome == NULL || strcmp(outcome, "ok") == 0)
		return json_null();
	if (strcmp(outcome, "sandbox_error") == 0)
		return make("sandbox_error", "sandbox_error", json_is_string(old) ? json_incref(old) : NULL, NULL,
			    NULL, NULL);
	/* a limit leads, the traceback says where the program was */
	if (result_limit_message(res, o, buf, sizeof(buf)))
		return make(outcome, outcome, json_string(buf), NULL, tbtext ? json_string(tbtext) : NULL, NULL);
	if (json_is_object(tb) && json_is_string(json_object_get(tb, "type")))
		return make(outcome, json_string_value(json_object_get(tb, "type")),
			    json_incref(json_object_get(tb, "message")), json_incref(json_object_get(tb, "line")),
			    json_incref(json_object_get(tb, "text")),
			    traceback_hint(tb, json_string_value(json_object_get(json_object_get(res, "environment"), "image"))));
	if (strcmp(outcome, "signal") == 0) {
		const char *name = json_string_value(json_object_get(res, "signal_name"));

		snprintf(buf, sizeof(buf), "killed by signal SIG%s", name ? name : "?");
		return make(outcome, outcome, json_string(buf), NULL, NULL, NULL);
	}
	return make(outcome, outcome, last_line(json_string_value(json_object_get(res, "stderr"))), NULL, NULL,
		    NULL);
}

int result_set_error(json_t *res, const struct run_opts *o)
{
	json_t *e = result_error(res, o);

	return e == NULL ? -1 : json_object_set_new(res, "error", e);
}
