/* SPDX-License-Identifier: ISC */
/*
 * The document the retry loop hands the fixer (protocol "sbx-fix-1",
 * documented in sbx(1) and examples/fixers/README):
 *
 *   {"protocol": "sbx-fix-1", "attempt": N, "max_attempts": M,
 *    "language": "python", "name": "main.py", "session": "...",
 *    "code": "the code of attempt N",
 *    "result": { the attempt's result JSON, with stdout and stderr cut to
 *                head and tail excerpts ("stdout_excerpted": true when
 *                cut), traceback frames in the submitted file marked
 *                "in_code": true },
 *    "history": [{"attempt", "id", "outcome", "exit_code", "error_type"}]}
 */
#ifndef SBX_CLIENT_FIXDOC_H
#define SBX_CLIENT_FIXDOC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define FIX_EXCERPT_HEAD 6144 /* bytes of stdout/stderr kept from the start */
#define FIX_EXCERPT_TAIL 6144 /* ... and from the end */

/*
 * s (len bytes) when it fits in head + tail bytes; otherwise its first head
 * and last tail bytes joined by "\n[... N bytes omitted ...]\n", cut at
 * UTF-8 character boundaries. Sets *cut. Returns malloc'ed text or NULL.
 */
char *fix_excerpt(const char *s, size_t len, size_t head, size_t tail, bool *cut);

struct fix_ctx {
	uint32_t attempt, max_attempts;
	const char *language, *session;
	const char *name; /* --name, or NULL when the helper chose main.EXT */
	const char *code;
	size_t code_len;
	json_t *history; /* array, borrowed */
};

/* The document as compact JSON text (malloc'ed), or NULL when out of memory. */
char *fix_document(const struct fix_ctx *c, json_t *result);

#endif
