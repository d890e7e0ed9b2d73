/* SPDX-License-Identifier: ISC */
#include "errobj.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errcode.h"
#include "resultschema.h"
#include "textutil.h"
#include "units.h"

/* Longest "message" taken from the last stderr line (bytes). */
#define LAST_LINE_MAX 512

json_t *result_error_object(const char *code, const char *type, json_t *message, const char *hint)
{
	return json_pack("{s:s,s:o,s:s,s:o}", "code", code, "message", message ? message : json_null(),
			 "type", type ? type : code, "hint", hint ? json_string(hint) : json_null());
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

/* "wall-time limit of 30s reached (policy default)": the effective limit
 * of the result's limits, in the units a policy writes. */
static json_t *limit_message(json_t *res)
{
	static const struct {
		const char *outcome, *limit_key, *what;
		char unit; /* t: milliseconds, b: bytes, n: a count */
	} lim[] = {
		{"timeout", "wall_time_ms", "wall-time limit", 't'},
		{"cpu_limit", "cpu_time_ms", "CPU-time limit", 't'},
		{"memory_limit", "memory_bytes", "memory limit", 'b'},
		{"pids_limit", "pids", "process limit", 'n'},
		{"output_limit", "output_bytes", "output limit", 'b'},
		{"file_size", "file_size_bytes", "file size limit", 'b'},
	};
	const char *outcome = json_string_value(json_object_get(res, "outcome"));
	const char *policy = json_string_value(json_object_get(res, "policy"));
	json_t *limits = json_object_get(res, "limits");
	char buf[160], val[32];
	size_t i;

	for (i = 0; outcome != NULL && i < sizeof(lim) / sizeof(lim[0]); i++)
		if (strcmp(outcome, lim[i].outcome) == 0) {
			json_t *v = json_object_get(limits, lim[i].limit_key);
			uint64_t n = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;

			if (lim[i].unit == 't')
				sbx_format_duration_ms(n, val, sizeof(val));
			else if (lim[i].unit == 'b')
				sbx_format_size(n, val, sizeof(val));
			else
				snprintf(val, sizeof(val), "%" PRIu64, n);
			if (json_is_integer(v))
				snprintf(buf, sizeof(buf), "%s of %s reached (policy %s)", lim[i].what, val,
					 policy ? policy : "?");
			else
				snprintf(buf, sizeof(buf), "%s reached", lim[i].what);
			return json_string(buf);
		}
	return NULL;
}

json_t *result_error(json_t *res)
{
	const char *outcome = json_string_value(json_object_get(res, "outcome"));
	json_t *tb = json_object_get(res, "traceback");
	json_t *old = json_object_get(res, "error");
	const struct sbx_errcode *ec;
	json_t *msg;

	if (outcome == NULL || strcmp(outcome, "ok") == 0)
		return json_null();
	if (json_is_object(old) && json_is_string(json_object_get(old, "code")))
		return json_incref(old); /* already one (the retry loop's attempts) */
	if (strcmp(outcome, "sandbox_error") == 0)
		return result_error_object("setup", NULL, json_is_string(old) ? json_incref(old) : NULL, NULL);
	ec = sbx_errcode_of_outcome(outcome);
	/* the exception only when the program failed by itself; a limit's
	 * own message wins over the traceback it provoked (KeyboardInterrupt) */
	if (strcmp(outcome, "error") == 0 && json_is_object(tb) && json_is_string(json_object_get(tb, "type")))
		return result_error_object(ec ? ec->code : "error", json_string_value(json_object_get(tb, "type")),
					   json_incref(json_object_get(tb, "message")), NULL);
	msg = limit_message(res);
	if (msg == NULL && strcmp(outcome, "signal") == 0) {
		const char *name = json_string_value(json_object_get(res, "signal_name"));
		char buf[64];

		snprintf(buf, sizeof(buf), "killed by signal SIG%s", name ? name : "?");
		msg = json_string(buf);
	}
	if (msg == NULL)
		msg = last_line(json_string_value(json_object_get(res, "stderr")));
	return result_error_object(ec ? ec->code : "setup", NULL, msg, NULL);
}

json_t *result_of_failure(const char *code, const char *message)
{
	char *clean = sbx_utf8_sanitize(message, strlen(message));
	json_t *r = json_pack("{s:s,s:n,s:s,s:n,s:n,s:n,s:i,s:i,s:i,s:i,s:s,s:s,s:b,s:b,s:i,s:i,s:n,s:[],s:i,"
			      "s:n,s:n,s:i,s:s,s:n,s:n,s:[],s:n,s:[],s:o,s:n}",
			      "schema_version", result_schema_version(), "id", "outcome", "sandbox_error",
			      "exit_code", "signal", "signal_name", "wall_ms", 0, "cpu_ms", 0,
			      "memory_peak_bytes", 0, "pids_peak", 0, "stdout", "", "stderr", "",
			      "stdout_truncated", 0, "stderr_truncated", 0, "stdout_bytes", 0, "stderr_bytes", 0,
			      "traceback", "artifacts", "artifacts_skipped", 0, "policy", "limits", "attempt", 1,
			      "session", "", "language", "code_sha256", "inputs", "limit", "disk_full", "error",
			      result_error_object(code, NULL, json_string(clean ? clean : "out of memory"), NULL),
			      "audit");

	free(clean);
	return r;
}

int result_set_error(json_t *res)
{
	json_t *e = result_error(res);

	if (e == NULL || json_object_set_new(res, "error", e) < 0)
		return -1;
	return json_object_set_new(res, "schema_version", json_string(result_schema_version()));
}
