/* SPDX-License-Identifier: ISC */
/* Parser of the records export file (shipfile.h): hostile input. */
#include "shipfile.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "units.h"

static void fail(char *err, size_t errlen, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return;
	n = snprintf(err, errlen, "line %zu: ", line);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

char *ship_b64(const void *p, size_t n)
{
	size_t cap = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(cap);

	if (s == NULL) {
		fputs("sbx-audit: out of memory\n", stderr);
		exit(1);
	}
	sodium_bin2base64(s, cap, p, n, sodium_base64_VARIANT_ORIGINAL);
	return s;
}

/* Decode one whole base64 word (no padding errors, nothing left over)
 * into a malloc'd buffer with a NUL after it. */
static int b64(const char *w, size_t n, unsigned char **out, size_t *outlen)
{
	const char *end = NULL;
	unsigned char *p;

	*out = NULL;
	if (n == 0)
		return -1;
	p = malloc(n / 4 * 3 + 4);
	if (p == NULL)
		return -1;
	if (sodium_base642bin(p, n / 4 * 3 + 3, w, n, NULL, outlen, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 || end != w + n) {
		free(p);
		return -1;
	}
	p[*outlen] = '\0';
	*out = p;
	return 0;
}

/* Split a line into at most max words at single spaces. */
static size_t words(const char *s, size_t n, const char **w, size_t *wl, size_t max)
{
	size_t k = 0, i = 0, start = 0;

	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == ' ') {
			if (k == max)
				return max + 1;
			w[k] = s + start;
			wl[k++] = i - start;
			start = i + 1;
		}
	}
	return k;
}

static int num(const char *w, size_t n, uint64_t max, uint64_t *v)
{
	char buf[24];

	if (n == 0 || n >= sizeof(buf) || (n > 1 && w[0] == '0'))
		return -1;
	memcpy(buf, w, n);
	buf[n] = '\0';
	return sbx_parse_uint(buf, max, v);
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	p = realloc(*arr, ncap * elem);
	if (p == NULL)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int text(const char *w, size_t n, char **out, size_t *outlen)
{
	unsigned char *p;

	*out = NULL;
	*outlen = 0;
	if (n == 1 && w[0] == '-')
		return 0;
	if (n == 0) {
		/* an empty text (sbx run -c '') is the empty base64 word */
		*out = strdup("");
		return *out == NULL ? -1 : 0;
	}
	if (b64(w, n, &p, outlen) < 0)
		return -1;
	*out = (char *)p;
	return 0;
}

static int record_line(struct ship *s, size_t *cap, const char **w, const size_t *wl, size_t line,
		       char *err, size_t errlen)
{
	struct ship_rec *r;
	unsigned char *sig;
	size_t siglen;
	uint64_t seq;

	if (num(w[1], wl[1], INT64_MAX, &seq) < 0 || seq == 0) {
		fail(err, errlen, line, "record: seq is not a number from 1");
		return -1;
	}
	if (s->nr > 0 && seq != s->r[s->nr - 1].seq + 1) {
		fail(err, errlen, line, "record %" PRIu64 " does not follow record %" PRIu64, seq,
		     s->r[s->nr - 1].seq);
		return -1;
	}
	if (grow((void **)&s->r, cap, s->nr, sizeof(*s->r)) < 0) {
		fail(err, errlen, line, "out of memory");
		return -1;
	}
	r = &s->r[s->nr];
	memset(r, 0, sizeof(*r));
	r->seq = seq;
	r->line = line;
	if (b64(w[2], wl[2], &r->blob, &r->len) < 0 || r->len > SBX_REC_MAX_BLOB) {
		free(r->blob);
		fail(err, errlen, line, "record %" PRIu64 ": the blob is not base64 of at most %u bytes",
		     seq, SBX_REC_MAX_BLOB);
		return -1;
	}
	if (b64(w[3], wl[3], &sig, &siglen) < 0 || siglen != 64) {
		free(r->blob);
		free(sig);
		fail(err, errlen, line, "record %" PRIu64 ": the signature is not base64 of 64 bytes", seq);
		return -1;
	}
	memcpy(r->sig, sig, 64);
	free(sig);
	if (text(w[4], wl[4], &r->code, &r->code_len) < 0 ||
	    text(w[5], wl[5], &r->policy, &r->policy_len) < 0) {
		free(r->blob);
		free(r->code);
		fail(err, errlen, line, "record %" PRIu64 ": code or policy text is neither - nor base64",
		     seq);
		return -1;
	}
	s->nr++;
	return 0;
}

static int ckpt_line(struct ship *s, size_t *cap, const char **w, const size_t *wl, size_t line,
		     char *err, size_t errlen)
{
	struct ship_ckpt *c;
	unsigned char *note;
	size_t len;

	if (wl[1] != 1 || (w[1][0] != '0' && w[1][0] != '1')) {
		fail(err, errlen, line, "checkpoint: kept is not 0 or 1");
		return -1;
	}
	if (b64(w[2], wl[2], &note, &len) < 0 || len > SBX_NOTE_READ_MAX || memchr(note, 0, len)) {
		free(note);
		fail(err, errlen, line, "checkpoint: the note is not base64 of at most %d bytes of text",
		     SBX_NOTE_READ_MAX);
		return -1;
	}
	if (grow((void **)&s->c, cap, s->nc, sizeof(*s->c)) < 0) {
		free(note);
		fail(err, errlen, line, "out of memory");
		return -1;
	}
	c = &s->c[s->nc++];
	c->note = (char *)note;
	c->len = len;
	c->kept = w[1][0] == '1';
	c->line = line;
	return 0;
}

static int header(struct ship *s, const char **w, const size_t *wl, size_t k, char *err,
		  size_t errlen)
{
	if (k != 3 || wl[0] != strlen(SHIP_MAGIC) || memcmp(w[0], SHIP_MAGIC, wl[0]) != 0) {
		fail(err, errlen, 1, "not an sbx-audit records export (first line: "
		     SHIP_MAGIC " VERSION ORIGIN)");
		return -1;
	}
	if (wl[1] != 1 || w[1][0] != '0' + SHIP_VERSION) {
		fail(err, errlen, 1, "export format version %.*s, not %d", (int)(wl[1] > 8 ? 8 : wl[1]),
		     w[1], SHIP_VERSION);
		return -1;
	}
	if (wl[2] == 0 || wl[2] > SBX_ORIGIN_MAX) {
		fail(err, errlen, 1, "the origin is empty or longer than %d bytes", SBX_ORIGIN_MAX);
		return -1;
	}
	memcpy(s->origin, w[2], wl[2]);
	s->origin[wl[2]] = '\0';
	if (!sbx_note_name_ok(s->origin)) {
		fail(err, errlen, 1, "the origin is not a C2SP key name");
		return -1;
	}
	return 0;
}

int ship_parse(const char *buf, size_t len, struct ship *s, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *w[7];
	size_t wl[7], k, line = 0, rcap = 0, ccap = 0;
	uint64_t nr, nc;
	int ended = 0;

	memset(s, 0, sizeof(*s));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		line++;
		if (nl == NULL) {
			fail(err, errlen, line, "no newline at the end (the file was cut short?)");
			goto bad;
		}
		if (ended) {
			fail(err, errlen, line, "text after the end line");
			goto bad;
		}
		k = words(p, (size_t)(nl - p), w, wl, 6);
		if (line == 1) {
			if (header(s, w, wl, k, err, errlen) < 0)
				goto bad;
		} else if (k == 6 && wl[0] == 6 && memcmp(w[0], "record", 6) == 0) {
			if (record_line(s, &rcap, w, wl, line, err, errlen) < 0)
				goto bad;
		} else if (k == 3 && wl[0] == 10 && memcmp(w[0], "checkpoint", 10) == 0) {
			if (ckpt_line(s, &ccap, w, wl, line, err, errlen) < 0)
				goto bad;
		} else if (k == 3 && wl[0] == 3 && memcmp(w[0], "end", 3) == 0) {
			if (num(w[1], wl[1], INT64_MAX, &nr) < 0 || num(w[2], wl[2], INT64_MAX, &nc) < 0 ||
			    nr != s->nr || nc != s->nc) {
				fail(err, errlen, line, "the end line does not count the %zu records and %zu "
				     "checkpoints before it", s->nr, s->nc);
				goto bad;
			}
			ended = 1;
		} else {
			fail(err, errlen, line, "not a record, checkpoint or end line");
			goto bad;
		}
		p = nl + 1;
	}
	if (line == 0) {
		fail(err, errlen, 1, "empty file");
		goto bad;
	}
	if (!ended) {
		fail(err, errlen, line, "no end line (the file was cut short?)");
		goto bad;
	}
	return 0;
bad:
	ship_free(s);
	return -1;
}

void ship_free(struct ship *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		free(s->r[i].blob);
		free(s->r[i].code);
		free(s->r[i].policy);
	}
	for (i = 0; i < s->nc; i++)
		free(s->c[i].note);
	free(s->r);
	free(s->c);
	memset(s, 0, sizeof(*s));
}
