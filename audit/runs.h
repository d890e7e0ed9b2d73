/* SPDX-License-Identifier: ISC */
/*
 * Runs (START joined with END) for search and export: the filters, the SQL
 * built from them (values only ever bound, never spliced), and the output
 * formats. Every string printed comes from the log and is escaped.
 */
#ifndef SBX_AUDIT_RUNS_H
#define SBX_AUDIT_RUNS_H
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include <sqlite3.h>

#include "record.h"

enum run_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_JSONL };

/* NULL / 0: no such filter. All given filters must hold (AND). */
struct run_filter {
	const char *user, *policy, *language, *session;
	const char *outcome;        /* validated: an outcome name or "incomplete" */
	char code_sha256[65];       /* lower-case hex, or "" */
	const char *code_contains;  /* bytes of the code text */
	char dest[300];             /* --dest: a LIKE pattern (backslash escapes) matched
				     * against each destination of net_reached and
				     * net_refused_dests, or "" */
	const char *image;          /* START's image: a name or "host" */
	char image_digest[65];      /* START's image digest, lower-case hex, or "" */
	int has_uid;
	uint32_t uid;
	int has_since, has_until;
	char since[48], until[48];  /* ISO 8601 UTC as in the time column */
	int failed, success;        /* outcome != ok / == ok (finished runs) */
	int applied;                /* --applied: a --workspace run whose changeset sbx apply
				     * applied, wholly or in part (an APPLY end record) */
	int64_t after_end_seq;      /* export: END seq > this (>= 0); -1: not export */
	uint64_t limit;             /* the newest N (0: all) */
	int with_fields;            /* csv/json: also "fields", the extension fields of
				     * START and END (decoded from the blobs) */
};

/* The output columns, in this order (the CSV header; JSON keys). */
enum {
	RC_ID, RC_START_SEQ, RC_END_SEQ, RC_TIME, RC_END_TIME, RC_UID, RC_USER,
	RC_HOST, RC_POLICY, RC_LANGUAGE, RC_CODE_SHA256, RC_SESSION, RC_ATTEMPT,
	RC_PARENT_ID, RC_OUTCOME, RC_EXIT_CODE, RC_SIGNAL, RC_LIMIT_FIRED,
	RC_WALL_MS, RC_CPU_MS, RC_MEMORY_PEAK, RC_STDOUT_BYTES, RC_STDERR_BYTES,
	RC_ARTIFACTS, RC_NCOLS
};

/* 1 if s names an END outcome or "incomplete". */
int runs_outcome_ok(const char *s);
/* "table", "csv", ... into *f; -1 if unknown. */
int runs_parse_format(const char *s, enum run_format *f);

/*
 * Prepare the query for f on db (bound, ready to step). Rows come oldest
 * first (by START seq; export: by END seq). Returns 0, or -1 with the
 * SQLite message printed.
 */
int runs_prepare(sqlite3 *db, const char *path, const struct run_filter *f,
		 sqlite3_stmt **st);

/*
 * Step st to the end, writing each row in format fmt to stdout. *n gets
 * the rows written and *last_end_seq the largest END seq among them (0 if
 * none). Returns 0, or -1 after printing why (read error).
 */
int runs_write(sqlite3 *db, const char *path, sqlite3_stmt *st,
	       enum run_format fmt, uint64_t *n, int64_t *last_end_seq);

/* runs_write as one part of a longer output (search --hosts): rows of
 * FMT_JSON go to shared (the caller prints it), the table or CSV header
 * only when header is set. */
int runs_write_part(sqlite3 *db, const char *path, sqlite3_stmt *st, enum run_format fmt,
		    uint64_t *n, int64_t *last_end_seq, json_t *shared, int header);

struct cli;
/*
 * Open the log of c, print the runs matching f in format fmt (as
 * runs_write, same *n and *last_end_seq) and close it. Returns 0, or -1
 * after printing why (log unreadable, read error).
 */
int runs_print(const struct cli *c, const struct run_filter *f, enum run_format fmt,
	       uint64_t *n, int64_t *last_end_seq);

#endif
