/* SPDX-License-Identifier: ISC */
/* execute_code: its schemas and the checking of its arguments. The checks
 * mirror the input schema so a client that validates and one that does not
 * get the same answer; values sbx run checks itself (language and policy
 * existence, session names) are left to it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "mcp.h"
#include "name.h"
#include "policy.h"
#include "outcome.h"
#include "proto.h"
#include "resultschema.h"

#define TIMEOUT_MAX_S ((double)SBX_ARG_TIMEOUT_MAX / 1000.0) /* the helper's bound (proto.h) */

/* The outcome names come from the outcome table (outcome.h). */
static char *tool_description(void)
{
	static const char fmt[] =
		"Run code in the sbx sandbox: no network, no capabilities, a private file "
		"system, and the CPU, memory, process and time limits of a policy. Every run "
		"is recorded in a signed audit log. Files the program writes to /out come "
		"back as artifacts (PNG and JPEG as images); `files` are readable under /in. "
		"The result has the outcome (%s), stdout, stderr and the "
		"parsed traceback; anything but ok is a tool error.%s";
	static const char ws[] =
		" Without a session, /work is a copy-on-write view of the user's workspace: what the "
		"code changes there comes back as a changeset (result.changeset: its files and diff); "
		"nothing on disk changes unless apply_changes applies it.";
	static char buf[sizeof(fmt) + sizeof(ws) + 256];
	char names[256], *p;

	snprintf(names, sizeof(names), "%s", sbx_outcome_names(false));
	for (p = strchr(names, ' '); p != NULL; p = strchr(p + 2, ' ')) {
		memmove(p + 1, p, strlen(p) + 1);
		*p = ',';
	}
	snprintf(buf, sizeof(buf), fmt, names, mcp_workspace() != NULL ? ws : "");
	return buf;
}

static json_t *input_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s,s:s}, s:{s:s,s:s,s:s}, s:{s:s,s:s}, s:{s:s,s:i,s:f,s:s},"
		" s:{s:s,s:i,s:{s:s,s:{s:{s:s,s:s,s:s}, s:{s:s,s:s}, s:{s:s,s:[s,s],s:s,s:s}},"
		"  s:[s,s], s:b}, s:s}, s:{s:s,s:s,s:s}},"
		" s:[s], s:b}",
		"type", "object", "properties",
		"code", "type", "string", "description", "The program text (at most 4 MiB).",
		"language", "type", "string", "default", "python", "description",
		"A language configured for sbx (python, sh, ...).",
		"policy", "type", "string", "description",
		"Policy to run under; default: the administrator's default policy.",
		"timeout", "type", "number", "exclusiveMinimum", 0, "maximum", TIMEOUT_MAX_S,
		"description",
		"Wall-clock limit in seconds (fractions allowed, 2.5 = 2500 ms); it can only "
		"tighten the policy's limit. Default: the policy's.",
		"files", "type", "array", "maxItems", MCP_FILES_MAX, "items", "type", "object",
		"properties", "name", "type", "string", "pattern", "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$",
		"description", "File name under /in.", "content", "type", "string", "description",
		"The file's content: text, or base64 with encoding base64.", "encoding", "type",
		"string", "enum", "utf-8", "base64", "default", "utf-8", "description",
		"How content is written.", "required", "name", "content", "additionalProperties", 0,
		"description", "Input files, put read-only under /in/NAME (at most 32, together "
		"at most the policy's input_size).",
		"session", "type", "string", "pattern", "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$", "description",
		"Session name: a live interpreter kept between calls with the same name "
		"(variables, imports, loaded data stay; started on first use, each call "
		"audited; sbx_session_stop and sbx_session_restart end it), and a directory "
		"mounted read-write at /work that persists. A call's files are under /in "
		"for that call only (keep what later calls need in a variable or /work).",
		"required", "code", "additionalProperties", 0);
}

/* The Tool of tools/list for revision rev (mcp.h: title and outputSchema
 * from 2025-06-18, annotations from 2025-03-26). */
json_t *mcp_tool_def(const struct mcp_revision *rev)
{
	json_t *t = json_pack("{s:s,s:s,s:o}", "name", "execute_code", "description", tool_description(),
			      "inputSchema", input_schema());

	if (t != NULL && rev->structured) {
		json_object_set_new(t, "title", json_string("Run code in the sbx sandbox"));
		json_object_set_new(t, "outputSchema", result_schema_inline());
	}
	if (t != NULL && rev->annotations)
		json_object_set_new(t, "annotations",
				    json_pack("{s:b,s:b,s:b,s:b}", "readOnlyHint", 0, "destructiveHint", 0,
					      "idempotentHint", 0, "openWorldHint", 0));
	return t;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A string member without NUL characters (JSON allows "\u0000"), or NULL. */
static const char *cstr(json_t *v)
{
	const char *s = json_string_value(v);

	return s != NULL && strlen(s) == json_string_length(v) ? s : NULL;
}

static int parse_file(json_t *f, size_t i, struct mcp_file *out, char *err, size_t errlen)
{
	const char *k, *enc = "utf-8";
	json_t *v, *content = NULL;
	char where[32];

	snprintf(where, sizeof(where), "files[%zu]", i);
	if (!json_is_object(f))
		return fail(err, errlen, "%s: not an object {name, content}", where);
	json_object_foreach(f, k, v) {
		if (strcmp(k, "name") == 0) {
			if (cstr(v) == NULL || !code_name_valid(cstr(v)))
				return fail(err, errlen,
					    "%s.name: not a file name ([A-Za-z0-9._-], 1-64 characters, "
					    "not starting with '.')", where);
			out->name = json_string_value(v);
		} else if (strcmp(k, "content") == 0) {
			if (!json_is_string(v))
				return fail(err, errlen, "%s.content: not a string", where);
			content = v;
		} else if (strcmp(k, "encoding") == 0) {
			enc = json_string_value(v);
			if (enc == NULL || (strcmp(enc, "utf-8") != 0 && strcmp(enc, "base64") != 0))
				return fail(err, errlen, "%s.encoding: not \"utf-8\" or \"base64\"", where);
		} else {
			return fail(err, errlen, "%s: unknown member '%s'", where, k);
		}
	}
	if (out->name == NULL || content == NULL)
		return fail(err, errlen, "%s: needs both name and content", where);
	if (strcmp(enc, "base64") == 0) {
		size_t inlen = json_string_length(content), outlen;
		out->data = malloc(inlen / 4 * 3 + 3);
		if (out->data == NULL ||
		    sodium_base642bin(out->data, inlen / 4 * 3 + 3, json_string_value(content), inlen,
				      " \r\n", &outlen, NULL, sodium_base64_VARIANT_ORIGINAL) != 0)
			return fail(err, errlen, "%s.content: not valid base64", where);
		out->len = outlen;
	} else {
		out->len = json_string_length(content);
		out->data = malloc(out->len + 1);
		if (out->data == NULL)
			return fail(err, errlen, "%s: out of memory", where);
		memcpy(out->data, json_string_value(content), out->len);
	}
	return 0;
}

static int parse_files(json_t *v, struct mcp_args *a, char *err, size_t errlen)
{
	size_t i, j;

	if (!json_is_array(v))
		return fail(err, errlen, "files: not an array of {name, content}");
	if (json_array_size(v) > MCP_FILES_MAX)
		return fail(err, errlen, "files: more than %d files", MCP_FILES_MAX);
	a->files = calloc(json_array_size(v) + 1, sizeof(*a->files));
	if (a->files == NULL)
		return fail(err, errlen, "files: out of memory");
	for (i = 0; i < json_array_size(v); i++) {
		a->nfiles = i + 1; /* so that mcp_args_free() frees this one too */
		if (parse_file(json_array_get(v, i), i, &a->files[i], err, errlen) < 0)
			return -1;
		/* parse_file() succeeded: every name so far is set */
		for (j = 0; j < i; j++)
			if (strcmp(a->files[j].name, a->files[i].name) == 0) // NOLINT(clang-analyzer-core.NonNullParamChecker)
				return fail(err, errlen, "files: '%s' given more than once",
					    a->files[i].name);
	}
	return 0;
}

static int parse_timeout(json_t *v, struct mcp_args *a, char *err, size_t errlen)
{
	double s;

	if (!json_is_number(v))
		return fail(err, errlen, "timeout: not a number of seconds");
	s = json_number_value(v);
	if (!(s > 0) || s > TIMEOUT_MAX_S)
		return fail(err, errlen, "timeout: not more than 0 and at most 2^40 ms");
	a->timeout_ms = (uint64_t)(s * 1000.0 + 0.999); /* round up: 0.0001 s is 1 ms, not 0 */
	return 0;
}

static int parse_member(const char *k, json_t *v, struct mcp_args *a, char *err, size_t errlen)
{
	if (strcmp(k, "code") == 0) {
		if (!json_is_string(v))
			return fail(err, errlen, "code: not a string");
		a->code = json_string_value(v);
		a->code_len = json_string_length(v);
		if (a->code_len > SBX_CODE_MAX)
			return fail(err, errlen, "code: larger than 4 MiB");
	} else if (strcmp(k, "language") == 0) {
		if (cstr(v) == NULL || !sbx_valid_name(cstr(v)))
			return fail(err, errlen, "language: not a language name ([a-z0-9][a-z0-9_-]{0,63})");
		a->lang = json_string_value(v);
	} else if (strcmp(k, "policy") == 0) {
		if (cstr(v) == NULL || !sbx_valid_name(cstr(v)))
			return fail(err, errlen, "policy: not a policy name ([a-z0-9][a-z0-9_-]{0,63})");
		a->policy = json_string_value(v);
	} else if (strcmp(k, "timeout") == 0) {
		return parse_timeout(v, a, err, errlen);
	} else if (strcmp(k, "files") == 0) {
		return parse_files(v, a, err, errlen);
	} else if (strcmp(k, "session") == 0) {
		if (cstr(v) == NULL || !code_name_valid(cstr(v)))
			return fail(err, errlen, "session: not a session name ([A-Za-z0-9._-], 1-64 "
				    "characters, not starting with '.')");
		a->session = json_string_value(v);
	} else {
		return fail(err, errlen, "unknown argument '%s' (execute_code takes code, language, "
			    "policy, timeout, files, session)", k);
	}
	return 0;
}

int mcp_args_parse(json_t *args, struct mcp_args *a, char *err, size_t errlen)
{
	const char *k;
	json_t *v;

	memset(a, 0, sizeof(*a));
	a->lang = "python";
	if (!json_is_object(args)) {
		fail(err, errlen, "arguments: not an object");
		return -1;
	}
	json_object_foreach(args, k, v) {
		if (parse_member(k, v, a, err, errlen) < 0) {
			mcp_args_free(a);
			return -1;
		}
	}
	if (a->code == NULL || memchr(a->code, '\0', a->code_len) != NULL) {
		fail(err, errlen, a->code == NULL ? "code: missing (the program text to run)"
						  : "code: contains a NUL character");
		mcp_args_free(a);
		return -1;
	}
	return 0;
}

void mcp_args_free(struct mcp_args *a)
{
	size_t i;

	for (i = 0; i < a->nfiles; i++)
		free(a->files[i].data);
	free(a->files);
	a->files = NULL;
	a->nfiles = 0;
}
