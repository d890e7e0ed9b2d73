/* SPDX-License-Identifier: ISC */
#include "fixdoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textutil.h"

/* Move i back to the start of a UTF-8 character. */
static size_t char_start(const char *s, size_t len, size_t i)
{
	while (i > 0 && i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

char *fix_excerpt(const char *s, size_t len, size_t head, size_t tail, bool *cut)
{
	size_t h, t, omitted;
	char mark[64], *out;
	int m;

	*cut = len > head + tail;
	if (!*cut) {
		out = malloc(len + 1);
		if (out != NULL) {
			memcpy(out, s, len);
			out[len] = '\0';
		}
		return out;
	}
	h = char_start(s, len, head);
	t = char_start(s, len, len - tail);
	omitted = t - h;
	m = snprintf(mark, sizeof(mark), "\n[... %zu bytes omitted ...]\n", omitted);
	out = malloc(h + (size_t)m + (len - t) + 1);
	if (out == NULL)
		return NULL;
	memcpy(out, s, h);
	memcpy(out + h, mark, (size_t)m);
	memcpy(out + h + (size_t)m, s + t, len - t);
	out[h + (size_t)m + (len - t)] = '\0';
	return out;
}

static int set_excerpt(json_t *res, const char *key, const char *flag)
{
	json_t *v = json_object_get(res, key);
	bool cut = false;
	char *ex;
	int rc;

	if (!json_is_string(v))
		return 0;
	ex = fix_excerpt(json_string_value(v), json_string_length(v), FIX_EXCERPT_HEAD,
			 FIX_EXCERPT_TAIL, &cut);
	if (ex == NULL)
		return -1;
	/* Cutting at character boundaries keeps valid UTF-8 valid. */
	rc = json_object_set_new(res, key, json_string(ex));
	free(ex);
	return rc | json_object_set_new(res, flag, json_boolean(cut));
}

/* Frames in /code are the submitted file: its lines are the user's lines. */
static void mark_frames(json_t *res)
{
	json_t *frames = json_object_get(json_object_get(res, "traceback"), "frames");
	json_t *f;
	size_t i;

	json_array_foreach(frames, i, f) {
		const char *file = json_string_value(json_object_get(f, "file"));
		json_object_set_new(f, "in_code", json_boolean(file && strncmp(file, "/code/", 6) == 0));
	}
}

char *fix_document(const struct fix_ctx *c, json_t *result)
{
	json_t *res = json_deep_copy(result), *doc;
	char *code = sbx_utf8_sanitize(c->code, c->code_len), *text = NULL;

	if (res == NULL || code == NULL)
		goto out;
	if (set_excerpt(res, "stdout", "stdout_excerpted") < 0 ||
	    set_excerpt(res, "stderr", "stderr_excerpted") < 0)
		goto out;
	mark_frames(res);
	doc = json_pack("{s:s,s:I,s:I,s:s,s:s?,s:s,s:s,s:O,s:O}", "protocol", "sbx-fix-1",
			"attempt", (json_int_t)c->attempt, "max_attempts", (json_int_t)c->max_attempts,
			"language", c->language, "name", c->name, "session", c->session,
			"code", code, "result", res, "history", c->history);
	if (doc != NULL)
		text = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(doc);
out:
	json_decref(res);
	free(code);
	return text;
}
