/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit show ID: find the run (run id, a unique prefix of at least 6
 * hex digits, or a seq number) and print its records decoded from the
 * signed blobs, not from the SQL columns, so what is shown is what was
 * signed. It does not verify; `verify` does.
 */
#include "show.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auditdb.h"
#include "units.h"

#define MIN_PREFIX 6

static void help(void)
{
	printf("usage: " PROG " show [--code] [--json] ID\n"
	       "\n"
	       "The START and END records of one run: host, user, policy and its\n"
	       "sha256, limits, language, argv, code sha256, session and attempt;\n"
	       "outcome, exit status, resource use, output sizes and digests,\n"
	       "stderr excerpt, artifacts with their sha256. Read from the signed\n"
	       "blobs; run `" PROG " verify` to check them.\n"
	       "\n"
	       "ID is a run id, a unique prefix of one (at least %d hex digits), or\n"
	       "a record's seq number (a number shorter than %d digits, or one that\n"
	       "matches no run id).\n"
	       "\n"
	       "  --code   print the run's code text instead (control characters are\n"
	       "           escaped when standard output is a terminal)\n"
	       "  --json   a JSON object {id, start, end, records}; with --code it\n"
	       "           also holds \"code\"\n"
	       "  --db PATH, --pubkey PATH   as for every command\n",
	       MIN_PREFIX, MIN_PREFIX);
}

static int step_text(sqlite3_stmt *st, char *out, size_t len)
{
	const unsigned char *t;

	if (sqlite3_step(st) != SQLITE_ROW)
		return 0;
	t = sqlite3_column_text(st, 0);
	snprintf(out, len, "%s", t ? (const char *)t : "");
	return 1;
}

/* 0 found, 1 not found, 2 ambiguous, -1 error. */
static int by_prefix(sqlite3 *db, const char *prefix, char *run_id, size_t len)
{
	char pat[SBX_ID_LEN + 2], other[256];
	sqlite3_stmt *st;
	int found;

	snprintf(pat, sizeof(pat), "%s*", prefix);
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT run_id FROM records WHERE run_id GLOB ?1 LIMIT 2",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, pat, -1, SQLITE_STATIC);
	found = step_text(st, run_id, len);
	if (found && step_text(st, other, sizeof(other))) {
		sqlite3_finalize(st);
		return 2;
	}
	sqlite3_finalize(st);
	return found ? 0 : 1;
}

static int by_seq(sqlite3 *db, uint64_t seq, char *run_id, size_t len)
{
	sqlite3_stmt *st;
	int found;

	if (sqlite3_prepare_v2(db, "SELECT run_id FROM records WHERE seq = ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
	found = step_text(st, run_id, len);
	sqlite3_finalize(st);
	return found ? 0 : 1;
}

static int resolve(struct sbx_audit *a, const char *id, char *run_id, size_t len)
{
	char lower[SBX_ID_LEN + 1];
	size_t n = strlen(id), i;
	int digits = n > 0, hex = n > 0, rc = 1;
	uint64_t seq;

	for (i = 0; i < n; i++) {
		digits &= isdigit((unsigned char)id[i]) != 0;
		hex &= isxdigit((unsigned char)id[i]) != 0;
	}
	if (hex && n >= MIN_PREFIX && n <= SBX_ID_LEN) {
		for (i = 0; i <= n; i++)
			lower[i] = (char)tolower((unsigned char)id[i]);
		rc = by_prefix(sbx_audit_db(a), lower, run_id, len);
		if (rc == 2) {
			cli_err("show: %s: matches more than one run; give more digits", id);
			return EXIT_USAGE;
		}
	}
	if (rc == 1 && digits && sbx_parse_uint(id, INT64_MAX, &seq) == 0)
		rc = by_seq(sbx_audit_db(a), seq, run_id, len);
	if (rc < 0) {
		cli_err("%s: %s", sbx_audit_path(a), sqlite3_errmsg(sbx_audit_db(a)));
		return EXIT_UNREADABLE;
	}
	if (rc == 1) {
		char *e = out_esc(id, n, 0);
		cli_err("show: %s: no such run or record", e);
		free(e);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void load_row(sqlite3_stmt *st, struct shown *r)
{
	const unsigned char *blob = sqlite3_column_blob(st, 1);
	size_t blen = (size_t)sqlite3_column_bytes(st, 1);
	const unsigned char *origin = sqlite3_column_text(st, 2);
	const unsigned char *chain = sqlite3_column_blob(st, 3);

	memset(r, 0, sizeof(*r));
	r->seq = sqlite3_column_int64(st, 0);
	r->ok = sbx_record_decode(blob, blen, &r->rec, r->why, sizeof(r->why)) == 0;
	snprintf(r->origin, sizeof(r->origin), "%s", origin ? (const char *)origin : "");
	if (chain != NULL && sqlite3_column_bytes(st, 3) == 32) {
		memcpy(r->chain, chain, 32);
		r->has_chain = 1;
	}
}

/* Rows of the run in seq order (*out, malloc'ed); returns the count or -1. */
static int load_run(struct sbx_audit *a, const char *run_id, struct shown **out)
{
	sqlite3 *db = sbx_audit_db(a);
	sqlite3_stmt *st;
	int n = 0, cap = 0, rc;
	struct shown *r = NULL;

	if (sqlite3_prepare_v2(db, "SELECT seq, blob, origin, chain FROM records"
			       " WHERE run_id = ?1 ORDER BY seq LIMIT ?2", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, SHOW_MAX_RECORDS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			/* a run has two; a live session two per call besides */
			struct shown *g = realloc(r, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*r));
			if (g == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			r = g;
		}
		memset(&r[n], 0, sizeof(r[n]));
		load_row(st, &r[n++]);
	}
	sqlite3_finalize(st);
	*out = r;
	if (rc != SQLITE_DONE) {
		while (n > 0)
			sbx_record_free(&r[--n].rec);
		return -1;
	}
	return n;
}

/* The code text of the run into *text (malloc'd), *len. 0, 1 absent, -1 error. */
static int load_code(struct sbx_audit *a, const struct shown *r, int n,
		     char **text, size_t *len, int *digest_ok)
{
	const struct sbx_record *rec = NULL;
	unsigned char got[32];
	char hex[65];
	sqlite3_stmt *st;
	int i, rc;

	for (i = 0; i < n && rec == NULL; i++)
		if (r[i].ok)
			rec = &r[i].rec;
	if (rec == NULL)
		return 1;
	sodium_bin2hex(hex, sizeof(hex), rec->code_sha256, 32);
	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT text FROM code WHERE sha256 = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(st, 0);
		*len = (size_t)sqlite3_column_bytes(st, 0);
		*text = out_need(malloc(*len + 1));
		if (*len)
			memcpy(*text, b, *len);
		(*text)[*len] = '\0';
		crypto_hash_sha256(got, (const unsigned char *)*text, *len);
		*digest_ok = sodium_memcmp(got, rec->code_sha256, 32) == 0;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

static int print_code(const char *text, size_t len)
{
	if (isatty(STDOUT_FILENO)) {
		char *e = out_esc(text, len, 1);
		fputs(e, stdout);
		if (len > 0 && text[len - 1] != '\n')
			fputc('\n', stdout);
		free(e);
	} else {
		fwrite(text, 1, len, stdout);
	}
	return EXIT_OK;
}

static int show_run(struct sbx_audit *a, const char *run_id, int code, int json)
{
	struct shown *r = NULL;
	char *text = NULL;
	size_t tlen = 0;
	int n, i, crc = 1, digest_ok = 1, rc = EXIT_OK;

	n = load_run(a, run_id, &r);
	if (n >= 0 && code)
		crc = load_code(a, r, n, &text, &tlen, &digest_ok);
	if (n < 0 || crc < 0) {
		cli_err("%s: %s", sbx_audit_path(a), sqlite3_errmsg(sbx_audit_db(a)));
		rc = EXIT_UNREADABLE;
		goto out;
	}
	if (n == 0) {
		cli_err("show: the run's records cannot be read back (run " PROG " verify)");
		rc = EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (!r[i].ok) {
			cli_err("seq %" PRId64 ": undecodable: %s (run " PROG " verify)", r[i].seq, r[i].why);
			rc = EXIT_FAIL;
		}
	if (code && (crc == 1 || !digest_ok)) {
		char *e = out_esc(run_id, strlen(run_id), 0);
		if (crc == 1)
			cli_err("show: %s: the code text is not in the log", e);
		else
			cli_err("show: %s: the code text does not match its sha256 "
				"(log altered; run " PROG " verify)", e);
		free(e);
		rc = EXIT_FAIL;
	}
	if (json) {
		json_t *j = show_json(run_id, r, (size_t)n);
		if (code)
			json_object_set_new(j, "code", text ? out_json_str(text, tlen) : json_null());
		if (out_json(j) < 0)
			rc = EXIT_FAIL;
	} else if (code) {
		if (text != NULL)
			print_code(text, tlen);
	} else {
		show_text(r, (size_t)n);
	}
out:
	for (i = 0; i < n; i++)
		sbx_record_free(&r[i].rec);
	free(r);
	free(text);
	return rc;
}

int cmd_show(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"code", no_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	char run_id[256];
	struct sbx_audit *a;
	int code = 0, json = 0, opt, rc;

	while ((opt = getopt_long(argc, argv, ":hcj", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'c':
			code = 1;
			break;
		case 'j':
			json = 1;
			break;
		default:
			rc = cli_common_opt(c, "show", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if (optind >= argc) {
		cli_err("show: which run? (see " PROG " show --help)");
		return EXIT_USAGE;
	}
	optind++;
	if ((rc = cli_extra_args("show", argc, argv)) != EXIT_OK)
		return rc;
	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	rc = resolve(a, argv[optind - 1], run_id, sizeof(run_id));
	if (rc == EXIT_OK)
		rc = show_run(a, run_id, code, json);
	sbx_audit_close(a);
	return rc;
}
