/* SPDX-License-Identifier: ISC */
/* The --state file: read whole, replaced atomically so that a crash never
 * leaves the auditor without a trusted checkpoint. */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC2 "sbx-audit verify state 2\n"
#define MAGIC3 "sbx-audit verify state 3\n"
#define SIG_HEX ((size_t)2 * crypto_sign_BYTES)

static int unhex(const char *s, size_t n, unsigned char *out, size_t want)
{
	size_t bin = 0;

	return n == 2 * want && sodium_hex2bin(out, want, s, n, NULL, &bin, NULL) == 0 && bin == want
	       ? 0 : -1;
}

/* A decimal number of [*p, end) followed by sep; *p moves past sep. */
static int number(const char **p, const char *end, char sep, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (s >= end || *s != sep)
		return -1;
	*out = v;
	*p = s + 1;
	return 0;
}

/* "head SEQ CHAIN SIG" (line without its newline, [p, nl)) */
static int parse_head(const char *p, const char *nl, struct state *st)
{
	const char *chain;

	p += 5;
	if (number(&p, nl, ' ', &st->head_seq) < 0 || st->head_seq == 0)
		return -1;
	chain = p;
	/* the length first: nothing is read past the line */
	if ((size_t)(nl - chain) != 64 + 1 + SIG_HEX || chain[64] != ' ')
		return -1;
	if (unhex(chain, 64, st->head_chain, 32) < 0 ||
	    unhex(chain + 65, SIG_HEX, st->head_sig, crypto_sign_BYTES) < 0)
		return -1;
	st->have_head = 1;
	return 0;
}

/* "open RUNID SEQ TIME WALLMS" */
static int parse_open(const char *p, const char *nl, struct state *st)
{
	const char *sp;
	struct sbx_open_run o = {0}, *grown;
	uint64_t seq, t, wall;
	size_t n;

	p += 5;
	sp = memchr(p, ' ', (size_t)(nl - p));
	n = sp ? (size_t)(sp - p) : 0;
	if (n == 0 || n > SBX_OPEN_KEY_LEN)
		return -1;
	memcpy(o.run_id, p, n);
	p = sp + 1;
	if (number(&p, nl + 1, ' ', &seq) < 0 || number(&p, nl + 1, ' ', &t) < 0 ||
	    number(&p, nl + 1, '\n', &wall) < 0 || p != nl + 1 || seq == 0 || seq > INT64_MAX ||
	    t > INT64_MAX)
		return -1;
	o.seq = (int64_t)seq;
	o.realtime_ns = (int64_t)t;
	o.wall_ms = wall;
	if (st->n_open >= SBX_STATE_MAX_OPEN)
		return -1;
	grown = realloc(st->open, (st->n_open + 1) * sizeof(*grown));
	if (grown == NULL)
		return -1;
	st->open = grown;
	st->open[st->n_open++] = o;
	return 0;
}

/* Version 3's optional lines; returns the number of the bad line, or 0. */
static int parse_lines(const char **pp, const char *end, struct state *st, int lineno)
{
	const char *p = *pp, *nl;
	int have_base = 0, have_frontier = 0;

	for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1, lineno++) {
		if ((size_t)(nl - p) > 5 && memcmp(p, "base ", 5) == 0) {
			const char *q = p + 5;
			if (number(&q, nl + 1, '\n', &st->base_seq) < 0)
				return lineno;
			have_base = 1;
		} else if ((size_t)(nl - p) > 9 && memcmp(p, "frontier ", 9) == 0) {
			size_t hexlen = (size_t)(nl - p) - 9, bin = 0;
			struct sbx_mtree t;
			if (hexlen % 2 || hexlen / 2 > sizeof(st->frontier) ||
			    sodium_hex2bin(st->frontier, sizeof(st->frontier), p + 9, hexlen, NULL,
					   &bin, NULL) != 0 || bin != hexlen / 2 ||
			    sbx_mtree_load(&t, st->frontier, bin) < 0)
				return lineno;
			st->frontier_len = bin;
			have_frontier = 1;
		} else if ((size_t)(nl - p) > 5 && memcmp(p, "open ", 5) == 0) {
			if (parse_open(p, nl, st) < 0)
				return lineno;
		} else {
			break; /* the note */
		}
	}
	st->have_tree = have_base && have_frontier;
	*pp = p;
	return 0;
}

/* Returns 0, or the number of the line that is not as it should be. */
static int parse(char *buf, size_t n, struct state *st)
{
	const char *p = buf, *end = buf + n, *nl;
	size_t m = sizeof(MAGIC3) - 1;
	int v3;

	memset(st, 0, sizeof(*st));
	v3 = n >= m && memcmp(buf, MAGIC3, m) == 0;
	if (v3 || (n >= m && memcmp(buf, MAGIC2, m) == 0)) {
		p += m;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL || (size_t)(nl - p) < 5 || memcmp(p, "head ", 5) != 0 ||
		    parse_head(p, nl, st) < 0)
			return 2;
		p = nl + 1;
		if (v3) {
			int bad = parse_lines(&p, end, st, 3);
			if (bad)
				return bad;
		}
	}
	if (p < end) {
		st->note = p;
		st->note_len = (size_t)(end - p);
	}
	return 0;
}

void state_free(struct state *st)
{
	free(st->open);
	st->open = NULL;
	st->n_open = 0;
}

int state_read(const char *path, char *buf, size_t buflen, struct state *st,
	       char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), bad;
	size_t n = 0;
	ssize_t r;

	memset(st, 0, sizeof(*st));
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (n + 1 < buflen && (r = read(fd, buf + n, buflen - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (n + 1 >= buflen) {
		snprintf(err, errlen, "%s: too large for a state file", path);
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: empty (delete it to trust the log's current checkpoint)", path);
		return -1;
	}
	bad = parse(buf, n, st);
	if (bad == 2) {
		snprintf(err, errlen, "%s: line 2: not \"head SEQ CHAIN SIG\" (a damaged state file)",
			 path);
	} else if (bad) {
		snprintf(err, errlen, "%s: line %d: not a \"base SEQ\", \"frontier HEX\" or \"open "
			 "RUNID SEQ TIME WALLMS\" line (a damaged state file)", path, bad);
	}
	if (bad) {
		state_free(st);
		return -1;
	}
	return 1;
}

/* The file's text (malloc'd), or NULL when out of memory. */
static char *text_of(const struct state *st, size_t *len)
{
	char ch[65], sg[2 * crypto_sign_BYTES + 1], *text, *p;
	size_t i, cap = 512 + 2 * st->frontier_len + st->n_open * 140 + st->note_len;

	p = text = malloc(cap);
	if (text == NULL)
		return NULL;
	sodium_bin2hex(ch, sizeof(ch), st->head_chain, 32);
	sodium_bin2hex(sg, sizeof(sg), st->head_sig, crypto_sign_BYTES);
	p += sprintf(p, MAGIC3 "head %" PRIu64 " %s %s\n", st->head_seq, ch, sg);
	if (st->have_tree) {
		p += sprintf(p, "base %" PRIu64 "\nfrontier ", st->base_seq);
		sodium_bin2hex(p, 2 * st->frontier_len + 1, st->frontier, st->frontier_len);
		p += 2 * st->frontier_len;
		*p++ = '\n';
		for (i = 0; i < st->n_open; i++)
			p += sprintf(p, "open %.*s %" PRId64 " %" PRId64 " %" PRIu64 "\n", SBX_OPEN_KEY_LEN,
				     st->open[i].run_id, st->open[i].seq, st->open[i].realtime_ns,
				     st->open[i].wall_ms);
	}
	if (st->note != NULL) {
		memcpy(p, st->note, st->note_len);
		p += st->note_len;
	}
	*len = (size_t)(p - text);
	return text;
}

int state_write(const char *path, const struct state *st, char *err, size_t errlen)
{
	char tmp[4200], *text;
	size_t len = 0;
	int fd;

	text = text_of(st, &len);
	if (text == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		free(text);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0) {
		snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		free(text);
		return -1;
	}
	free(text);
	close(fd);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
