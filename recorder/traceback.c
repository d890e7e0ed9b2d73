/* SPDX-License-Identifier: ISC */
/*
 * Traceback parser: one forward pass over the lines of stderr, a small state
 * machine, and spans pointing into the input instead of copies, so a hostile
 * payload printing megabytes of near-tracebacks costs linear time and a
 * fixed amount of memory. JSON is built only for the report that wins.
 */
#include "traceback.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textutil.h"

struct span {
	const char *p;
	size_t n;
};

struct frame {
	struct span file, function, text;
	unsigned long line;
	unsigned long repeat;
	bool has_line, has_function, has_text;
};

struct block {
	const char *start;        /* first byte of its header or File line */
	const char *end;          /* one past its last line's content */
	struct frame frames[SBX_TB_MAX_FRAMES]; /* ring: the innermost are what matter */
	size_t nframes;           /* frames seen, kept or not */
	unsigned long user_line;
	bool has_user_line;
	bool has_exc;
	struct span type, message;
	size_t msg_lines;
	bool headerless;          /* compile error report: confirmed only by its exception line */
	bool group;               /* 3.11 exception group: lines carry "<ws>| " */
	struct span group_ws;
};

enum state {
	S_IDLE,       /* outside any report */
	S_FRAMES,     /* after a header: File lines, source, carets */
	S_MESSAGE,    /* after the exception line: continuation lines */
	S_AFTER,      /* blank line(s) after a message: a chain separator may follow */
	S_SEP,        /* after a chain separator: the next header continues the chain */
	S_GROUP_TAIL, /* an exception group's sub-exceptions */
};

struct parser {
	/* Two slots: a headerless candidate must not destroy the last good
	 * report until its exception line proves it is one. */
	struct block slot[2];
	int cur, best;
	enum state st;
	bool expect_source;
	const char *group_start; /* where best's chain starts */
	struct {
		struct span type, message;
	} chain[SBX_TB_MAX_CHAIN];
	size_t nchain;           /* pushed in total; a ring of the newest */
};

static bool starts(struct span l, const char *lit)
{
	size_t n = strlen(lit);

	return l.n >= n && memcmp(l.p, lit, n) == 0;
}

static struct span rtrim(struct span l)
{
	while (l.n > 0 && (l.p[l.n - 1] == ' ' || l.p[l.n - 1] == '\t' || l.p[l.n - 1] == '\r' ||
			   l.p[l.n - 1] == '\n'))
		l.n--;
	return l;
}

static struct span trim(struct span l)
{
	while (l.n > 0 && (l.p[0] == ' ' || l.p[0] == '\t')) {
		l.p++;
		l.n--;
	}
	return rtrim(l);
}

static bool equals_trimmed(struct span l, const char *lit)
{
	l = rtrim(l);
	return l.n == strlen(lit) && memcmp(l.p, lit, l.n) == 0;
}

/* First occurrence of lit in [p, e), or NULL. memchr on its first byte
 * rather than memmem: sanitizers check memmem's whole haystack on every
 * call, which turns the repeated searches of parse_frame() quadratic. */
static const char *find(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	while (p < e && (size_t)(e - p) >= n) {
		p = memchr(p, lit[0], (size_t)(e - p) - n + 1);
		if (p == NULL)
			return NULL;
		if (memcmp(p, lit, n) == 0)
			return p;
		p++;
	}
	return NULL;
}

static bool is_blank(struct span l)
{
	return trim(l).n == 0;
}

static bool is_indented(struct span l)
{
	return l.n > 0 && (l.p[0] == ' ' || l.p[0] == '\t');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* 3.11 marks the failing expression with a line of ^ and ~ under the source. */
static bool is_caret(struct span l)
{
	bool mark = false;
	size_t i;

	for (i = 0; i < l.n; i++) {
		char c = l.p[i];
		if (c == '^' || c == '~')
			mark = true;
		else if (c != ' ' && c != '\t')
			return false;
	}
	return mark;
}

static bool is_header(struct span l)
{
	return equals_trimmed(l, "Traceback (most recent call last):");
}

static bool is_sep(struct span l)
{
	return equals_trimmed(l, "During handling of the above exception, another exception occurred:") ||
	       equals_trimmed(l, "The above exception was the direct cause of the following exception:");
}

/* "<ws>+ Exception Group Traceback (most recent call last):" */
static bool is_group_header(struct span l, struct span *ws)
{
	size_t i = 0;

	while (i < l.n && l.p[i] == ' ')
		i++;
	if (!equals_trimmed((struct span){l.p + i, l.n - i},
			    "+ Exception Group Traceback (most recent call last):"))
		return false;
	*ws = (struct span){l.p, i};
	return true;
}

/* Decimal digits at *p (advanced past them); false on none or overflow. */
static bool parse_number(const char **p, const char *e, unsigned long *out)
{
	unsigned long v = 0;
	const char *q = *p;

	if (q >= e || !is_digit(*q))
		return false;
	for (; q < e && is_digit(*q); q++) {
		if (v > 100000000ul) /* no source file is that long: treat as garbage */
			return false;
		v = v * 10 + (unsigned long)(*q - '0');
	}
	*p = q;
	*out = v;
	return true;
}

/* `  File "FILE", line N[, in FUNCTION]` */
static bool parse_frame(struct span l, struct frame *f)
{
	static const char pfx[] = "  File \"", mid[] = "\", line ";
	const char *p, *q, *e = l.p + l.n, *r;

	if (!starts(l, pfx))
		return false;
	p = l.p + sizeof(pfx) - 1;
	/* A file name may itself contain `", line `; the first occurrence
	 * followed by a digit is the one Python wrote in all real cases. */
	for (q = p;; q++) {
		q = find(q, e, mid);
		if (q == NULL)
			return false;
		if (q + sizeof(mid) - 1 < e && is_digit(q[sizeof(mid) - 1]))
			break;
	}
	memset(f, 0, sizeof(*f));
	f->file = (struct span){p, (size_t)(q - p)};
	r = q + sizeof(mid) - 1;
	f->has_line = parse_number(&r, e, &f->line);
	if (!f->has_line)
		return false;
	if (r == e)
		return true;
	if (!starts((struct span){r, (size_t)(e - r)}, ", in "))
		return false;
	r += 5;
	f->function = (struct span){r, (size_t)(e - r)};
	f->has_function = true;
	return true;
}

/* "  [Previous line repeated N more times]" */
static bool parse_repeat(struct span l, unsigned long *n)
{
	static const char pfx[] = "  [Previous line repeated ";
	const char *r;

	if (!starts(l, pfx))
		return false;
	r = l.p + sizeof(pfx) - 1;
	return parse_number(&r, l.p + l.n, n);
}

static bool ident_start(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}

static bool ident_char(unsigned char c)
{
	return ident_start(c) || is_digit((char)c);
}

/* "Type", "Type: message" or "pkg.mod.Type: message". */
static bool parse_exc(struct span l, struct span *type, struct span *msg)
{
	size_t i = 0;

	if (l.n == 0)
		return false;
	for (;;) {
		if (i >= l.n || !ident_start((unsigned char)l.p[i]))
			return false;
		for (i++; i < l.n && ident_char((unsigned char)l.p[i]); i++)
			;
		if (i < l.n && l.p[i] == '.') {
			i++;
			continue;
		}
		break;
	}
	if (i > 256)
		return false; /* no exception class name is that long */
	*type = (struct span){l.p, i};
	if (i == l.n) {
		*msg = (struct span){l.p + i, 0};
		return true;
	}
	if (l.p[i] != ':')
		return false;
	if (i + 1 == l.n) {
		*msg = (struct span){l.p + i + 1, 0};
		return true;
	}
	if (l.p[i + 1] != ' ')
		return false;
	*msg = (struct span){l.p + i + 2, l.n - i - 2};
	return true;
}

static bool is_compile_error(struct span type)
{
	static const char *const names[] = {"SyntaxError", "IndentationError", "TabError"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (type.n == strlen(names[i]) && memcmp(type.p, names[i], type.n) == 0)
			return true;
	return false;
}

static struct block *cur(struct parser *ps)
{
	return &ps->slot[ps->cur];
}

static void start_block(struct parser *ps, struct span l, bool headerless, bool chained,
			const struct span *group_ws)
{
	int s = ps->best == 0 ? 1 : 0;
	struct block *b = &ps->slot[s];

	/* Field by field: clearing the frame ring on every block would make a
	 * stream of header lines cost SBX_TB_MAX_FRAMES times more. */
	b->start = l.p;
	b->end = l.p + l.n;
	b->nframes = 0;
	b->has_user_line = false;
	b->user_line = 0;
	b->has_exc = false;
	b->type = b->message = (struct span){l.p, 0};
	b->msg_lines = 0;
	b->headerless = headerless;
	b->group = group_ws != NULL;
	b->group_ws = group_ws ? *group_ws : (struct span){l.p, 0};
	ps->cur = s;
	ps->st = S_FRAMES;
	ps->expect_source = false;
	if (headerless)
		return;
	if (chained && ps->best >= 0 && ps->slot[ps->best].has_exc) {
		const struct block *prev = &ps->slot[ps->best];
		size_t k = ps->nchain % SBX_TB_MAX_CHAIN;
		ps->chain[k].type = prev->type;
		ps->chain[k].message = prev->message;
		ps->nchain++;
	} else {
		ps->nchain = 0;
		ps->group_start = l.p;
	}
	ps->best = s;
}

static void confirm_headerless(struct parser *ps)
{
	ps->best = ps->cur;
	ps->nchain = 0;
	ps->group_start = cur(ps)->start;
}

static void abandon(struct parser *ps)
{
	ps->cur = ps->best;
	ps->st = S_IDLE;
}

static void add_frame(struct block *b, const struct frame *f)
{
	b->frames[b->nframes % SBX_TB_MAX_FRAMES] = *f;
	b->nframes++;
	if (f->has_line && starts(f->file, "/code/")) {
		b->user_line = f->line;
		b->has_user_line = true;
	}
}

static struct frame *last_frame(struct block *b)
{
	return b->nframes ? &b->frames[(b->nframes - 1) % SBX_TB_MAX_FRAMES] : NULL;
}

/* One line inside a report: x is the line as Python formatted it (an
 * exception group's "| " prefix removed), raw_end where the raw line ends. */
static void feed_block(struct parser *ps, struct span x, const char *raw_end)
{
	struct block *b = cur(ps);
	struct frame f, *lf;
	unsigned long n;

	if (ps->st == S_FRAMES) {
		if (parse_frame(x, &f)) {
			add_frame(b, &f);
			ps->expect_source = true;
		} else if (parse_repeat(x, &n)) {
			if ((lf = last_frame(b)) != NULL)
				lf->repeat = n;
			ps->expect_source = false;
		} else if (is_blank(x)) {
			if (b->headerless) {
				abandon(ps);
				return;
			}
		} else if (is_indented(x)) {
			lf = last_frame(b);
			if (ps->expect_source && lf != NULL && !is_caret(x)) {
				lf->text = trim(x);
				lf->has_text = true;
			}
			ps->expect_source = false;
		} else if (parse_exc(x, &b->type, &b->message)) {
			if (b->headerless) {
				if (!is_compile_error(b->type)) {
					abandon(ps);
					return;
				}
				confirm_headerless(ps);
			}
			b->has_exc = true;
			b->msg_lines = 1;
			ps->st = S_MESSAGE;
		} else {
			/* Something that is not Python's: the report was cut or
			 * interleaved; keep what we have. */
			if (b->headerless)
				abandon(ps);
			else
				ps->st = S_IDLE;
			return;
		}
		b->end = raw_end;
		return;
	}
	/* S_MESSAGE */
	if (is_blank(x)) {
		ps->st = S_AFTER;
		return;
	}
	if (is_sep(x)) {
		ps->st = S_SEP;
		return;
	}
	if (b->msg_lines >= SBX_TB_MAX_MSG_LINES ||
	    (size_t)(x.p + x.n - b->message.p) > SBX_TB_MESSAGE_MAX) {
		ps->st = S_IDLE;
		return;
	}
	if (b->message.n == 0)
		b->message = x; /* exception without message, followed by a note */
	else
		b->message.n = (size_t)(x.p + x.n - b->message.p);
	b->msg_lines++;
	b->end = raw_end;
}

static void feed(struct parser *ps, struct span l)
{
	struct span ws;
	struct frame f;

	if (is_header(l)) {
		start_block(ps, l, false, ps->st == S_SEP, NULL);
		return;
	}
	if (is_group_header(l, &ws)) {
		start_block(ps, l, false, ps->st == S_SEP, &ws);
		return;
	}
	if (ps->st == S_FRAMES || ps->st == S_MESSAGE) {
		struct block *b = cur(ps);
		if (!b->group) {
			feed_block(ps, l, l.p + l.n);
			return;
		}
		if (l.n > b->group_ws.n && memcmp(l.p, b->group_ws.p, b->group_ws.n) == 0 &&
		    l.p[b->group_ws.n] == '|') {
			struct span x = {l.p + b->group_ws.n + 1, l.n - b->group_ws.n - 1};
			if (x.n > 0 && x.p[0] == ' ') {
				x.p++;
				x.n--;
			}
			feed_block(ps, x, l.p + l.n);
			return;
		}
		ps->st = S_GROUP_TAIL;
	}
	switch (ps->st) {
	case S_GROUP_TAIL: {
		struct block *b = cur(ps);
		if (l.n > b->group_ws.n && memcmp(l.p, b->group_ws.p, b->group_ws.n) == 0 &&
		    (l.p[b->group_ws.n] == ' ' || l.p[b->group_ws.n] == '+' ||
		     l.p[b->group_ws.n] == '|')) {
			b->end = l.p + l.n;
			return;
		}
		ps->st = S_AFTER;
	}
		/* fall through */
	case S_AFTER:
		if (is_blank(l))
			return;
		if (is_sep(l)) {
			ps->st = S_SEP;
			return;
		}
		break;
	case S_SEP:
		if (is_blank(l))
			return;
		break;
	default:
		break;
	}
	ps->st = S_IDLE;
	if (parse_frame(l, &f)) {
		start_block(ps, l, true, false, NULL);
		add_frame(cur(ps), &f);
		ps->expect_source = true;
	}
}

/* A JSON string from untrusted bytes: at most cap bytes, cut on a character
 * boundary, invalid UTF-8 and NULs replaced. */
/* The UTF-8 sanitised s as a JSON string of at most cap bytes, cut at a
 * character boundary: its head, or with keep_tail its tail (*cut set when
 * bytes were dropped). The cap applies after sanitising: each invalid byte
 * becomes U+FFFD, three bytes. */
static json_t *jstr_cut(struct span s, size_t cap, bool keep_tail, bool *cut)
{
	json_t *j;
	char *t;
	size_t n, from = 0;

	if (s.n > cap && !keep_tail)
		s.n = cap; /* what is past the cap cannot be kept */
	t = sbx_utf8_sanitize(s.p, s.n);
	if (t == NULL)
		return NULL;
	n = strlen(t);
	if (n > cap) {
		if (keep_tail) {
			from = n - cap;
			while (from < n && ((unsigned char)t[from] & 0xC0) == 0x80)
				from++;
		} else {
			n = cap;
			while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
				n--;
			t[n] = '\0';
		}
		if (cut != NULL)
			*cut = true;
	}
	j = json_string(t + from);
	free(t);
	return j;
}

static json_t *jstr(struct span s, size_t cap)
{
	return jstr_cut(s, cap, false, NULL);
}

/* json_object_set_new() consumes v even on failure; NULL (out of memory)
 * makes it fail, which is what we want. */
static bool put(json_t *o, const char *k, json_t *v)
{
	return json_object_set_new(o, k, v) == 0;
}

static json_t *frame_json(const struct frame *f)
{
	json_t *o = json_object();
	bool ok;

	if (o == NULL)
		return NULL;
	ok = put(o, "file", jstr(f->file, SBX_TB_FIELD_MAX));
	ok &= put(o, "line", f->has_line ? json_integer((json_int_t)f->line) : json_null());
	ok &= put(o, "function", f->has_function ? jstr(f->function, SBX_TB_FIELD_MAX) : json_null());
	ok &= put(o, "text", f->has_text ? jstr(f->text, SBX_TB_FIELD_MAX) : json_null());
	if (f->repeat)
		ok &= put(o, "repeat", json_integer((json_int_t)f->repeat));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Shared tail of both formats: text (the tail of [start, end)) and chain. */
static bool put_text(json_t *o, const char *start, const char *end)
{
	struct span t = {start, (size_t)(end - start)};
	bool ok = true, cut = false;

	if (t.n > SBX_TB_TEXT_MAX) {
		const char *p = end - SBX_TB_TEXT_MAX, *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl != NULL && nl + 1 < end)
			p = nl + 1; /* start at a line */
		t = (struct span){p, (size_t)(end - p)};
		cut = true;
	}
	ok &= put(o, "text", jstr_cut(t, SBX_TB_TEXT_MAX, true, &cut));
	if (cut)
		ok &= put(o, "text_truncated", json_true());
	return ok;
}

static json_t *chain_json(const struct parser *ps)
{
	size_t nch = ps->nchain < SBX_TB_MAX_CHAIN ? ps->nchain : SBX_TB_MAX_CHAIN, i;
	json_t *chain = json_array();
	bool ok = chain != NULL;

	for (i = ps->nchain - nch; ok && i < ps->nchain; i++) {
		size_t k = i % SBX_TB_MAX_CHAIN;
		json_t *c = json_object();
		ok = c != NULL;
		ok &= put(c, "type", jstr(ps->chain[k].type, SBX_TB_FIELD_MAX));
		ok &= put(c, "message", jstr(rtrim(ps->chain[k].message), SBX_TB_MESSAGE_MAX));
		ok &= json_array_append_new(chain, c) == 0;
	}
	if (!ok) {
		json_decref(chain);
		return NULL;
	}
	return chain;
}

/* Every put() below is evaluated even after a failure: the *_new calls
 * consume their value either way, so nothing leaks. */
static json_t *python_json(const struct parser *ps)
{
	const struct block *b = &ps->slot[ps->best];
	size_t kept = b->nframes < SBX_TB_MAX_FRAMES ? b->nframes : SBX_TB_MAX_FRAMES, i;
	json_t *o = json_object(), *frames = json_array();
	bool ok = o != NULL && frames != NULL;

	for (i = b->nframes - kept; ok && i < b->nframes; i++)
		ok = json_array_append_new(frames, frame_json(&b->frames[i % SBX_TB_MAX_FRAMES])) == 0;
	ok &= put(o, "type", b->has_exc ? jstr(b->type, SBX_TB_FIELD_MAX) : json_null());
	ok &= put(o, "message", b->has_exc ? jstr(rtrim(b->message), SBX_TB_MESSAGE_MAX) : json_null());
	ok &= put(o, "line", b->has_user_line ? json_integer((json_int_t)b->user_line) : json_null());
	ok &= put(o, "frames", frames);
	if (b->nframes > kept)
		ok &= put(o, "frames_omitted", json_integer((json_int_t)(b->nframes - kept)));
	ok &= put(o, "chain", chain_json(ps));
	ok &= o != NULL && put_text(o, ps->group_start, b->end);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The next line at *p (without "\n"; a trailing "\r" dropped); false at the end. */
static bool next_line(const char **p, const char *e, struct span *l)
{
	const char *nl;

	if (*p >= e)
		return false;
	nl = memchr(*p, '\n', (size_t)(e - *p));
	*l = (struct span){*p, (size_t)((nl ? nl : e) - *p)};
	if (l->n > 0 && l->p[l->n - 1] == '\r')
		l->n--;
	*p = nl ? nl + 1 : e;
	return true;
}

static json_t *parse_python(const char *text, size_t len)
{
	struct parser *ps = malloc(sizeof(*ps));
	const char *p = text;
	struct span l;
	json_t *out = NULL;

	if (ps == NULL)
		return NULL;
	ps->cur = ps->best = -1;
	ps->st = S_IDLE;
	ps->nchain = 0;
	ps->group_start = text;
	ps->expect_source = false;
	while (next_line(&p, text + len, &l))
		feed(ps, l);
	if (ps->best >= 0)
		out = python_json(ps);
	free(ps);
	return out;
}

/* "FILE: line N: MSG" (bash) or "FILE: N: MSG" (dash). */
static bool parse_sh(struct span l, struct span *file, unsigned long *line, struct span *msg)
{
	const char *e = l.p + l.n, *c = find(l.p, e, ": "), *r;

	if (c == NULL || c == l.p || memchr(l.p, ' ', (size_t)(c - l.p)) != NULL)
		return false;
	r = c + 2;
	if (starts((struct span){r, (size_t)(e - r)}, "line "))
		r += 5;
	if (!parse_number(&r, e, line) || !starts((struct span){r, (size_t)(e - r)}, ": "))
		return false;
	*file = (struct span){l.p, (size_t)(c - l.p)};
	*msg = (struct span){r + 2, (size_t)(e - r - 2)};
	return true;
}

static json_t *parse_shell(const char *text, size_t len)
{
	const char *p = text;
	struct span l, file, msg, best_l = {0}, best_file = {0}, best_msg = {0};
	unsigned long line, best_line = 0;
	bool found = false, best_in_code = false, ok;
	json_t *o, *frames, *fr;

	while (next_line(&p, text + len, &l)) {
		bool in_code;
		if (!parse_sh(l, &file, &line, &msg))
			continue;
		in_code = starts(file, "/code/");
		if (in_code || !best_in_code) {
			best_l = l;
			best_file = file;
			best_msg = msg;
			best_line = line;
			best_in_code = in_code;
			found = true;
		}
	}
	if (!found)
		return NULL;
	o = json_object();
	frames = json_array();
	fr = json_object();
	ok = o != NULL && frames != NULL && fr != NULL;
	ok &= put(fr, "file", jstr(best_file, SBX_TB_FIELD_MAX));
	ok &= put(fr, "line", json_integer((json_int_t)best_line));
	ok &= put(fr, "function", json_null());
	ok &= put(fr, "text", json_null());
	ok &= json_array_append_new(frames, fr) == 0;
	ok &= put(o, "type", json_string("ShellError"));
	ok &= put(o, "message", jstr(rtrim(best_msg), SBX_TB_MESSAGE_MAX));
	ok &= put(o, "line", best_in_code ? json_integer((json_int_t)best_line) : json_null());
	ok &= put(o, "frames", frames);
	ok &= put(o, "chain", json_array());
	ok &= o != NULL && put_text(o, best_l.p, best_l.p + best_l.n);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *sbx_traceback_parse(const char *stderr_text, size_t len, const char *language)
{
	if (stderr_text == NULL)
		return NULL;
	if (language == NULL || strncmp(language, "python", 6) == 0)
		return parse_python(stderr_text, len);
	if (strcmp(language, "sh") == 0 || strcmp(language, "bash") == 0 ||
	    strcmp(language, "dash") == 0 || strcmp(language, "shell") == 0)
		return parse_shell(stderr_text, len);
	return NULL;
}
