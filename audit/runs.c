/* SPDX-License-Identifier: ISC */
/*
 * search and export: one query over runs. Two shapes, so that SQLite can
 * drive the query from the most selective index:
 *   - from START rows (LEFT JOIN the END): no outcome filter, or
 *     --outcome incomplete (no END at all);
 *   - from END rows (LEFT JOIN the START): an outcome filter, and export.
 * The common columns (user, policy, ...) are on both kinds of record, so
 * the filters go on the driving row. The START time is the run's time.
 */
#include "runs.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "cli.h"
#include "outcome.h"

static const char *const colnames[RC_NCOLS] = {
	"id", "start_seq", "end_seq", "time", "end_time", "uid", "user", "host",
	"policy", "language", "code_sha256", "session", "attempt", "parent_id",
	"outcome", "exit_code", "signal", "limit_fired", "wall_ms", "cpu_ms",
	"memory_peak_bytes", "stdout_bytes", "stderr_bytes", "artifacts",
};

int runs_outcome_ok(const char *s)
{
	return sbx_outcome_by_name(s) != NULL;
}

int runs_parse_format(const char *s, enum run_format *f)
{
	static const char *const names[] = {"table", "csv", "json", "jsonl"};
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*f = (enum run_format)i;
			return 0;
		}
	}
	return -1;
}

struct bind {
	int is_blob;
	const char *s;
	size_t n;
	int64_t i;
	int is_int;
};

struct q {
	FILE *m;
	struct bind b[32];
	int nb;
};

static void add_text(struct q *q, const char *sql, const char *v)
{
	fprintf(q->m, " AND %s", sql);
	q->b[q->nb++] = (struct bind){.s = v, .n = strlen(v)};
}

/* 1 if table records has the column (a projected field's, recfield.h). */
static int has_column(sqlite3 *db, const char *col)
{
	sqlite3_stmt *st;
	int found;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('records') WHERE name = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int has_fts(sqlite3 *db)
{
	sqlite3_stmt *st;
	int found;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='code_fts'",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Unicode characters in s (the trigram index needs at least three). */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The FTS5 query for a literal substring: one phrase, quotes doubled. */
static char *fts_phrase(const char *s)
{
	size_t n = strlen(s), i, j = 0;
	char *p = out_need(malloc(2 * n + 3));

	p[j++] = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			p[j++] = '"';
		p[j++] = s[i];
	}
	p[j++] = '"';
	p[j] = '\0';
	return p;
}

/* Code texts that match (at most 65 counted), or 0 on a read error (the
 * main query then reports it). */
static int code_matches(sqlite3 *db, const char *sub, const char *phrase, const char *needle)
{
	sqlite3_stmt *st;
	char *sql = NULL;
	int n = 0, i = 1;

	if (asprintf(&sql, "SELECT count(*) FROM (%s LIMIT 65)", sub) < 0)
		out_need(NULL);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (phrase)
			sqlite3_bind_text(st, i++, phrase, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, i, needle, (int)strlen(needle), SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	free(sql);
	return n;
}

/*
 * walk: the newest N runs by END with only outcome filters to go by. The
 * outcome index would find every match and sort them; walking the ENDs
 * backwards stops after N (outcomes are not rare enough for the index to
 * win then).
 */
static void filters(struct q *q, const struct run_filter *f, char c, int walk,
		    sqlite3 *db, char **phrase)
{
	char sql[160];

#define COL(name) (snprintf(sql, sizeof(sql), "%c." name " = ?", c), sql)
	if (f->user)
		add_text(q, COL("user"), f->user);
	if (f->has_uid) {
		fprintf(q->m, " AND %c.uid = ?", c);
		q->b[q->nb++] = (struct bind){.is_int = 1, .i = f->uid};
	}
	if (f->policy)
		add_text(q, COL("policy"), f->policy);
	if (f->language)
		add_text(q, COL("language"), f->language);
	if (f->session)
		add_text(q, COL("session"), f->session);
	if (f->code_sha256[0])
		add_text(q, COL("code_sha256"), f->code_sha256);
#undef COL
	/* the environment is START's (fields 140-141, recfield.h) */
	if (f->image)
		add_text(q, "s.image = ?", f->image);
	if (f->image_digest[0])
		add_text(q, "s.image_digest = ?", f->image_digest);
	if (f->code_contains) {
		/* The trigram index narrows; instr() over the bytes decides, so
		 * the match is exact and case-sensitive either way. */
		int fts = utf8_chars(f->code_contains) >= 3 && has_fts(db);
		const char *sub = fts ? "SELECT sha256 FROM code WHERE rowid IN (SELECT rowid FROM"
					" code_fts WHERE code_fts MATCH ?) AND instr(text, ?) > 0"
				      : "SELECT sha256 FROM code WHERE instr(text, ?) > 0";
		if (fts)
			*phrase = fts_phrase(f->code_contains);
		/* A few code texts: look their runs up by digest. Many: the
		 * lookups would cost more than walking the runs ("+" keeps
		 * SQLite from driving the query from the IN list). */
		fprintf(q->m, " AND %s%c.code_sha256 IN (%s)",
			code_matches(db, sub, *phrase, f->code_contains) > 64 ? "+" : "", c, sub);
		if (fts)
			q->b[q->nb++] = (struct bind){.s = *phrase, .n = strlen(*phrase)};
		q->b[q->nb++] = (struct bind){.is_blob = 1, .s = f->code_contains,
					      .n = strlen(f->code_contains)};
	}
	if (f->dest[0] && !has_column(db, "net_reached"))
		fprintf(q->m, " AND 0"); /* a log no egress run has written */
	else if (f->dest[0]) {
		/* the END's destination lists (JSON arrays); a tampered cell
		 * that is not JSON matches nothing rather than failing */
		fprintf(q->m, " AND EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(e.net_reached)"
			" THEN e.net_reached ELSE '[]' END) WHERE value LIKE ? ESCAPE '\\'"
			" UNION ALL SELECT 1 FROM json_each(CASE WHEN json_valid(e.net_refused_dests)"
			" THEN e.net_refused_dests ELSE '[]' END) WHERE value LIKE ? ESCAPE '\\')");
		q->b[q->nb++] = (struct bind){.s = f->dest, .n = strlen(f->dest)};
		q->b[q->nb++] = (struct bind){.s = f->dest, .n = strlen(f->dest)};
	}
	if (f->applied && !has_column(db, "applied_run"))
		fprintf(q->m, " AND 0"); /* a log no sbx apply has written to */
	else if (f->applied)
		/* APPLY records name the run they applied (recfield.h 185, 191) */
		fprintf(q->m, " AND EXISTS (SELECT 1 FROM records a WHERE a.kind = 'apply'"
			" AND a.applied_run = %c.run_id AND a.apply_result IN ('applied', 'partial'))", c);
	if (f->outcome && strcmp(f->outcome, "incomplete") == 0)
		/* an anti-join over the (kind, run_id) index, not a walk of every
		 * START's row */
		fprintf(q->m, " AND NOT EXISTS (SELECT 1 FROM records x WHERE x.kind = 'end'"
			" AND x.run_id = s.run_id AND x.seq > s.seq)");
	else if (f->outcome)
		add_text(q, walk ? "+e.outcome = ?" : "e.outcome = ?", f->outcome);
	if (f->failed) /* two ranges of the outcome index; <> would scan */
		fprintf(q->m, walk ? " AND +e.outcome <> 'ok'" : " AND (e.outcome < 'ok' OR e.outcome > 'ok')");
	if (f->success)
		fprintf(q->m, " AND %se.outcome = 'ok'", walk ? "+" : "");
	if (f->has_since) {
		add_text(q, "s.time >= ?", f->since);
		if (c == 'e') /* an END is never before its START: lets e.time's index help */
			add_text(q, "e.time >= ?", f->since);
	}
	if (f->has_until)
		add_text(q, "s.time < ?", f->until);
	if (f->after_end_seq >= 0) {
		fprintf(q->m, " AND e.seq > ?");
		q->b[q->nb++] = (struct bind){.is_int = 1, .i = f->after_end_seq};
	}
}

int runs_prepare(sqlite3 *db, const char *path, const struct run_filter *f,
		 sqlite3_stmt **st)
{
	int by_end = f->after_end_seq >= 0 || f->failed || f->success ||
		     (f->outcome && strcmp(f->outcome, "incomplete") != 0);
	char c = by_end ? 'e' : 's';
	char *sql = NULL, *phrase = NULL;
	size_t len = 0;
	struct q q = {0};
	int i, rc;

	q.m = out_need(open_memstream(&sql, &len));
	fprintf(q.m,
		"SELECT * FROM (SELECT %c.run_id, s.seq, e.seq, s.time, e.time, %c.uid, %c.user,"
		" %c.host, %c.policy, %c.language, %c.code_sha256, %c.session, %c.attempt,"
		" %c.parent_id, e.outcome, e.exit_code, e.signal, e.limit_fired, e.wall_ms,"
		" e.cpu_ms, e.memory_peak_bytes, e.stdout_bytes, e.stderr_bytes, e.artifacts,"
		" %s AS k%s",
		c, c, c, c, c, c, c, c, c, c,
		f->after_end_seq >= 0 ? "e.seq" : by_end ? "coalesce(s.seq, e.seq)" : "s.seq",
		f->with_fields ? ", s.blob, e.blob" : "");
	/* Without statistics good enough to tell a narrow time range from a
	 * wide one, SQLite prefers walking the table in seq order. A time
	 * range with no exact-match filter is served best by the time index
	 * (part of every log since format 1). */
	/* "+": half the log has each kind; the (kind, run_id) index is for
	 * the join, not for walking every START (except to find those
	 * without an END). */
	/* a limit, and no exact-match filter an index serves better */
	int walk = by_end && f->after_end_seq < 0 && f->limit > 0 && !f->user && !f->has_uid &&
		   !f->session && !f->code_sha256[0] && !f->code_contains && !f->has_since &&
		   !f->image && !f->image_digest[0];
	int incomplete = f->outcome && strcmp(f->outcome, "incomplete") == 0;
	const char *hint = !by_end && (f->has_since || f->has_until) && !f->user && !f->has_uid &&
			   !f->session && !f->code_sha256[0] && !f->code_contains
			   ? " INDEXED BY records_time" : "";
	if (by_end)
		fprintf(q.m, " FROM records e LEFT JOIN records s ON s.seq = (SELECT max(seq) FROM records"
			" WHERE run_id = e.run_id AND kind = 'start' AND seq < e.seq)"
			" WHERE +e.kind = 'end'");
	else
		fprintf(q.m, " FROM records s%s LEFT JOIN records e ON e.seq = (SELECT min(seq) FROM records"
			" WHERE run_id = s.run_id AND kind = 'end' AND seq > s.seq)"
			" WHERE %ss.kind = 'start'", hint, incomplete ? "" : "+");
	filters(&q, f, c, walk, db, &phrase);
	/* The newest N, shown oldest first. Without a limit the inner sort
	 * would only steer the planner towards a walk in seq order. */
	if (f->limit == 0) {
		fprintf(q.m, ") ORDER BY k");
	} else {
		fprintf(q.m, " ORDER BY %s DESC LIMIT ?) ORDER BY k", walk ? "e.seq" : "k");
		q.b[q.nb++] = (struct bind){.is_int = 1, .i = (int64_t)f->limit};
	}
	if (fclose(q.m) != 0)
		out_need(NULL);
	rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		free(phrase);
		cli_err("%s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	for (i = 0; i < q.nb; i++) {
		struct bind *b = &q.b[i];
		if (b->is_int)
			sqlite3_bind_int64(*st, i + 1, b->i);
		else if (b->is_blob)
			sqlite3_bind_blob(*st, i + 1, b->s, (int)b->n, SQLITE_TRANSIENT);
		else
			sqlite3_bind_text(*st, i + 1, b->s, (int)b->n, SQLITE_TRANSIENT);
	}
	free(phrase);
	return 0;
}

/* ---- output ---- */

static const char *text(sqlite3_stmt *st, int i, size_t *n)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	*n = (size_t)sqlite3_column_bytes(st, i);
	return t ? (const char *)t : "";
}

static int finished(sqlite3_stmt *st)
{
	return sqlite3_column_type(st, RC_END_SEQ) != SQLITE_NULL;
}

static json_t *jcol(sqlite3_stmt *st, int i)
{
	size_t n;
	const char *t;
	json_t *j;

	if (i == RC_OUTCOME && !finished(st))
		return out_need(json_string("incomplete"));
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return json_null();
	case SQLITE_INTEGER:
		return out_need(json_integer(sqlite3_column_int64(st, i)));
	default:
		t = text(st, i, &n);
		/* The column is JSON the writer made; keep it structured when
		 * it still is, else show the text. */
		if (i == RC_ARTIFACTS && (j = json_loadb(t, n, JSON_REJECT_DUPLICATES, NULL)) != NULL)
			return j;
		return out_json_str(t, n);
	}
}

/* After the output columns and the sort key: START's and END's blobs. */
enum { RC_BLOB_S = RC_NCOLS + 1, RC_BLOB_E, RC_WITH_FIELDS };

static int with_fields(sqlite3_stmt *st)
{
	return sqlite3_column_count(st) >= RC_WITH_FIELDS;
}

/* The extension fields of START, then those of END (a key both carry is
 * START's): the record-field table says what they are. A blob that does
 * not decode adds nothing (sbx-audit verify reports it). */
static json_t *fields_json(sqlite3_stmt *st)
{
	json_t *o = out_need(json_object());
	int i;

	for (i = RC_BLOB_S; i <= RC_BLOB_E; i++) {
		struct sbx_record r;
		const void *b = sqlite3_column_blob(st, i);
		if (b == NULL ||
		    sbx_record_decode(b, (size_t)sqlite3_column_bytes(st, i), &r, NULL, 0) < 0)
			continue;
		if (sbx_rext_json(&r, o) < 0)
			out_need(NULL);
		sbx_record_free(&r);
	}
	return o;
}

static json_t *row_json(sqlite3_stmt *st)
{
	json_t *o = out_need(json_object());
	int i;

	for (i = 0; i < RC_NCOLS; i++)
		json_object_set_new(o, colnames[i], jcol(st, i));
	if (with_fields(st))
		json_object_set_new(o, "fields", fields_json(st));
	return o;
}

static void csv_text(const char *t)
{
	size_t k;

	if (strpbrk(t, ",\"\r\n") == NULL) {
		fputs(t, stdout);
		return;
	}
	putchar('"');
	for (k = 0; t[k]; k++) {
		if (t[k] == '"')
			putchar('"');
		putchar(t[k]);
	}
	putchar('"');
}

/* RFC 4180: quoted when needed, quotes doubled; text made valid UTF-8. */
static void csv_cell(sqlite3_stmt *st, int i)
{
	size_t n;
	const char *t;
	char *clean;

	if (i == RC_OUTCOME && !finished(st)) {
		fputs("incomplete", stdout);
		return;
	}
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return;
	if (sqlite3_column_type(st, i) == SQLITE_INTEGER) {
		printf("%" PRId64, (int64_t)sqlite3_column_int64(st, i));
		return;
	}
	t = text(st, i, &n);
	clean = out_need(sbx_utf8_sanitize(t, n));
	csv_text(clean);
	free(clean);
}

static void row_csv(sqlite3_stmt *st)
{
	int i;

	for (i = 0; i < RC_NCOLS; i++) {
		if (i)
			putchar(',');
		csv_cell(st, i);
	}
	if (with_fields(st)) {
		json_t *o = fields_json(st);
		char *t = out_need(json_dumps(o, JSON_COMPACT));
		putchar(',');
		csv_text(t);
		free(t);
		json_decref(o);
	}
	putchar('\n');
}

static void cell(sqlite3_stmt *st, int i, int width)
{
	size_t n;
	const char *t = text(st, i, &n);
	char *e = out_esc(t, n, 0);

	printf("%*s ", width, e[0] ? e : "-");
	free(e);
}

/* The columns of `sbx-audit list`. */
static void row_table(sqlite3_stmt *st)
{
	int done = finished(st);
	char status[32] = "-", wall[32] = "-";

	cell(st, RC_ID, -32);
	cell(st, RC_TIME, -24);
	cell(st, RC_USER, -12);
	cell(st, RC_POLICY, -12);
	cell(st, RC_LANGUAGE, -10);
	if (done)
		cell(st, RC_OUTCOME, -13);
	else
		printf("%-13s ", "incomplete");
	if (done && sqlite3_column_int64(st, RC_SIGNAL) != 0)
		snprintf(status, sizeof(status), "sig%" PRId64, (int64_t)sqlite3_column_int64(st, RC_SIGNAL));
	else if (done && sqlite3_column_type(st, RC_EXIT_CODE) == SQLITE_INTEGER)
		snprintf(status, sizeof(status), "%" PRId64, (int64_t)sqlite3_column_int64(st, RC_EXIT_CODE));
	if (done && sqlite3_column_type(st, RC_WALL_MS) == SQLITE_INTEGER)
		snprintf(wall, sizeof(wall), "%" PRId64, (int64_t)sqlite3_column_int64(st, RC_WALL_MS));
	printf("%-6s %s\n", status, wall);
}

int runs_write(sqlite3 *db, const char *path, sqlite3_stmt *st,
	       enum run_format fmt, uint64_t *n, int64_t *last_end_seq)
{
	return runs_write_part(db, path, st, fmt, n, last_end_seq, NULL, 1);
}

int runs_write_part(sqlite3 *db, const char *path, sqlite3_stmt *st, enum run_format fmt,
		    uint64_t *n, int64_t *last_end_seq, json_t *shared, int header)
{
	json_t *arr = shared;
	int rc, i;

	*n = 0;
	*last_end_seq = 0;
	if (fmt == FMT_JSON && arr == NULL)
		arr = out_need(json_array());
	else if (!header || fmt == FMT_JSON || fmt == FMT_JSONL)
		; /* a later part of one output: no header again */
	else if (fmt == FMT_TABLE)
		printf("%-32s %-24s %-12s %-12s %-10s %-13s %-6s %s\n", "ID", "TIME",
		       "USER", "POLICY", "LANGUAGE", "OUTCOME", "EXIT", "WALL_MS");
	else if (fmt == FMT_CSV)
		for (i = 0; i < RC_NCOLS; i++)
			printf("%s%s", colnames[i], i + 1 < RC_NCOLS ? "," : with_fields(st) ? ",fields\n" : "\n");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o;
		(*n)++;
		if (finished(st) && sqlite3_column_int64(st, RC_END_SEQ) > *last_end_seq)
			*last_end_seq = sqlite3_column_int64(st, RC_END_SEQ);
		switch (fmt) {
		case FMT_TABLE:
			row_table(st);
			break;
		case FMT_CSV:
			row_csv(st);
			break;
		case FMT_JSON:
			json_array_append_new(arr, row_json(st));
			break;
		case FMT_JSONL:
			o = row_json(st);
			if (json_dumpf(o, stdout, JSON_COMPACT) < 0)
				out_need(NULL);
			putchar('\n');
			json_decref(o);
			break;
		}
	}
	if (rc != SQLITE_DONE) {
		if (shared == NULL)
			json_decref(arr);
		cli_err("%s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	if (shared == NULL && arr && out_json(arr) < 0)
		return -1;
	return 0;
}

int runs_print(const struct cli *c, const struct run_filter *f, enum run_format fmt,
	       uint64_t *n, int64_t *last_end_seq)
{
	struct sbx_audit *a;
	sqlite3_stmt *st;
	int rc;

	if (cli_open_log(c, &a) < 0)
		return -1;
	if (runs_prepare(sbx_audit_db(a), sbx_audit_path(a), f, &st) < 0) {
		sbx_audit_close(a);
		return -1;
	}
	rc = runs_write(sbx_audit_db(a), sbx_audit_path(a), st, fmt, n, last_end_seq);
	sqlite3_finalize(st);
	sbx_audit_close(a);
	return rc;
}
