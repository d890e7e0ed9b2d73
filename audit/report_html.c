/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit report --html: one self-contained page (inline CSS, an inline
 * SVG chart drawn here, no script, no external resource; a Content
 * Security Policy forbids loading any) with the summary and the tables.
 * Every string from the log is made terminal-safe by out_esc and then
 * HTML-escaped, so a user or session name cannot inject markup.
 */
#include "cli.h"
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auditdb.h"
#include "outcome.h"

/* One colour per outcome (the outcome table's), then anything else. */
#define NPAL (SBX_OUTCOME_N + 1)
static const char *pal_color(size_t i)
{
	return i < SBX_OUTCOME_N ? sbx_outcome_defs[i].color : "#fbc02d";
}

static size_t pal_index(const char *outcome)
{
	const struct sbx_outcome_def *o = sbx_outcome_by_name(outcome);

	return o != NULL ? (size_t)o->id : NPAL - 1;
}

const char *report_color(const char *outcome)
{
	return pal_color(pal_index(outcome));
}
static const char *pal_name(size_t i)
{
	return i < SBX_OUTCOME_N ? sbx_outcome_defs[i].name : "other";
}

static void html_bytes(FILE *f, const char *s, size_t n)
{
	char *e = out_esc(s, n, 0), *p;

	for (p = e; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*p, f);
		}
	}
	free(e);
}

static void html_str(FILE *f, const char *s)
{
	html_bytes(f, s, strlen(s));
}

static void html_cell(FILE *f, const struct rcell *c)
{
	size_t n;
	const char *s = rcell_text(c, &n);

	if (c->type == RC_NULL)
		fputs("&ndash;", f);
	else
		html_bytes(f, s, n);
}


/* Stacked bars: one per day that has runs, one segment per outcome. */
static void chart(FILE *f, const struct rtable *t)
{
	/* Labels are 11 px text, at most 8 px per character (a 10-character
	 * date is about 70 px): the left margin fits the largest count, the
	 * width at least one date label past the first bar. */
	enum { H = 200, TOP = 20, BOTTOM = 40, CH = 8, DATE_W = 10 * CH };
	size_t ndays = 0, r, i;
	char (*days)[16], maxtxt[24];
	int64_t (*counts)[NPAL], max = 0;
	int bw, width, left, bars;
	int present[NPAL] = {0};

	if (t == NULL || t->nrows == 0 || t->ncols != 3) {
		fputs("<p>No runs in this window.</p>\n", f);
		return;
	}
	days = out_need(calloc(t->nrows, sizeof(*days)));
	counts = out_need(calloc(t->nrows, sizeof(*counts)));
	for (r = 0; r < t->nrows; r++) {
		size_t n;
		const char *d = rcell_text(RT_CELL(t, r, 0), &n);
		const char *o = RT_CELL(t, r, 1)->type == RC_TEXT ? RT_CELL(t, r, 1)->s : "";
		size_t p = pal_index(o);
		if (ndays == 0 || strncmp(days[ndays - 1], d, sizeof(days[0]) - 1) != 0)
			snprintf(days[ndays++], sizeof(days[0]), "%.*s", (int)(n < 15 ? n : 15), d);
		counts[ndays - 1][p] += RT_CELL(t, r, 2)->i;
		present[p] = 1;
	}
	for (i = 0; i < ndays; i++) {
		int64_t sum = 0;
		size_t p;
		for (p = 0; p < NPAL; p++)
			sum += counts[i][p];
		if (sum > max)
			max = sum;
	}
	bw = (int)(900 / ndays);
	bw = bw > 40 ? 40 : bw < 3 ? 3 : bw;
	snprintf(maxtxt, sizeof(maxtxt), "%" PRId64, max);
	left = 12 + CH * (int)strlen(maxtxt);
	bars = (int)ndays * bw;
	/* the first date starts at the first bar, the last ends at the last */
	width = left + (bars > DATE_W ? bars : DATE_W) + 20;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"role=\"img\" aria-label=\"Runs per day by outcome\">\n", width, TOP + H + BOTTOM);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n",
		left - 2, TOP + H, width - 10, TOP + H);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">%" PRId64 "</text>\n",
		left - 6, TOP + 8, max);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">0</text>\n",
		left - 6, TOP + H);
	for (i = 0; i < ndays; i++) {
		double y = TOP + H;
		size_t p;
		for (p = 0; p < NPAL; p++) {
			double h;
			if (counts[i][p] == 0)
				continue;
			h = (double)counts[i][p] * H / (double)max;
			y -= h;
			fprintf(f, "<rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" fill=\"%s\">"
				"<title>", left + (int)i * bw, y, bw > 3 ? bw - 1 : bw, h, pal_color(p));
			html_str(f, days[i]);
			fprintf(f, " %s: %" PRId64 "</title></rect>\n", pal_name(p), counts[i][p]);
		}
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\">", left, TOP + H + 16);
	html_str(f, days[0]);
	fputs("</text>\n", f);
	if (ndays > 1) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">",
			left + (int)ndays * bw, TOP + H + 32);
		html_str(f, days[ndays - 1]);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n<p class=\"legend\">", f);
	for (i = 0; i < NPAL; i++)
		if (present[i])
			fprintf(f, "<span><i style=\"background:%s\"></i>%s</span> ", pal_color(i), pal_name(i));
	fputs("</p>\n", f);
	free(days);
	free(counts);
}

static void table(FILE *f, const struct rtable *t, const char *idp)
{
	size_t r, c;

	fprintf(f, "<section id=\"%s%s\"><h2>", idp, t->name);
	html_str(f, t->title);
	fputs("</h2>\n", f);
	if (t->single) {
		fputs("<table class=\"kv\">\n", f);
		for (c = 0; c < t->ncols && t->nrows > 0; c++) {
			fputs("<tr><th>", f);
			html_str(f, t->cols[c]);
			fputs("</th><td>", f);
			html_cell(f, RT_CELL(t, 0, c));
			fputs("</td></tr>\n", f);
		}
		fputs("</table></section>\n", f);
		return;
	}
	if (t->nrows == 0) {
		fputs("<p>None.</p></section>\n", f);
		return;
	}
	fputs("<table>\n<thead><tr>", f);
	for (c = 0; c < t->ncols; c++) {
		fputs("<th>", f);
		html_str(f, t->cols[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputs(rtable_flagged(t, r) ? "<tr class=\"alert\">" : "<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			fputs(RT_CELL(t, r, c)->type == RC_INT ? "<td class=\"n\">" : "<td>", f);
			html_cell(f, RT_CELL(t, r, c));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></section>\n", f);
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;background:#fff}"
	"h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:.4em 0}"
	"th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}"
	"thead th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"table.kv th{background:#f6f6f6}.ax{font-size:11px;fill:#444}"
	".legend span{margin-right:1em}.legend i{display:inline-block;width:.9em;height:.9em;"
	"margin-right:.3em;vertical-align:middle}p.meta{color:#555}"
	"tr.alert td{background:#fde7e9;color:#8e0012;font-weight:600}"
	"td.bad{color:#8e0012;font-weight:600}";

/* "CET, UTC+01:00": the zone that days and hours are counted in (its
 * offset now; the tables follow the zone's rules across DST changes). */
static void local_zone(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;
	long off;

	if (localtime_r(&now, &tm) == NULL) {
		snprintf(buf, n, "local time");
		return;
	}
	off = tm.tm_gmtoff;
	snprintf(buf, n, "%s, UTC%c%02ld:%02ld", tm.tm_zone ? tm.tm_zone : "?",
		 off < 0 ? '-' : '+', labs(off) / 3600, labs(off) % 3600 / 60);
}

static void page_head(FILE *f, const struct ropts *o)
{
	char since[48] = "the beginning", until[48] = "now", zone[64];

	if (o->since_ns != 0)
		sbx_iso_time(o->since_ns, since, sizeof(since));
	if (o->until_ns != INT64_MAX)
		sbx_iso_time(o->until_ns, until, sizeof(until));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<title>sbx audit report</title>\n<style>", f);
	fputs(css, f);
	fputs("</style></head><body>\n<h1>sbx audit report</h1>\n<p class=\"meta\">Runs from ", f);
	html_str(f, since);
	fputs(" until ", f);
	html_str(f, until);
	fputs(" (UTC). Days and hours are counted in local time (", f);
	local_zone(zone, sizeof(zone));
	html_str(f, zone);
	fputs("). Counts come from the log's columns, which verify checks against the "
	      "signed records (the applies from the signed records themselves).</p>\n", f);
}

static void page_body(FILE *f, const struct report *r, const char *idp)
{
	size_t i;

	if (r->prov != NULL) {
		const struct provenance *p = r->prov;
		char when[48];
		sbx_iso_time(p->generated_ns, when, sizeof(when));
		fprintf(f, "<section id=\"%sprovenance\"><h2>What this report stands on</h2>\n<table>"
		      "<tr><th>log</th><td>", idp);
		html_str(f, p->db);
		fputs("</td></tr>\n<tr><th>origin</th><td>", f);
		html_str(f, p->origin[0] ? p->origin : "(unknown)");
		fputs("</td></tr>\n<tr><th>key</th><td><code>", f);
		html_str(f, p->vkey[0] ? p->vkey : "(unreadable)");
		fputs("</code></td></tr>\n<tr><th>key SHA-256</th><td><code>", f);
		html_str(f, p->fingerprint[0] ? p->fingerprint : "(unreadable)");
		fprintf(f, "</code></td></tr>\n<tr><th>verify</th><td class=\"%s\">",
			p->verified ? "ok" : "bad");
		html_str(f, p->verify);
		fputs("</td></tr>\n<tr><th>generated</th><td>", f);
		html_str(f, when);
		fputs("</td></tr></table></section>\n", f);
	}
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->t[i].name, "days") == 0)
			continue;
		table(f, &r->t[i], idp);
		if (strcmp(r->t[i].name, "summary") == 0) {
			fprintf(f, "<section id=\"%schart\"><h2>", idp);
			fputs("Runs per day by outcome (local time)</h2>\n", f);
			chart(f, report_find(r, "days"));
			fputs("</section>\n", f);
		}
	}
}

int report_html(FILE *f, const struct report *r, const struct ropts *o)
{
	page_head(f, o);
	page_body(f, r, "");
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}

/* The summary's cell of column col as text, or "". */
static const char *summary_cell(const struct report *r, const char *col, char *buf, size_t len)
{
	const struct rtable *t = report_find(r, "summary");
	size_t c;

	buf[0] = '\0';
	for (c = 0; t != NULL && t->nrows > 0 && c < t->ncols; c++) {
		const struct rcell *x = RT_CELL(t, 0, c);
		if (strcmp(t->cols[c], col) != 0)
			continue;
		if (x->type == RC_INT)
			snprintf(buf, len, "%" PRId64, x->i);
		else if (x->type == RC_TEXT)
			snprintf(buf, len, "%s", x->s);
	}
	return buf;
}

int report_html_hosts(FILE *f, const struct report *r, const char *const *names, size_t n,
		      const struct ropts *o)
{
	char idp[32], cell[64];
	size_t i;

	page_head(f, o);
	fprintf(f, "<section id=\"hosts\"><h2>Hosts (%zu)</h2>\n<table><tr><th>host</th><th>runs</th>"
		"<th>failed</th><th>verify</th></tr>\n", n);
	for (i = 0; i < n; i++) {
		fprintf(f, "<tr><td><a href=\"#h%zu\">", i);
		html_str(f, names[i]);
		fputs("</a></td><td>", f);
		html_str(f, summary_cell(&r[i], "runs", cell, sizeof(cell)));
		fputs("</td><td>", f);
		html_str(f, summary_cell(&r[i], "failed", cell, sizeof(cell)));
		fprintf(f, "</td><td class=\"%s\">", r[i].prov && r[i].prov->verified ? "ok" : "bad");
		html_str(f, r[i].prov ? r[i].prov->verify : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
	for (i = 0; i < n; i++) {
		snprintf(idp, sizeof(idp), "h%zu-", i);
		fprintf(f, "<section class=\"host\" id=\"h%zu\"><h2>Host ", i);
		html_str(f, names[i]);
		fputs("</h2>\n", f);
		page_body(f, &r[i], idp);
		fputs("</section>\n", f);
	}
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
