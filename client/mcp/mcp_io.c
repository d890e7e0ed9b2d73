/* SPDX-License-Identifier: ISC */
/* `sbx mcp`: messages out as whole lines, lines in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp_int.h"
#include "textutil.h"
#include "clock.h"


/* A failed write (the client closed its end: EPIPE, SIGPIPE being
 * ignored) stops the server. */
void mcp_send(json_t *m)
{
	char *text = m ? json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12)) : NULL;
	size_t len, off = 0;

	json_decref(m);
	if (text == NULL || mcp_srv.out_broken) {
		free(text);
		return;
	}
	len = strlen(text);
	text[len] = '\n'; /* the NUL goes: len + 1 bytes are written */
	while (off < len + 1) {
		ssize_t n = write(1, text + off, len + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			mcp_srv.out_broken = true;
			break;
		}
		off += (size_t)n;
	}
	free(text);
}

/* msg may quote the request cut at a byte count ("%.200s"), which can
 * split a UTF-8 sequence; json_pack would refuse it and nothing would be
 * answered, so it is made valid first. */
void mcp_send_error(json_t *id, int code, const char *msg)
{
	char *clean = sbx_utf8_sanitize(msg, strlen(msg));

	mcp_send(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			   "code", code, "message", clean ? clean : "error (out of memory)"));
	free(clean);
}

/* A result that could not be built (out of memory, text that is not
 * UTF-8) is still an answer: the request must not wait for ever. */
void mcp_send_result(json_t *id, json_t *result)
{
	if (result == NULL) {
		mcp_send_error(id, -32603, "internal error: the result could not be built");
		return;
	}
	mcp_send(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* Append bytes to lb; call fn for every complete line. Lines over max
 * are dropped whole; fn gets (NULL, 0) once for each. */
void mcp_feed_lines(struct linebuf *lb, const char *buf, size_t n, size_t max,
		       void (*fn)(void *, const char *, size_t), void *arg)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;

		if (!lb->skipping && lb->len + take > max) {
			lb->skipping = true;
			lb->len = 0;
			fn(arg, NULL, 0);
		}
		if (!lb->skipping) {
			if (lb->len + take + 1 > lb->cap) {
				size_t cap = (lb->len + take + 1) * 2;
				if (cap > max + 1)
					cap = max + 1;
				char *p = realloc(lb->buf, cap);
				if (p == NULL) {
					lb->skipping = true;
					lb->len = 0;
					fn(arg, NULL, 0);
					continue;
				}
				lb->buf = p;
				lb->cap = cap;
			}
			memcpy(lb->buf + lb->len, buf, take);
			lb->len += take;
		}
		if (nl == NULL)
			return;
		if (!lb->skipping) {
			lb->buf[lb->len] = '\0';
			fn(arg, lb->buf, lb->len);
		}
		lb->skipping = false;
		lb->len = 0;
		buf = nl + 1;
		n -= take + 1;
	}
}
