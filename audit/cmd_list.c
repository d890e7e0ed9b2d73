/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit list: one line per run, START joined with its END by run id,
 * newest last. Reads the SQL columns (indexed), not the blobs: it is a
 * convenience view; `verify` is what checks the columns against the blobs.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "units.h"

#define DEFAULT_LIMIT 20

static const char list_sql[] =
	"SELECT * FROM ("
	" SELECT s.seq, s.run_id, s.time, s.user, s.policy, s.language,"
	"  e.seq, e.outcome, e.exit_code, e.signal, e.wall_ms"
	" FROM records s LEFT JOIN records e ON e.seq = ("
	"  SELECT min(seq) FROM records WHERE run_id = s.run_id AND kind = 'end' AND seq > s.seq"
	"   AND cell IS s.cell)" /* a live session's call pairs with its own END (its cell) */
	" WHERE +s.kind = 'start' ORDER BY s.seq DESC LIMIT ?1" /* "+": walk in seq order, not by kind */
	") ORDER BY 1";

enum { L_SEQ, L_ID, L_TIME, L_USER, L_POLICY, L_LANG, L_END_SEQ, L_OUTCOME,
       L_EXIT, L_SIGNAL, L_WALL };

static void help(void)
{
	printf("usage: " PROG " list [--limit N] [--json]\n"
	       "\n"
	       "One line per run (START joined with END by run id), newest last:\n"
	       "id, time (UTC), user, policy, language, outcome (\"incomplete\" when\n"
	       "the run has no END record), exit status (\"sigN\" when killed by\n"
	       "signal N), wall time in ms.\n"
	       "\n"
	       "  --limit N   the N newest runs (default %d; 0: all)\n"
	       "  --json      a JSON array of objects instead\n"
	       "  --db PATH, --pubkey PATH   as for every command\n",
	       DEFAULT_LIMIT);
}

static const char *text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

static json_t *jcol(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return json_null();
	case SQLITE_INTEGER:
		return out_need(json_integer(sqlite3_column_int64(st, i)));
	default: {
		const char *t = text(st, i);
		return out_json_str(t, (size_t)sqlite3_column_bytes(st, i));
	}
	}
}

static void row_json(json_t *arr, sqlite3_stmt *st)
{
	json_t *o = out_need(json_object());
	int done = sqlite3_column_type(st, L_END_SEQ) != SQLITE_NULL;

	json_object_set_new(o, "id", jcol(st, L_ID));
	json_object_set_new(o, "start_seq", jcol(st, L_SEQ));
	json_object_set_new(o, "end_seq", jcol(st, L_END_SEQ));
	json_object_set_new(o, "time", jcol(st, L_TIME));
	json_object_set_new(o, "user", jcol(st, L_USER));
	json_object_set_new(o, "policy", jcol(st, L_POLICY));
	json_object_set_new(o, "language", jcol(st, L_LANG));
	json_object_set_new(o, "outcome", done ? jcol(st, L_OUTCOME) : json_string("incomplete"));
	json_object_set_new(o, "exit_code", jcol(st, L_EXIT));
	json_object_set_new(o, "signal", jcol(st, L_SIGNAL));
	json_object_set_new(o, "wall_ms", jcol(st, L_WALL));
	json_array_append_new(arr, o);
}

/* Escaped by byte count: a tampered column may hold a NUL. */
static void cell(sqlite3_stmt *st, int i, int width)
{
	const char *t = text(st, i);
	char *e = out_esc(t, (size_t)sqlite3_column_bytes(st, i), 0);

	printf("%*s ", width, e[0] ? e : "-");
	free(e);
}

static void row_text(sqlite3_stmt *st)
{
	int done = sqlite3_column_type(st, L_END_SEQ) != SQLITE_NULL;
	char status[32] = "-", wall[32] = "-";

	cell(st, L_ID, -32);
	cell(st, L_TIME, -24);
	cell(st, L_USER, -12);
	cell(st, L_POLICY, -12);
	cell(st, L_LANG, -10);
	if (done)
		cell(st, L_OUTCOME, -13);
	else
		printf("%-13s ", "incomplete");
	if (done && sqlite3_column_int64(st, L_SIGNAL) != 0)
		snprintf(status, sizeof(status), "sig%" PRId64, (int64_t)sqlite3_column_int64(st, L_SIGNAL));
	else if (done && sqlite3_column_type(st, L_EXIT) == SQLITE_INTEGER)
		snprintf(status, sizeof(status), "%" PRId64, (int64_t)sqlite3_column_int64(st, L_EXIT));
	if (done && sqlite3_column_type(st, L_WALL) == SQLITE_INTEGER)
		snprintf(wall, sizeof(wall), "%" PRId64, (int64_t)sqlite3_column_int64(st, L_WALL));
	printf("%-6s %s\n", status, wall);
}

static int run_list(struct sbx_audit *a, uint64_t limit, int json)
{
	sqlite3 *db = sbx_audit_db(a);
	sqlite3_stmt *st;
	json_t *arr = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, list_sql, -1, &st, NULL) != SQLITE_OK) {
		cli_err("%s: %s", sbx_audit_path(a), sqlite3_errmsg(db));
		return EXIT_UNREADABLE;
	}
	sqlite3_bind_int64(st, 1, limit == 0 ? -1 : (sqlite3_int64)limit);
	if (json)
		arr = out_need(json_array());
	else
		printf("%-32s %-24s %-12s %-12s %-10s %-13s %-6s %s\n", "ID", "TIME",
		       "USER", "POLICY", "LANGUAGE", "OUTCOME", "EXIT", "WALL_MS");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (json)
			row_json(arr, st);
		else
			row_text(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		cli_err("%s: %s", sbx_audit_path(a), sqlite3_errmsg(db));
		return EXIT_UNREADABLE;
	}
	if (json && out_json(arr) < 0)
		return EXIT_FAIL;
	return EXIT_OK;
}

int cmd_list(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"limit", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct sbx_audit *a;
	uint64_t limit = DEFAULT_LIMIT;
	int json = 0, opt, rc;

	while ((opt = getopt_long(argc, argv, ":hn:j", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'n':
			if (sbx_parse_uint(optarg, INT64_MAX, &limit) < 0) {
				cli_err("list: --limit: '%s' is not a number", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = 1;
			break;
		default:
			rc = cli_common_opt(c, "list", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("list", argc, argv)) != EXIT_OK)
		return rc;
	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	rc = run_list(a, limit, json);
	sbx_audit_close(a);
	return rc;
}
