/* SPDX-License-Identifier: ISC */
/*
 * The report's SQL. Every aggregate runs in SQLite over the derived
 * columns, with the window and limits as bound parameters; only fixed
 * identifiers from this file are pasted into SQL. The one exception is
 * --applies, which reads the few APPLY records' fields from their blobs
 * (applies(), below).
 *
 * A run is its END record (which repeats the START's user, policy,
 * language, code digest, session and attempt), or its START when it has no
 * END (an incomplete run, outcome "incomplete"). A run is dated by that
 * record, so consecutive windows count every run exactly once.
 *
 * Speed (1,000,000 records in well under a second): the END rows of a
 * window come from the covering index records_report, and the few
 * incomplete runs are found once per report (find_incomplete: among the
 * newest STARTs, else by one ordered pass over the covering index
 * records_run_kind, a merge rather than a lookup per run); their seqs are
 * then bound as a JSON array and fetched by seq (the unary +
 * keeps the planner from scanning every START through the index instead). Both indexes are created by the
 * writer (auditlog.c); on an older log without them the same queries
 * still answer, more slowly.
 */
#include "cli.h"
#include "report.h"
#include "sqlfield.h"

#include <stdlib.h>
#include <string.h>

const char *const report_by_names[BY_N] = {"user", "policy", "outcome", "language", "day", "hour"};

/* ?1 since (ns), ?2 until (ns, exclusive), ?3 JSON array of the START seqs
 * of incomplete runs. */
#define RUNS_CTE \
	"WITH runs AS (" \
	" SELECT realtime_ns, user, policy, language, outcome, limit_fired, code_sha256," \
	"  session, attempt, cell FROM records" \
	"  WHERE kind = 'end' AND realtime_ns >= ?1 AND realtime_ns < ?2" \
	" UNION ALL" \
	" SELECT realtime_ns, user, policy, language, 'incomplete', NULL, code_sha256," \
	"  session, attempt, cell FROM records" \
	"  WHERE seq IN (SELECT value FROM json_each(?3)) AND +kind = 'start'" \
	"  AND +realtime_ns >= ?1 AND +realtime_ns < ?2) "

#define ISO(col) "strftime('%Y-%m-%dT%H:%M:%SZ', " col " / 1000000000, 'unixepoch')"

struct q {
	sqlite3 *db;
	const char *path;
	const struct ropts *o;
	char *incomplete; /* JSON array of START seqs */
	struct report *r;
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	if (*cap < need)
		*cap = need;
	return out_need(realloc(p, *cap * size));
}

static int fail(struct q *q, const char *what)
{
	cli_err("%s: report: %s: %s", q->path, what, sqlite3_errmsg(q->db));
	return -1;
}

static void bind_window(struct q *q, sqlite3_stmt *st)
{
	sqlite3_bind_int64(st, 1, q->o->since_ns);
	sqlite3_bind_int64(st, 2, q->o->until_ns);
	sqlite3_bind_text(st, 3, q->incomplete, -1, SQLITE_STATIC);
}

/*
 * Run sql (bound by bind_window, and ?4 = extra when extra >= -1) into a
 * new table of the report.
 */
static int table(struct q *q, const char *name, const char *title, int single,
		 const char *sql, int64_t extra)
{
	struct report *r = q->r;
	struct rtable *t;
	sqlite3_stmt *st;
	size_t cap = r->n, i;
	int rc;

	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(q, name);
	bind_window(q, st);
	if (extra >= -1)
		sqlite3_bind_int64(st, 4, extra);
	r->t = grow(r->t, &cap, r->n + 1, sizeof(*r->t));
	t = &r->t[r->n++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->title = title;
	t->single = single;
	t->ncols = (size_t)sqlite3_column_count(st);
	t->cols = out_need(calloc(t->ncols, sizeof(*t->cols)));
	for (i = 0; i < t->ncols; i++)
		t->cols[i] = out_need(strdup(sqlite3_column_name(st, (int)i)));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t->cells = grow(t->cells, &t->cap, (t->nrows + 1) * t->ncols, sizeof(*t->cells));
		for (i = 0; i < t->ncols; i++) {
			struct rcell *c = RT_CELL(t, t->nrows, i);
			memset(c, 0, sizeof(*c));
			switch (sqlite3_column_type(st, (int)i)) {
			case SQLITE_NULL:
				break;
			case SQLITE_INTEGER:
				c->type = RC_INT;
				c->i = sqlite3_column_int64(st, (int)i);
				break;
			default: {
				/* Text, or anything a tampered log put there, as bytes. */
				const unsigned char *s = sqlite3_column_text(st, (int)i);
				c->n = (size_t)sqlite3_column_bytes(st, (int)i);
				c->type = RC_TEXT;
				c->s = out_need(malloc(c->n + 1));
				memcpy(c->s, s ? (const char *)s : "", c->n);
				c->s[c->n] = '\0';
			}
			}
		}
		t->nrows++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(q, name);
}

static int int_query(struct q *q, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(q, "incomplete runs");
	rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : fail(q, "incomplete runs");
}

/* Newest STARTs first, while fewer than `want` without END are found:
 * runs still going are at the tail. Returns how many were found (into
 * m), or -1; stops after TAIL_SCAN STARTs. The unary + walks the table
 * backwards by seq instead of sorting every START from the index. */
#define TAIL_SCAN 20000
static int64_t tail_scan(struct q *q, int64_t want, FILE *m)
{
	sqlite3_stmt *st, *end;
	int64_t found = 0, seen = 0;

	if (sqlite3_prepare_v2(q->db, "SELECT seq, run_id FROM records WHERE +kind = 'start'"
			       " ORDER BY seq DESC", -1, &st, NULL) != SQLITE_OK)
		return fail(q, "incomplete runs");
	if (sqlite3_prepare_v2(q->db, "SELECT 1 FROM records WHERE run_id = ?1 AND kind = 'end'",
			       -1, &end, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return fail(q, "incomplete runs");
	}
	while (found < want && seen++ < TAIL_SCAN && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_bind_value(end, 1, sqlite3_column_value(st, 1));
		if (sqlite3_step(end) != SQLITE_ROW)
			fprintf(m, "%s%lld", found++ ? "," : "", (long long)sqlite3_column_int64(st, 0));
		sqlite3_reset(end);
	}
	sqlite3_finalize(end);
	sqlite3_finalize(st);
	return found;
}

/*
 * The START seqs of runs without an END, as a JSON array. The writer
 * commits an END only after its START (and rotate moves whole runs), so
 * #STARTs - #ENDs (two b-tree counts) is how many there are. Usually none,
 * or runs still going, found among the newest STARTs; else (runs the
 * recorder never ended, long ago) one ordered pass over every run id.
 */
static int find_incomplete(struct q *q)
{
	static const char all[] =
		"SELECT json_group_array(s) FROM (SELECT max(seq) AS s FROM records"
		" GROUP BY run_id HAVING min(kind) = 'start' AND max(kind) = 'start')";
	char *buf = NULL;
	size_t len = 0;
	int64_t starts, ends, found;
	FILE *m;
	sqlite3_stmt *st;
	int rc;

	if (int_query(q, "SELECT count(*) FROM records WHERE kind = 'start'", &starts) < 0 ||
	    int_query(q, "SELECT count(*) FROM records WHERE kind = 'end'", &ends) < 0)
		return -1;
	m = out_need(open_memstream(&buf, &len));
	fputc('[', m);
	found = starts > ends ? tail_scan(q, starts - ends, m) : 0;
	fputc(']', m);
	if (fclose(m) != 0)
		out_need(NULL);
	if (found < 0) {
		free(buf);
		return -1;
	}
	if (found >= starts - ends) {
		q->incomplete = buf;
		return 0;
	}
	free(buf);
	if (sqlite3_prepare_v2(q->db, all, -1, &st, NULL) != SQLITE_OK)
		return fail(q, "incomplete runs");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		q->incomplete = out_need(strdup((const char *)sqlite3_column_text(st, 0)));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : fail(q, "incomplete runs");
}

/* "coalesce(sum(n), 0) AS runs, coalesce(sum(CASE WHEN o = 'ok' THEN n
 * ELSE 0 END), 0) AS ok, ..., ... AS other": the outcome columns over
 * rows of (count n, outcome o). */
static char *breakdown(const char *n, const char *o)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = out_need(open_memstream(&buf, &len));

	fprintf(m, "coalesce(sum(%s), 0) AS runs", n);
	/* names from the outcome table: [a-z_] only, safe in SQL */
	for (i = 0; i < SBX_OUTCOME_N; i++)
		fprintf(m, ", coalesce(sum(CASE WHEN %s = '%s' THEN %s ELSE 0 END), 0) AS %s", o,
			sbx_outcome_defs[i].name, n, sbx_outcome_defs[i].name);
	fprintf(m, ", coalesce(sum(CASE WHEN %s IN (", o);
	for (i = 0; i < SBX_OUTCOME_N; i++)
		fprintf(m, "%s'%s'", i ? "," : "", sbx_outcome_defs[i].name);
	fprintf(m, ") THEN 0 ELSE %s END), 0) AS other", n);
	if (fclose(m) != 0)
		out_need(NULL);
	return buf;
}

static int by_table(struct q *q, enum rby by)
{
	static const char *const key[BY_N] = {
		"user", "policy", "outcome", "language",
		"strftime('%Y-%m-%d', realtime_ns / 1000000000, 'unixepoch', 'localtime')",
		"strftime('%H', realtime_ns / 1000000000, 'unixepoch', 'localtime')",
	};
	static const char *const names[BY_N] = {
		"by_user", "by_policy", "by_outcome", "by_language", "by_day", "by_hour",
	};
	static const char *const titles[BY_N] = {
		"Runs by user", "Runs by policy", "Runs by outcome", "Runs by language",
		"Runs by day (local time)", "Runs by hour of day (local time)",
	};
	/* Time keys in time order; the others busiest first. */
	const char *order = by == BY_DAY || by == BY_HOUR ? "1" : "runs DESC, 1";
	char *b = breakdown("n", "o"), *sql;
	int rc;

	/* Count per (key, outcome) in one sort, then spread the few rows of
	 * that into outcome columns: cheaper than a sum per outcome per run. */
	if (asprintf(&sql, "%s, g AS (SELECT %s AS k, outcome AS o, count(*) AS n FROM runs"
		     " GROUP BY 1, 2) SELECT k AS %s, %s FROM g GROUP BY 1 ORDER BY %s",
		     RUNS_CTE, key[by], report_by_names[by], b, order) < 0)
		out_need(NULL);
	rc = table(q, names[by], titles[by], 0, sql, -2);
	free(sql);
	free(b);
	return rc;
}

/*
 * Per-outcome counts straight from records_report, which is ordered by
 * (kind, outcome): no sort, and the sums run over a handful of rows. The
 * users and the time span take one more pass over the window.
 */
#define OUTCOMES_CTE \
	", g AS (SELECT outcome AS o, count(*) AS n FROM records" \
	"  WHERE kind = 'end' AND realtime_ns >= ?1 AND realtime_ns < ?2 GROUP BY 1" \
	" UNION ALL SELECT 'incomplete', count(*) FROM records" \
	"  WHERE seq IN (SELECT value FROM json_each(?3)) AND +kind = 'start'" \
	"  AND +realtime_ns >= ?1 AND +realtime_ns < ?2)" \
	", u AS (SELECT count(DISTINCT user) AS users, min(realtime_ns) AS lo," \
	"  max(realtime_ns) AS hi FROM runs) "

static int summary(struct q *q)
{
	char *b = breakdown("n", "o"), *sql;
	int rc;

	/* The CTE and ISO() hold '%' of strftime: pasted as arguments. */
	if (asprintf(&sql, "%s%s"
		     "SELECT coalesce(sum(n), 0) AS runs,"
		     " coalesce(sum(n) - sum(CASE WHEN o = 'incomplete' THEN n ELSE 0 END), 0) AS complete,"
		     " coalesce(sum(CASE WHEN o IS NOT 'ok' AND o IS NOT 'incomplete' THEN n ELSE 0 END),"
		     " 0) AS failed, (SELECT users FROM u) AS users,"
		     " (SELECT %s FROM u) AS first, (SELECT %s FROM u) AS last%s FROM g",
		     RUNS_CTE, OUTCOMES_CTE, ISO("lo"), ISO("hi"),
		     b + strlen("coalesce(sum(n), 0) AS runs")) < 0)
		out_need(NULL);
	rc = table(q, "summary", "Summary", 1, sql, -2);
	free(sql);
	free(b);
	return rc;
}

static int failed(struct q *q)
{
	static const char sql[] =
		"SELECT * FROM (SELECT " ISO("realtime_ns") " AS time, run_id AS id, user, policy,"
		" language, outcome, limit_fired AS \"limit\", exit_code, signal, wall_ms"
		" FROM records WHERE kind = 'end' AND realtime_ns >= ?1 AND realtime_ns < ?2"
		" AND outcome IS NOT 'ok'"
		" ORDER BY realtime_ns DESC, seq DESC LIMIT ?4) ORDER BY 1, 2";

	return table(q, "failed", "Failed runs", 0, sql, q->o->failed_max);
}

static int limits(struct q *q)
{
	static const char by_limit[] = RUNS_CTE
		"SELECT limit_fired AS \"limit\", count(*) AS runs, count(DISTINCT user) AS users"
		" FROM runs WHERE limit_fired IS NOT NULL GROUP BY 1 ORDER BY runs DESC, 1";
	static const char by_user[] = RUNS_CTE
		"SELECT limit_fired AS \"limit\", user, count(*) AS runs"
		" FROM runs WHERE limit_fired IS NOT NULL GROUP BY 1, 2 ORDER BY 1, runs DESC, 2";

	return table(q, "limits", "Limits that fired", 0, by_limit, -2) < 0 ||
	       table(q, "limits_by_user", "Limits that fired, by user", 0, by_user, -2) < 0 ? -1 : 0;
}

static int top_code(struct q *q)
{
	static const char sql[] = RUNS_CTE
		"SELECT code_sha256, count(*) AS runs, count(DISTINCT user) AS n_users,"
		" group_concat(DISTINCT user) AS users,"
		" sum(outcome = 'ok') AS ok"
		" FROM runs GROUP BY 1 ORDER BY runs DESC, 1 LIMIT ?4";

	return table(q, "top_code", "Most repeated code", 0, sql, q->o->top_n);
}

static int sessions(struct q *q)
{
	static const char sql[] = RUNS_CTE
		"SELECT session, user, attempts, succeeded, attempts_to_success, first, last FROM ("
		"SELECT session, min(user) AS user, count(*) AS attempts,"
		" CASE WHEN max(outcome = 'ok') THEN 'yes' ELSE 'no' END AS succeeded,"
		" min(CASE WHEN outcome = 'ok' THEN attempt END) AS attempts_to_success,"
		" " ISO("min(realtime_ns)") " AS first, " ISO("max(realtime_ns)") " AS last,"
		" min(realtime_ns) AS t0"
		" FROM runs WHERE session IS NOT NULL AND cell IS NULL GROUP BY 1 ORDER BY t0 DESC, 1 DESC LIMIT ?4)"
		" ORDER BY t0, 1";
	/* live sessions (sbx(1) Live sessions): a START with calls (cell) of
	 * its run id; its calls, the failed ones, and how it ended (or not yet) */
	static const char live[] =
		"SELECT id, session, user, calls, failed_calls, started, ended FROM ("
		"SELECT s.run_id AS id, s.session, s.user,"
		" (SELECT count(*) FROM records c WHERE c.run_id = s.run_id AND c.kind = 'end'"
		"  AND c.cell IS NOT NULL) AS calls,"
		" (SELECT count(*) FROM records c WHERE c.run_id = s.run_id AND c.kind = 'end'"
		"  AND c.cell IS NOT NULL AND c.outcome IS NOT 'ok') AS failed_calls,"
		" " ISO("s.realtime_ns") " AS started,"
		" coalesce((SELECT e.outcome FROM records e WHERE e.run_id = s.run_id AND e.kind = 'end'"
		"  AND e.cell IS NULL), 'live') AS ended, s.realtime_ns AS t0"
		" FROM records s WHERE s.kind = 'start' AND s.cell IS NULL"
		" AND s.realtime_ns >= ?1 AND s.realtime_ns < ?2"
		" AND EXISTS (SELECT 1 FROM records c WHERE c.run_id = s.run_id AND c.cell IS NOT NULL)"
		" ORDER BY t0 DESC LIMIT ?4) ORDER BY t0, 1";

	return table(q, "sessions", "Retry sessions (sbx run --fix)", 0, sql, q->o->failed_max) < 0 ||
	       table(q, "live_sessions", "Live sessions (sbx session start)", 0, live, q->o->failed_max) < 0 ? -1 : 0;
}

/* [network] mode = allow (docs/egress.md): totals over the END records
 * that carry them, and per destination (the JSON arrays net_reached and
 * net_refused_dests, expanded by json_each; a cell that is not JSON, which
 * only tampering makes, counts as empty). A log no egress run has written
 * lacks the columns: nothing to report then. */
#define DEST_ROWS(col, reached)                                                           \
	" SELECT value AS dest, " reached " AS r, 1 - " reached " AS f, user FROM records,"     \
	" json_each(CASE WHEN json_valid(" col ") THEN " col " ELSE '[]' END)"                \
	" WHERE kind = 'end' AND realtime_ns >= ?1 AND realtime_ns < ?2 AND " col " IS NOT NULL"

static int network(struct q *q)
{
	static const char totals[] =
		"SELECT count(*) AS runs, coalesce(sum(net_connections), 0) AS connections,"
		" coalesce(sum(net_bytes_out), 0) AS bytes_out, coalesce(sum(net_bytes_in), 0) AS bytes_in,"
		" coalesce(sum(net_refused), 0) AS refused_attempts,"
		" coalesce(sum(net_limits IS NOT NULL), 0) AS runs_at_a_limit"
		" FROM records WHERE kind = 'end' AND realtime_ns >= ?1 AND realtime_ns < ?2"
		" AND net_connections IS NOT NULL";
	static const char dests[] =
		"SELECT dest AS destination, sum(r) AS runs_reached, sum(f) AS runs_refused,"
		" count(DISTINCT user) AS users FROM (" DEST_ROWS("net_reached", "1") " UNION ALL"
		DEST_ROWS("net_refused_dests", "0") ") GROUP BY 1 ORDER BY sum(r) + sum(f) DESC, 1 LIMIT ?4";
	int64_t has = 0;

	if (int_query(q, "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'net_reached'", &has) < 0)
		return -1;
	if (has == 0)
		return 0;
	return table(q, "network", "Network (mode = allow)", 1, totals, -2) < 0 ||
	       table(q, "network_destinations", "Network destinations", 0, dests, q->o->failed_max) < 0 ? -1 : 0;
}

/*
 * The environment of each finished run is its START's (image, image
 * digest: recfield.h 140-141; a run recorded before they existed is
 * "unknown"). Two tables: runs per environment, and every code digest that
 * ran in more than one environment with more than one outcome, one row per
 * (code, environment): the same code, a different environment, a
 * different result.
 */
#define ENV_CTE \
	"WITH env_runs AS (" \
	" SELECT e.code_sha256 AS code, coalesce(s.image, 'unknown') AS image," \
	"  s.image_digest AS digest, e.outcome AS outcome, e.realtime_ns AS t, e.user AS user" \
	" FROM records e JOIN records s ON s.seq = (SELECT max(seq) FROM records" \
	"  WHERE run_id = e.run_id AND kind = 'start' AND seq < e.seq)" \
	" WHERE e.kind = 'end' AND e.realtime_ns >= ?1 AND e.realtime_ns < ?2) "

static int environments(struct q *q)
{
	static const char per_env[] = ENV_CTE
		"SELECT image, CASE WHEN digest IS NULL THEN NULL ELSE 'sha256:' || digest END AS digest,"
		" count(*) AS runs, sum(outcome = 'ok') AS ok, sum(outcome <> 'ok') AS failed,"
		" count(DISTINCT code) AS codes, count(DISTINCT user) AS users,"
		" " ISO("min(t)") " AS first, " ISO("max(t)") " AS last"
		" FROM env_runs GROUP BY image, digest ORDER BY runs DESC, 1, 2";
	static const char drift[] = ENV_CTE
		", changed AS (SELECT code FROM env_runs GROUP BY code"
		"  HAVING count(DISTINCT coalesce(digest, image)) > 1 AND count(DISTINCT outcome) > 1)"
		"SELECT r.code AS code_sha256, r.image AS image,"
		" CASE WHEN r.digest IS NULL THEN NULL ELSE 'sha256:' || r.digest END AS digest,"
		" count(*) AS runs, group_concat(DISTINCT r.outcome) AS outcomes, " ISO("max(r.t)") " AS last"
		" FROM env_runs r JOIN changed USING (code) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3";

	return table(q, "environments", "Runs per environment (image and digest)", 0, per_env, -2) < 0 ||
	       table(q, "environment_changes", "Same code, different environment, different outcome", 0,
		     drift, -2) < 0 ? -1 : 0;
}

/*
 * sbx apply (docs/workspace.md "The apply report"): one row per apply,
 * with the run it applied and whether the digest applied is the one the
 * run's END signed. The APPLY fields and the END's changeset fields are
 * read from the signed blobs (sbx_field, sqlfield.c: the writer projects
 * only applied_run and apply_result): a log from before sbx apply has
 * none to report, and one whose columns no newer writer added still
 * reports them.
 *
 * An apply is its end record (applied, partial, conflict), dated by it,
 * with its begin (apply_begin names it) however long before; or a record
 * no end names: a refused begin, a malformed report (refused), or a begin
 * whose end never came (begun: killed, or still going). ap holds the
 * APPLY records from ?1 on (an end after ?2 claims its begin for a later
 * window), and the older begins of the window's ends. The run's END is
 * its first, the one the recorder checked (sbx_audit_end_changeset).
 */
#define APPLY_COLS                                                                          \
	" SELECT seq, run_id AS id, realtime_ns AS t, uid, user,"                           \
	" sbx_field(blob, 'apply_phase') AS phase, sbx_field(blob, 'applied_run') AS run,"  \
	" sbx_field(blob, 'applied_changeset_sha256') AS cs,"                               \
	" sbx_field(blob, 'apply_subset') AS subset, sbx_field(blob, 'apply_result') AS result," \
	" sbx_field(blob, 'apply_check') AS chk, sbx_field(blob, 'apply_files') AS files,"  \
	" sbx_field(blob, 'apply_begin') AS begin FROM records WHERE kind = 'apply'"
#define APPLIES_CTE                                                                         \
	"WITH w AS MATERIALIZED (" APPLY_COLS " AND realtime_ns >= ?1),"                \
	" ap AS MATERIALIZED (SELECT * FROM w UNION ALL" APPLY_COLS                     \
	"  AND realtime_ns < ?1 AND run_id IN (SELECT begin FROM w WHERE phase = 'end'"     \
	"  AND t < ?2)),"                                                                   \
	" one AS (SELECT a.t, a.seq, coalesce(b.id, a.id) AS apply, a.uid, a.user, a.run,"  \
	"  a.cs, b.cs AS bcs, a.subset, a.files, a.result, coalesce(b.chk, a.chk) AS chk"   \
	"  FROM ap a LEFT JOIN ap b ON b.id = a.begin AND b.phase = 'begin'"                \
	"  WHERE a.phase = 'end' AND a.t < ?2"                                              \
	" UNION ALL SELECT t, seq, id, uid, user, run, cs, NULL, subset, files, result, chk"  \
	"  FROM ap WHERE phase IS NOT 'end' AND t >= ?1 AND t < ?2 AND id NOT IN"           \
	"  (SELECT begin FROM ap WHERE phase = 'end' AND begin IS NOT NULL)),"             \
	" apps AS (SELECT o.*, e.seq AS eseq, e.user AS run_user, e.code_sha256 AS code,"   \
	"  sbx_field(e.blob, 'changeset_sha256') AS rcs,"                                   \
	"  sbx_field(e.blob, 'changeset_entries') AS entries FROM one o"                    \
	"  LEFT JOIN records e ON e.seq = (SELECT min(seq) FROM records"                    \
	"  WHERE run_id = o.run AND kind = 'end')),"                                        \
	" rows AS (SELECT *, CASE WHEN eseq IS NULL THEN 'NO: no such run'"                 \
	"  WHEN rcs IS NULL THEN 'NO: the run has no changeset'"                            \
	"  WHEN cs IS rcs AND (bcs IS NULL OR bcs IS rcs) THEN 'yes'"                       \
	"  ELSE 'NO: not the run''s changeset' END AS matches_run FROM apps) "

static int applies(struct q *q)
{
	static const char list[] = APPLIES_CTE
		"SELECT time, apply, user, uid, run, run_user, result, subset, files, entries,"
		" matches_run, \"check\", changeset, code_sha256 FROM (SELECT " ISO("t") " AS time,"
		" apply, user, uid, run, run_user, result, subset, files, entries, matches_run,"
		" chk AS \"check\", cs AS changeset, code AS code_sha256, t, seq FROM rows"
		" ORDER BY t DESC, seq DESC LIMIT ?4) ORDER BY t, seq";
	static const char by_result[] = APPLIES_CTE
		"SELECT result, count(*) AS applies, count(DISTINCT user) AS users,"
		" count(DISTINCT run) AS runs, sum(subset = 'only') AS subsets,"
		" sum(matches_run <> 'yes') AS not_the_runs_changeset"
		" FROM rows GROUP BY 1 ORDER BY applies DESC, 1";

	if (sqlfield_register(q->db) < 0)
		return fail(q, "sbx_field");
	if (table(q, "applies", "Changesets applied (sbx apply)", 0, list, q->o->failed_max) < 0)
		return -1;
	q->r->t[q->r->n - 1].alert = "matches_run";
	return table(q, "applies_by_result", "Applies by result", 0, by_result, -2);
}

/* Runs per day and outcome, for the HTML chart. */
static int days(struct q *q)
{
	static const char sql[] = RUNS_CTE
		"SELECT strftime('%Y-%m-%d', realtime_ns / 1000000000, 'unixepoch', 'localtime') AS day,"
		" outcome, count(*) AS runs FROM runs GROUP BY 1, 2 ORDER BY 1, 2";

	return table(q, "days", "Runs per day by outcome", 0, sql, -2);
}

static int build(struct q *q)
{
	const struct ropts *o = q->o;
	int i;

	if (find_incomplete(q) < 0)
		return -1;
	if ((o->sections & RS_SUMMARY) && summary(q) < 0)
		return -1;
	for (i = 0; i < BY_N; i++)
		if ((o->by & (1u << i)) && by_table(q, (enum rby)i) < 0)
			return -1;
	if ((o->sections & RS_LIMITS) && limits(q) < 0)
		return -1;
	if ((o->sections & RS_TOPCODE) && top_code(q) < 0)
		return -1;
	if ((o->sections & RS_SESSIONS) && sessions(q) < 0)
		return -1;
	if ((o->sections & RS_NETWORK) && network(q) < 0)
		return -1;
	if ((o->sections & RS_FAILED) && failed(q) < 0)
		return -1;
	if ((o->sections & RS_DAYCHART) && days(q) < 0)
		return -1;
	if ((o->sections & RS_ENVIRONMENTS) && environments(q) < 0)
		return -1;
	if ((o->sections & RS_APPLIES) && applies(q) < 0)
		return -1;
	return 0;
}

int report_build(sqlite3 *db, const char *path, const struct ropts *o, struct report *r)
{
	struct q q = {.db = db, .path = path, .o = o, .r = r};
	int rc;

	memset(r, 0, sizeof(*r));
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return fail(&q, "begin");
	rc = build(&q);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	free(q.incomplete);
	if (rc < 0)
		report_free(r);
	return rc;
}

void report_free(struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->n; i++) {
		struct rtable *t = &r->t[i];
		for (j = 0; j < t->nrows * t->ncols; j++)
			free(t->cells[j].s);
		for (j = 0; j < t->ncols; j++)
			free(t->cols[j]);
		free(t->cols);
		free(t->cells);
	}
	free(r->t);
	memset(r, 0, sizeof(*r));
}

const struct rtable *report_find(const struct report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->t[i].name, name) == 0)
			return &r->t[i];
	return NULL;
}
