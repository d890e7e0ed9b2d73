/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the traceback parser (recorder/traceback.c), which runs in
 * the helper's recorder on output the sandboxed code wrote. The first byte
 * picks the language ('s' sh, 'b' bash, 'd' dash, 'n' none, 'r' an unknown
 * one, anything else python3); the rest is the payload's stderr. The result
 * must keep the bounds traceback.h promises and serialise as JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "traceback.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static const char *language(uint8_t b)
{
	switch (b) {
	case 's': return "sh";
	case 'b': return "bash";
	case 'd': return "dash";
	case 'n': return NULL;
	case 'r': return "ruby";
	default: return "python3";
	}
}

/* "All strings are valid UTF-8 without NULs" (jansson checks the UTF-8). */
static void no_nuls(json_t *v) // NOLINT(misc-no-recursion): the parser nests 3 deep
{
	void *it;
	size_t i;

	if (json_is_string(v))
		REQUIRE(strlen(json_string_value(v)) == json_string_length(v));
	for (it = json_object_iter(v); it != NULL; it = json_object_iter_next(v, it))
		no_nuls(json_object_iter_value(it));
	for (i = 0; i < json_array_size(v); i++)
		no_nuls(json_array_get(v, i));
}

static void check(json_t *tb)
{
	json_t *frames = json_object_get(tb, "frames"), *chain = json_object_get(tb, "chain");
	json_t *msg = json_object_get(tb, "message"), *text = json_object_get(tb, "text");
	char *dump;

	REQUIRE(json_is_object(tb));
	REQUIRE(json_is_array(frames) && json_array_size(frames) <= SBX_TB_MAX_FRAMES);
	REQUIRE(json_is_array(chain) && json_array_size(chain) <= SBX_TB_MAX_CHAIN);
	REQUIRE(json_is_null(msg) || (json_is_string(msg) && json_string_length(msg) <= SBX_TB_MESSAGE_MAX));
	REQUIRE(json_is_string(text) && json_string_length(text) <= SBX_TB_TEXT_MAX);
	no_nuls(tb);
	dump = json_dumps(tb, JSON_COMPACT);
	REQUIRE(dump != NULL);
	free(dump);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *lang;
	char *text;
	json_t *tb;

	if (size == 0)
		return 0;
	lang = language(data[0]);
	text = malloc(size - 1 ? size - 1 : 1);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	tb = sbx_traceback_parse(text, size - 1, lang);
	if (tb != NULL) {
		REQUIRE(lang == NULL || strncmp(lang, "python", 6) == 0 || lang[1] == 'h' ||
			strcmp(lang, "bash") == 0 || strcmp(lang, "dash") == 0);
		check(tb);
		json_decref(tb);
	}
	free(text);
	return 0;
}
