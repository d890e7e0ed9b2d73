/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit report: tables computed by SQL aggregates over the log's
 * columns (report_query.c) and rendered as text, CSV, JSON
 * (report_out.c) or one HTML page (report_html.c). A table is filled from
 * a statement's result set, so the SQL names the columns and the renderers
 * need not know what a report is about.
 */
#ifndef SBX_AUDIT_REPORT_H
#define SBX_AUDIT_REPORT_H
#include <sqlite3.h>
#include <stdint.h>
#include <jansson.h>
#include <stdio.h>

#include "outcome.h"
#include "policy.h" /* SBX_ERR_LEN */

enum rcell_type { RC_NULL = 0, RC_INT, RC_TEXT };

struct rcell {
	enum rcell_type type;
	int64_t i;
	char *s;   /* RC_TEXT: n bytes + NUL, malloc'd; untrusted (from the log) */
	size_t n;
};

struct rtable {
	const char *name;   /* JSON key, HTML id: "by_user" */
	const char *title;  /* heading: "Runs by user" */
	int single;         /* one row shown as "name: value" lines / a JSON object */
	const char *alert;  /* a column, or NULL: a row whose cell there is not "yes" is
			     * flagged (HTML: class alert), e.g. an applied changeset
			     * that is not the one its run's END signed */
	size_t ncols;
	char **cols;        /* column names, from the SQL */
	size_t nrows, cap;
	struct rcell *cells; /* row-major, nrows * ncols */
};

#define RT_CELL(t, r, c) (&(t)->cells[(size_t)(r) * (t)->ncols + (size_t)(c)])

/* Report sections; summary is the default when none is asked for. */
enum rsect {
	RS_SUMMARY = 1 << 0,
	RS_BY = 1 << 1,
	RS_FAILED = 1 << 2,
	RS_LIMITS = 1 << 3,
	RS_TOPCODE = 1 << 4,
	RS_SESSIONS = 1 << 5,
	RS_DAYCHART = 1 << 6, /* runs per day by outcome, for the HTML chart */
	RS_NETWORK = 1 << 7,  /* [network] mode = allow: totals and destinations */
	RS_ENVIRONMENTS = 1 << 8, /* runs per environment; code whose outcome changed with it */
	RS_APPLIES = 1 << 9,  /* sbx apply: each applied changeset, its run, the digest check */
};

enum rby { BY_USER, BY_POLICY, BY_OUTCOME, BY_LANGUAGE, BY_DAY, BY_HOUR, BY_N };

struct ropts {
	int64_t since_ns, until_ns; /* window: since <= t < until (ns, UTC) */
	unsigned sections;          /* RS_* */
	unsigned by;                /* bit set of 1 << enum rby */
	int64_t top_n;              /* --top-code N */
	int64_t failed_max;         /* rows of the failed list (-1: all) */
};

/* The --by tables break runs down by outcome in the order of the outcome
 * table (outcome.h), then "other". */
extern const char *const report_by_names[BY_N];
/* The HTML chart's colour of an outcome (its row's; another for names
 * not in the table). */
const char *report_color(const char *outcome);

/* What a report stands on (cmd_report.c fills it): which log, signed by
 * which key, whether it verified, when the report was made. Text and JSON
 * print it first, HTML at the top; CSV stays tables only. */
struct provenance {
	const char *db;             /* the log's path */
	char origin[256];           /* newest checkpoint's origin, else the last record's */
	char vkey[512];             /* C2SP verifier key of the public key, or "" */
	char fingerprint[72];       /* SHA-256 of the public key, hex, or "" */
	char verify[SBX_ERR_LEN + 64]; /* one line: verify's result, or why it did not run */
	int verified;               /* 1 clean, 0 findings or not run */
	int64_t generated_ns;
};

struct report {
	struct rtable *t;
	size_t n;
	const struct provenance *prov; /* NULL: none printed */
};

/*
 * Run every query the options ask for inside one read transaction (a
 * consistent snapshot while runs append). Returns 0, or -1 after printing
 * "sbx-audit: PATH: why".
 */
int report_build(sqlite3 *db, const char *path, const struct ropts *o, struct report *r);
void report_free(struct report *r);

/* Renderers; each returns 0, or -1 on a write error. */
int report_text(FILE *f, const struct report *r);
int report_csv(FILE *f, const struct report *r);
int report_json(FILE *f, const struct report *r, const struct ropts *o);
/* The JSON document report_json prints (new reference). */
json_t *report_json_doc(const struct report *r, const struct ropts *o);
/* One page for a central store (report --hosts): an overview table of the
 * hosts, then each host's sections under its own heading (ids prefixed
 * "hN-"). names[i] is host i's origin. */
int report_html_hosts(FILE *f, const struct report *r, const char *const *names, size_t n,
		      const struct ropts *o);
/* The whole page; tables named "days" feed the chart. */
int report_html(FILE *f, const struct report *r, const struct ropts *o);

/* A table by name, or NULL. */
const struct rtable *report_find(const struct report *r, const char *name);
/* Whether row r is flagged by the table's alert column (1), or not (0). */
int rtable_flagged(const struct rtable *t, size_t r);
/* The cell as text: integers in decimal, NULL as "" (static buffer for
 * integers, valid until the next call). */
const char *rcell_text(const struct rcell *c, size_t *n);

#endif
