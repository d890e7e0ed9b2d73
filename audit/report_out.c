/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit report: text, CSV and JSON renderings of the report tables.
 * Cells hold what the log holds (user names, session ids and policy names
 * chosen by callers, possibly edited), so text goes through out_esc and
 * JSON through out_json_str, like every other output of sbx-audit.
 */
#include "cli.h"
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"

const char *rcell_text(const struct rcell *c, size_t *n)
{
	static char buf[32];

	switch (c->type) {
	case RC_INT:
		snprintf(buf, sizeof(buf), "%" PRId64, c->i);
		*n = strlen(buf);
		return buf;
	case RC_TEXT:
		*n = c->n;
		return c->s;
	default:
		*n = 0;
		return "";
	}
}

int rtable_flagged(const struct rtable *t, size_t r)
{
	const struct rcell *x;
	size_t c;

	if (t->alert == NULL)
		return 0;
	for (c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c], t->alert) == 0) {
			x = RT_CELL(t, r, c);
			return x->type != RC_TEXT || strcmp(x->s, "yes") != 0;
		}
	return 0;
}

/* Escaped text of a cell (malloc'd); NULL shows as "-" in text. */
static char *cell_esc(const struct rcell *c, const char *null)
{
	size_t n;
	const char *s = rcell_text(c, &n);

	if (c->type == RC_NULL)
		return out_need(strdup(null));
	return out_esc(s, n, 0);
}

/* Numbers right-aligned, text left-aligned, as aureport does. */
static void text_table(FILE *f, const struct rtable *t)
{
	size_t *w = out_need(calloc(t->ncols, sizeof(*w)));
	char **e = out_need(calloc(t->nrows * t->ncols + 1, sizeof(*e)));
	size_t r, c;

	for (c = 0; c < t->ncols; c++)
		w[c] = strlen(t->cols[c]);
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			char *s = e[r * t->ncols + c] = cell_esc(RT_CELL(t, r, c), "-");
			/* Width in bytes: close enough for the ASCII this log mostly holds. */
			if (strlen(s) > w[c])
				w[c] = strlen(s);
		}
	fprintf(f, "%s\n", t->title);
	/* a flagged row starts with "!", in a column of its own */
	if (t->alert != NULL)
		fputs("  ", f);
	for (c = 0; c < t->ncols; c++)
		fprintf(f, "%s%-*s", c ? "  " : "", c + 1 < t->ncols ? (int)w[c] : 0, t->cols[c]);
	fputc('\n', f);
	for (r = 0; r < t->nrows; r++) {
		if (t->alert != NULL)
			fputs(rtable_flagged(t, r) ? "! " : "  ", f);
		for (c = 0; c < t->ncols; c++) {
			const char *s = e[r * t->ncols + c];
			int num = RT_CELL(t, r, c)->type == RC_INT;
			int last = c + 1 == t->ncols;
			fprintf(f, "%s%*s", c ? "  " : "", num ? (int)w[c] : last ? 0 : -(int)w[c], s);
		}
		fputc('\n', f);
	}
	if (t->nrows == 0)
		fputs("(none)\n", f);
	for (r = 0; r < t->nrows * t->ncols; r++)
		free(e[r]);
	free(e);
	free(w);
}

static void text_single(FILE *f, const struct rtable *t)
{
	size_t c, w = 0;

	fprintf(f, "%s\n", t->title);
	for (c = 0; c < t->ncols; c++)
		if (strlen(t->cols[c]) > w)
			w = strlen(t->cols[c]);
	for (c = 0; c < t->ncols && t->nrows > 0; c++) {
		char *s = cell_esc(RT_CELL(t, 0, c), "-");
		fprintf(f, "  %-*s  %s\n", (int)w + 1, t->cols[c], s);
		free(s);
	}
}

static void text_prov(FILE *f, const struct provenance *p)
{
	char when[48];

	sbx_iso_time(p->generated_ns, when, sizeof(when));
	fputs("log: ", f);
	out_str(f, p->db);
	fputs("\norigin: ", f);
	out_str(f, p->origin[0] ? p->origin : "(unknown)");
	fprintf(f, "\nkey: %s\nkey sha256: %s\nverify: ", p->vkey[0] ? p->vkey : "(unreadable)",
		p->fingerprint[0] ? p->fingerprint : "(unreadable)");
	out_str(f, p->verify);
	fprintf(f, "\ngenerated: %s\n", when);
}

int report_text(FILE *f, const struct report *r)
{
	size_t i;
	int first = 1;

	if (r->prov != NULL) {
		text_prov(f, r->prov);
		first = 0;
	}
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->t[i].name, "days") == 0)
			continue; /* the chart's data; --by day is the table */
		if (!first)
			fputc('\n', f);
		first = 0;
		if (r->t[i].single)
			text_single(f, &r->t[i]);
		else
			text_table(f, &r->t[i]);
	}
	return ferror(f) ? -1 : 0;
}

/*
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break. Text that a spreadsheet would run as a formula (= + - @ at the
 * start) gets a leading apostrophe (OWASP "CSV injection").
 */
static void csv_field(FILE *f, const struct rcell *c)
{
	char *s = cell_esc(c, ""), *p;
	int quote = strpbrk(s, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', f);
	if (c->type == RC_TEXT && strchr("=+-@", s[0]) != NULL && s[0] != '\0')
		fputc('\'', f);
	for (p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
	free(s);
}

int report_csv(FILE *f, const struct report *r)
{
	size_t i, row, c, shown = 0;

	for (i = 0; i < r->n; i++) {
		const struct rtable *t = &r->t[i];
		if (strcmp(t->name, "days") == 0)
			continue;
		if (shown++)
			fputc('\n', f); /* tables are separated by one empty line */
		for (c = 0; c < t->ncols; c++)
			fprintf(f, "%s%s", c ? "," : "", t->cols[c]);
		fputs("\r\n", f);
		for (row = 0; row < t->nrows; row++) {
			for (c = 0; c < t->ncols; c++) {
				if (c)
					fputc(',', f);
				csv_field(f, RT_CELL(t, row, c));
			}
			fputs("\r\n", f);
		}
	}
	return ferror(f) ? -1 : 0;
}

static json_t *jcell(const struct rcell *c)
{
	switch (c->type) {
	case RC_INT:
		return out_need(json_integer(c->i));
	case RC_TEXT:
		return out_json_str(c->s, c->n);
	default:
		return json_null();
	}
}

static json_t *jrow(const struct rtable *t, size_t r)
{
	json_t *o = out_need(json_object());
	size_t c;

	for (c = 0; c < t->ncols; c++)
		json_object_set_new(o, t->cols[c], jcell(RT_CELL(t, r, c)));
	return o;
}

static json_t *jtime(int64_t ns, int absent)
{
	char buf[48];

	if (absent || sbx_iso_time(ns, buf, sizeof(buf)) < 0)
		return json_null();
	return out_need(json_string(buf));
}

json_t *report_json_doc(const struct report *r, const struct ropts *o)
{
	json_t *doc = out_need(json_object());
	size_t i, row;

	if (r->prov != NULL) {
		const struct provenance *p = r->prov;
		json_object_set_new(doc, "provenance", out_need(json_pack(
			"{s:o,s:o,s:s?,s:s?,s:b,s:o,s:o}",
			"log", out_json_str(p->db, strlen(p->db)),
			"origin", out_json_str(p->origin, strlen(p->origin)),
			"key", p->vkey[0] ? p->vkey : NULL,
			"key_sha256", p->fingerprint[0] ? p->fingerprint : NULL,
			"verified", p->verified,
			"verify", out_json_str(p->verify, strlen(p->verify)),
			"generated", jtime(p->generated_ns, 0))));
	}
	json_object_set_new(doc, "since", jtime(o->since_ns, o->since_ns == 0));
	json_object_set_new(doc, "until", jtime(o->until_ns, o->until_ns == INT64_MAX));
	for (i = 0; i < r->n; i++) {
		const struct rtable *t = &r->t[i];
		json_t *v;
		if (t->single) {
			v = t->nrows ? jrow(t, 0) : out_need(json_object());
		} else {
			v = out_need(json_array());
			for (row = 0; row < t->nrows; row++)
				json_array_append_new(v, jrow(t, row));
		}
		json_object_set_new(doc, t->name, v);
	}
	return doc;
}

int report_json(FILE *f, const struct report *r, const struct ropts *o)
{
	json_t *doc = report_json_doc(r, o);
	int rc;

	rc = json_dumpf(doc, f, JSON_INDENT(2));
	json_decref(doc);
	if (rc < 0)
		return -1;
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
