/* SPDX-License-Identifier: ISC */
#include "errobj.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errcode.h"
#include "hint.h"
#include "resultschema.h"
#include "textutil.h"
#include "units.h"
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
	/* lowered by the caller's cgroups (a Slurm job's --mem): say so, not the policy */
	json_t *t = json_object_get(json_object_get(res, "allocation"), "tightened");
	for (size_t i = 0; i < json_array_size(t); i++)
		if (json_is_string(json_array_get(t, i)) && strcmp(json_string_value(json_array_get(t, i)), d->key) == 0) {
			snprintf(buf, len, "%s (the caller's cgroup allocation)", val);
			return true;
		}
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
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "code", code, "type", type ? type : code,
			 "message", message ? message : json_null(), "hint", hint ? hint : json_null(),
			 "line", line ? line : json_null(), "traceback", traceback ? traceback : json_null());
}

json_t *result_error_object(const char *code, const char *type, json_t *message, const char *hint)
{
	return make(code, type, message, NULL, NULL, hint ? json_string(hint) : NULL);
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
	const struct sbx_errcode *ec;
	const char *code;
	char buf[256];

	if (outcome == NULL || strcmp(outcome, "ok") == 0)
		return json_null();
	/* sandbox_error: the supervisor's reason, with the code of a refusal
	 * ({code, message}, recorder/result.c) or alone (set-up) */
	if (strcmp(outcome, "sandbox_error") == 0 && json_is_object(old) && json_object_size(old) == 2) {
		const char *c = json_string_value(json_object_get(old, "code"));

		return make(sbx_errcode_find(c) != NULL ? c : "setup", NULL, json_incref(json_object_get(old, "message")),
			    NULL, NULL, NULL);
	}
	if (json_is_object(old) && json_is_string(json_object_get(old, "code")))
		return json_incref(old); /* already one (the retry loop's attempts) */
	if (strcmp(outcome, "sandbox_error") == 0)
		return make("setup", NULL, json_is_string(old) ? json_incref(old) : NULL, NULL, NULL, NULL);
	/* every other outcome has its row, code = the outcome's name */
	ec = sbx_errcode_of_outcome(outcome);
	code = ec != NULL ? ec->code : "setup";
	/* a limit leads, the traceback says where the program was */
	if (result_limit_message(res, o, buf, sizeof(buf)))
		return make(code, NULL, json_string(buf), NULL, tbtext ? json_string(tbtext) : NULL, NULL);
	if (json_is_object(tb) && json_is_string(json_object_get(tb, "type")))
		return make(code, json_string_value(json_object_get(tb, "type")),
			    json_incref(json_object_get(tb, "message")), json_incref(json_object_get(tb, "line")),
			    json_incref(json_object_get(tb, "text")),
			    traceback_hint(tb, json_string_value(json_object_get(json_object_get(res, "environment"), "image"))));
	if (strcmp(outcome, "signal") == 0) {
		const char *name = json_string_value(json_object_get(res, "signal_name"));

		snprintf(buf, sizeof(buf), "killed by signal SIG%s", name ? name : "?");
		return make(code, NULL, json_string(buf), NULL, NULL, NULL);
	}
	/* the program's own last word, else its exit status: never no message */
	json_t *msg = last_line(json_string_value(json_object_get(res, "stderr")));
	if (msg == NULL) {
		snprintf(buf, sizeof(buf), "the program exited with status %" JSON_INTEGER_FORMAT " and wrote nothing to stderr",
			 json_integer_value(json_object_get(res, "exit_code")));
		msg = json_string(buf);
	}
	return make(code, NULL, msg, NULL, NULL, NULL);
}

json_t *result_of_failure(const char *code, const char *message)
{
	char *clean = sbx_utf8_sanitize(message, strlen(message));
	json_t *r = json_pack("{s:s,s:n,s:s,s:n,s:n,s:n,s:i,s:i,s:i,s:i,s:s,s:s,s:b,s:b,s:i,s:i,s:n,s:[],s:i,"
			      "s:n,s:n,s:i,s:s,s:n,s:n,s:[],s:n,s:n,s:[],s:o,s:n}",
			      "schema_version", result_schema_version(), "id", "outcome", "sandbox_error",
			      "exit_code", "signal", "signal_name", "wall_ms", 0, "cpu_ms", 0,
			      "memory_peak_bytes", 0, "pids_peak", 0, "stdout", "", "stderr", "",
			      "stdout_truncated", 0, "stderr_truncated", 0, "stdout_bytes", 0, "stderr_bytes", 0,
			      "traceback", "artifacts", "artifacts_skipped", 0, "policy", "limits", "attempt", 1,
			      "session", "", "language", "code_sha256", "inputs", "stdin", "limit", "disk_full", "error",
			      result_error_object(code, NULL, json_string(clean ? clean : "out of memory"), NULL),
			      "audit");

	free(clean);
	return r;
}

int result_set_error(json_t *res, const struct run_opts *o)
{
	json_t *e = result_error(res, o);

	if (e == NULL || json_object_set_new(res, "error", e) < 0)
		return -1;
	return json_object_set_new(res, "schema_version", json_string(result_schema_version()));
}
