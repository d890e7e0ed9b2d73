/* SPDX-License-Identifier: ISC */
/*
 * The SQLite audit log: opening (schema, pragmas, hardening) and appending
 * signed records. The writer is the helper's unprivileged recorder, so
 * appends must be safe against concurrent runs (BEGIN IMMEDIATE serialises
 * them) and must either commit completely or not at all: a START that is
 * not committed means the run does not happen.
 */
#include "auditdb.h"
#include "signer.h"
#include "checkpoint.h"
#include "unconst.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sbx_audit {
	sqlite3 *db;
	int readonly;
	int has_fts;      /* writer: table code_fts exists and is kept in step */
	int lockfd;       /* writer: the log's file, for setup_lock; closed after SQLite */
	uint64_t busy_since_ms; /* busy_wait: when the current wait for a lock began */
	char path[4096];
};

/* The busy timeout: BUSY_WAIT_MS of retries for a lock another connection
 * holds. SQLite's own (sqlite3_busy_timeout) sleeps up to 100 ms between
 * tries (sqliteDefaultBusyCallback), and with a queue of runs on the log
 * the lock stands free for most of those sleeps: the appends of 16
 * concurrent runs then took seconds, not milliseconds. This one tries
 * again after 0.2 ms, doubling to at most 2 ms. */
#define BUSY_WAIT_MS 10000
static int busy_wait(void *arg, int count)
{
	struct sbx_audit *a = arg;
	struct timespec now;
	uint64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	if (count == 0)
		a->busy_since_ms = ms;
	if (ms - a->busy_since_ms >= BUSY_WAIT_MS)
		return 0;
	long us = count >= 4 ? 2000 : 200L << count;
	nanosleep(&(struct timespec){0, us * 1000}, NULL);
	return 1;
}

/*
 * Covering indexes for sbx-audit report (audit/report_query.c): the END
 * rows without touching the table (whose rows carry the blobs), already
 * grouped by outcome, and an ordered (run_id, kind) pass that finds runs
 * without END.
 * They keep a report over 1,000,000 records well under a second.
 */

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);"
	"CREATE TABLE IF NOT EXISTS records("
	" seq INTEGER PRIMARY KEY,"
	" kind TEXT, run_id TEXT, time TEXT, realtime_ns INTEGER,"
	" uid INTEGER, user TEXT, host TEXT, policy TEXT, language TEXT,"
	" code_sha256 TEXT, session TEXT, attempt INTEGER, parent_id TEXT,"
	" outcome TEXT, exit_code INTEGER, signal INTEGER, limit_fired TEXT,"
	" wall_ms INTEGER, cpu_ms INTEGER, memory_peak_bytes INTEGER,"
	" stdout_bytes INTEGER, stderr_bytes INTEGER, artifacts TEXT,"
	" blob BLOB NOT NULL, leaf BLOB NOT NULL, chain BLOB NOT NULL,"
	" sig BLOB NOT NULL, origin TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS records_run_id ON records(run_id);"
	"CREATE INDEX IF NOT EXISTS records_time ON records(time);"
	"CREATE INDEX IF NOT EXISTS records_user ON records(user);"
	"CREATE TABLE IF NOT EXISTS code(sha256 TEXT PRIMARY KEY, text BLOB NOT NULL);"
	/* the policy files runs were started under, by digest (START's
	 * policy_sha256 and policy_bytes): unsigned like code, bound through
	 * the key (sbx-audit verify: policy-missing, policy-modified) */
	"CREATE TABLE IF NOT EXISTS policy(sha256 TEXT PRIMARY KEY, text BLOB NOT NULL);"
	"INSERT OR IGNORE INTO meta(key, value) VALUES('format', 2);";

/*
 * Search support (sbx-audit search), added to logs of format 1 without
 * changing the format: readers of older sbx ignore it, and a log written by
 * an older recorder gets it the first time a newer writer opens it. The
 * indexes let search answer from an index instead of scanning records;
 * code_fts indexes the code table by trigrams for --code-contains. The
 * recorder keeps code_fts in step itself (triggers are disabled on every
 * connection, see harden()). Meta "search" records the version applied.
 */
#define SEARCH_VERSION "2"
static const struct {
	const char *name, *sql;
} search_indexes[] = {
	{"records_uid", "CREATE INDEX IF NOT EXISTS records_uid ON records(uid)"},
	{"records_policy", "CREATE INDEX IF NOT EXISTS records_policy ON records(policy)"},
	{"records_language", "CREATE INDEX IF NOT EXISTS records_language ON records(language)"},
	{"records_session", "CREATE INDEX IF NOT EXISTS records_session ON records(session)"},
	{"records_code", "CREATE INDEX IF NOT EXISTS records_code ON records(code_sha256)"},
	{"records_outcome", "CREATE INDEX IF NOT EXISTS records_outcome ON records(outcome)"},
	/* covers the START<->END join and finds STARTs without an END */
	{"records_kind_run", "CREATE INDEX IF NOT EXISTS records_kind_run ON records(kind, run_id)"},
	/* sbx-audit report: its GROUP BYs read this index, not the table */
	{"records_report", "CREATE INDEX IF NOT EXISTS records_report ON records(kind, outcome, realtime_ns,"
			   " user, policy, language, limit_fired, code_sha256, session, attempt)"},
	{"records_run_kind", "CREATE INDEX IF NOT EXISTS records_run_kind ON records(run_id, kind)"},
};
/* Above this many records, one index per open: each takes about 1.5 s per
 * million records with the write lock held, and other runs wait for it
 * (busy timeout 10 s). */
#define SEARCH_STEP_RECORDS 100000
static const char fts_sql[] =
	"CREATE VIRTUAL TABLE IF NOT EXISTS code_fts USING fts5(text,"
	" content='code', content_rowid='rowid', tokenize='trigram case_sensitive 1');"
	"INSERT INTO code_fts(code_fts) VALUES('rebuild');";

sqlite3 *sbx_audit_db(struct sbx_audit *a)
{
	return a->db;
}

const char *sbx_audit_path(const struct sbx_audit *a)
{
	return a->path;
}

/* SQLite creates files 0644 & ~umask; the log must be exactly group
 * readable (sbx-audit) and nothing more, whatever the umask. Returns an
 * fd of the file (kept for setup_lock until the connection is closed),
 * or -1 with err. */
static int precreate(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);

	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	else if (fd >= 0 && fchmod(fd, 0640) < 0) {
		sbx_audit_seterr(err, errlen, "%s: chmod: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (fd < 0)
		sbx_audit_seterr(err, errlen, "%s: %s", path,
				 errno == ELOOP ? "is a symbolic link" : strerror(errno));
	return fd;
}

/* SQLite says only "unable to open database file"; the errno says why. */
static int precheck(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		sbx_audit_seterr(err, errlen, "%s: %s", path,
		       errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int sql_fail(struct sbx_audit *a, const char *what, char *err, size_t errlen)
{
	sbx_audit_seterr(err, errlen, "%s: %s: %s", a->path, what, sqlite3_errmsg(a->db));
	return -1;
}

static int exec_sql(struct sbx_audit *a, const char *sql, const char *what,
		    char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(a->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: %s: %s", a->path, what,
		       msg ? msg : sqlite3_errmsg(a->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* A log is data, possibly edited by someone hostile: no triggers, views or
 * schema tricks may run code paths while we read or write it. */
static void harden(sqlite3 *db)
{
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
}

static int has_records_table(struct sbx_audit *a, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, found;

	rc = sqlite3_prepare_v2(a->db,
		"SELECT 1 FROM sqlite_master WHERE type='table' AND name='records'",
		-1, &st, NULL);
	if (rc != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: %s", a->path, sqlite3_errmsg(a->db));
		return -1;
	}
	rc = sqlite3_step(st);
	found = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sbx_audit_seterr(err, errlen, "%s: %s", a->path, sqlite3_errmsg(a->db));
		return -1;
	}
	return found;
}

static int check_format(struct sbx_audit *a, char *err, size_t errlen)
{
	char v[32];
	int rc = sbx_audit_meta_get(a, "format", v, sizeof(v), err, errlen);

	if (rc < 0)
		return -1;
	if (rc == 0 && strcmp(v, "1") != 0 && strcmp(v, "2") != 0) {
		sbx_audit_seterr(err, errlen, "%s: unsupported log format %s (this sbx reads format %d)",
		       a->path, v, SBX_AUDIT_FORMAT);
		return -1;
	}
	return 0;
}

static int table_exists(struct sbx_audit *a, const char *name)
{
	sqlite3_stmt *st;
	int found;

	if (sqlite3_prepare_v2(a->db, "SELECT 1 FROM sqlite_master WHERE name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int64_t last_seq(struct sbx_audit *a)
{
	sqlite3_stmt *st;
	int64_t n = 0;

	if (sqlite3_prepare_v2(a->db, "SELECT coalesce(max(seq), 0) FROM records", -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/*
 * Until meta "search" says it is done: the indexes, then the code text
 * index built from the code table. A large log gets one index per open, so
 * no single run waits long. Failing here costs only search speed (search
 * works without any of it), so it never refuses the run.
 */
static void setup_search(struct sbx_audit *a)
{
	int64_t n;
	size_t i, made = 0;
	int all = 1;
	char v[16];

	if (sbx_audit_meta_get(a, "search", v, sizeof(v), NULL, 0) == 0 &&
	    strcmp(v, SEARCH_VERSION) == 0)
		goto done;
	n = last_seq(a);
	if (sqlite3_exec(a->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto done;
	for (i = 0; i < sizeof(search_indexes) / sizeof(search_indexes[0]); i++) {
		if (table_exists(a, search_indexes[i].name) == 1)
			continue;
		if (made > 0 && n >= SEARCH_STEP_RECORDS) {
			all = 0;
			break;
		}
		if (sqlite3_exec(a->db, search_indexes[i].sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		made++;
	}
	/* An SQLite without FTS5 still gets the indexes; search then scans
	 * the code table. */
	if (all && sqlite3_exec(a->db, fts_sql, NULL, NULL, NULL) != SQLITE_OK &&
	    table_exists(a, "code_fts") == 1)
		goto fail;
	/* new indexes need statistics: let refresh_stats run now */
	if ((made && sqlite3_exec(a->db, "DELETE FROM meta WHERE key = 'analyzed'", NULL, NULL, NULL) != SQLITE_OK) ||
	    (all && sqlite3_exec(a->db, "INSERT OR REPLACE INTO meta(key, value) VALUES('search', '"
				 SEARCH_VERSION "')", NULL, NULL, NULL) != SQLITE_OK) ||
	    sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	goto done;
fail:
	sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
done:
	a->has_fts = table_exists(a, "code_fts") == 1;
}

/*
 * The query planner needs statistics to choose between the indexes (a
 * filter matching half the log is better served by a scan). ANALYZE with
 * a sampling limit takes milliseconds; it runs when the log has doubled
 * since the last time (meta "analyzed"), so at 1000, 2000, 4000 ... records.
 * A failure only costs query speed, so it is not an error.
 */
static void refresh_stats(struct sbx_audit *a)
{
	sqlite3_stmt *st;
	int64_t n = 0, done = 0;
	char v[32];

	if (sqlite3_prepare_v2(a->db, "SELECT coalesce(max(seq), 0) FROM records", -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sbx_audit_meta_get(a, "analyzed", v, sizeof(v), NULL, 0) == 0)
		done = strtoll(v, NULL, 10);
	if (n < 1000 || (done > 0 && n < 2 * done))
		return;
	if (sqlite3_exec(a->db, "PRAGMA analysis_limit=1000; BEGIN IMMEDIATE; ANALYZE", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		return;
	}
	if (sqlite3_prepare_v2(a->db, "INSERT OR REPLACE INTO meta(key, value) VALUES('analyzed', ?1)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, n);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
}

static int count_columns(struct sbx_audit *a, const char *table)
{
	sqlite3_stmt *st;
	int have = 0;

	if (sqlite3_prepare_v2(a->db, "SELECT count(*) FROM pragma_table_info(?1)", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		have = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return have;
}

/* Columns of the projected record fields (recfield.h) a log written by an
 * older sbx lacks; and format 2, which tells older readers that records
 * of version 2 may follow. Called inside the set-up transaction. */
static int upgrade(struct sbx_audit *a, char *err, size_t errlen)
{
	size_t i, n = sbx_audit_ncols();
	char sql[256];

	for (i = SBX_NCOLS; i < n; i++) {
		sqlite3_stmt *st;
		int have = 0;
		if (sqlite3_prepare_v2(a->db, "SELECT 1 FROM pragma_table_info('records') WHERE name = ?1",
				       -1, &st, NULL) != SQLITE_OK)
			return sql_fail(a, "read schema", err, errlen);
		sqlite3_bind_text(st, 1, sbx_audit_colname(i), -1, SQLITE_STATIC);
		have = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (have)
			continue;
		snprintf(sql, sizeof(sql), "ALTER TABLE records ADD COLUMN %s %s", sbx_audit_colname(i),
			 sbx_audit_colfield(i)->type == SBX_FT_STR || sbx_audit_colfield(i)->type == SBX_FT_DIGEST ?
			 "TEXT" : "INTEGER");
		if (exec_sql(a, sql, "add column", err, errlen) < 0)
			return -1;
	}
	if (sbx_ckpt_table_create(a->db, "main") < 0)
		return sql_fail(a, "create checkpoints table", err, errlen);
	if (count_columns(a, "checkpoints") < 5 &&
	    exec_sql(a, "ALTER TABLE checkpoints ADD COLUMN kept INTEGER", "add column", err, errlen) < 0)
		return -1;
	return exec_sql(a, "UPDATE meta SET value = 2 WHERE key = 'format' AND value = 1",
			"set format", err, errlen);
}

/* Whether the schema needs work: no records table, a projected column
 * missing, the checkpoints table missing or without its kept column, or
 * format 1. Read without a write lock (most opens). */
static int needs_upgrade(struct sbx_audit *a)
{
	char v[8];

	if (sbx_audit_meta_get(a, "format", v, sizeof(v), NULL, 0) != 0 || strcmp(v, "2") != 0)
		return 1;
	return (size_t)count_columns(a, "records") < sbx_audit_ncols() + 5 ||
	       count_columns(a, "checkpoints") < 5 || count_columns(a, "policy") < 2;
}

/*
 * The first opens of a new file race: journal_mode=WAL needs the database
 * lock for itself, and SQLite gives up on it at once (SQLITE_BUSY without
 * the busy handler) when another connection holds it for the same change.
 * Until the file is in WAL mode (its header says so: bytes 18 and 19 are
 * 2, sqlite.org/fileformat.html 1.3.1), writers set it up one at a time
 * under an flock(2) of the file, which SQLite's own fcntl locks never see.
 * After that the header says WAL and no open takes the flock again.
 *
 * The fd stays open until the connection is closed (sbx_audit_close):
 * closing any fd of a file drops every POSIX lock the process holds on
 * it (fcntl(2)), SQLite's included, and a writer whose locks vanish
 * corrupts the log.
 */
static int setup_lock(struct sbx_audit *a, char *err, size_t errlen)
{
	unsigned char hdr[20];
	int fd = a->lockfd, i;

	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) && hdr[18] == 2 && hdr[19] == 2)
		return 0;
	/* at most the busy timeout, as every other wait of the writer */
	for (i = 0; i < 1000; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 1;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		usleep(10000);
	}
	sbx_audit_seterr(err, errlen, "%s: set-up of a new log: another writer holds it for 10 s",
			 a->path);
	return -1;
}

static int setup_writer(struct sbx_audit *a, char *err, size_t errlen)
{
	int one = 1, locked, ret = -1;

	locked = setup_lock(a, err, errlen);
	if (locked < 0)
		return -1;
	if (exec_sql(a, "PRAGMA journal_mode=WAL", "journal_mode", err, errlen) < 0 ||
	    exec_sql(a, "PRAGMA synchronous=FULL", "synchronous", err, errlen) < 0 ||
	    exec_sql(a, "PRAGMA journal_size_limit=4194304", "journal_size_limit", err, errlen) < 0)
		goto out;
	/* Keep -wal and -shm after close: auditors open the log read-only and
	 * cannot create them in the _sbx-owned directory. */
	sqlite3_file_control(a->db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
	/* No checkpoint when the last connection closes (SQLite checkpoints
	 * the whole WAL then: a write and three more syncs at the end of
	 * every run, each run's recorder being the last connection). The WAL
	 * is checkpointed at a size instead, by the commit that takes it past
	 * wal_autocheckpoint pages. The size is small on purpose: with no
	 * connection left between runs, every run's first open rebuilds the
	 * WAL index by reading and checksumming the whole WAL (measured here:
	 * some 2 us a frame, 3 ms at SQLite's default of 1000 pages), so 64
	 * pages (a run writes about 25: START, END, their search index and
	 * checkpoint rows) keep that near 0.2 ms, and one run in two or three
	 * pays for a checkpoint (measured: 4.2 syncs of the log per run, 6
	 * with the checkpoint at every close). Committed records lose nothing:
	 * with synchronous=FULL each commit syncs its WAL frames, and readers
	 * see the WAL (https://sqlite.org/wal.html). */
	sqlite3_db_config(a->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (exec_sql(a, "PRAGMA wal_autocheckpoint=64", "wal_autocheckpoint", err, errlen) < 0)
		goto out;
	if (!needs_upgrade(a)) {
		ret = 0;
		goto out;
	}
	if (exec_sql(a, "BEGIN IMMEDIATE", "begin", err, errlen) < 0)
		goto out;
	if (exec_sql(a, schema_sql, "create schema", err, errlen) < 0 ||
	    upgrade(a, err, errlen) < 0 || exec_sql(a, "COMMIT", "commit", err, errlen) < 0) {
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	ret = 0;
out:
	if (locked)
		flock(a->lockfd, LOCK_UN); /* never close(): see setup_lock */
	return ret;
}

int sbx_audit_open(const char *path, int readonly, struct sbx_audit **out,
		   char *err, size_t errlen)
{
	struct sbx_audit *a;
	/* NOMUTEX: a handle is used by one thread at a time (verify's
	 * signature threads never touch it); the per-call locking cost 8% of
	 * a verify. */
	int flags = SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX;
	int rc;

	*out = NULL;
	if (sodium_init() < 0) {
		sbx_audit_seterr(err, errlen, "libsodium: initialisation failed");
		return -1;
	}
	if (path == NULL || strlen(path) >= sizeof(a->path)) {
		sbx_audit_seterr(err, errlen, "audit log: path missing or too long");
		return -1;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		sbx_audit_seterr(err, errlen, "%s: out of memory", path);
		return -1;
	}
	memcpy(a->path, path, strlen(path) + 1);
	a->readonly = readonly;
	a->lockfd = -1;
	if (readonly) {
		flags |= SQLITE_OPEN_READONLY;
		if (precheck(path, err, errlen) < 0) {
			free(a);
			return -1;
		}
	} else {
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
		a->lockfd = precreate(path, err, errlen);
		if (a->lockfd < 0) {
			free(a);
			return -1;
		}
	}
	rc = sqlite3_open_v2(path, &a->db, flags, NULL);
	if (rc != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: %s", path,
		       a->db ? sqlite3_errmsg(a->db) : sqlite3_errstr(rc));
		goto fail;
	}
	harden(a->db);
	sqlite3_busy_handler(a->db, busy_wait, a);
	if (readonly) {
		if (exec_sql(a, "PRAGMA query_only=1", "query_only", err, errlen) < 0)
			goto fail;
		rc = has_records_table(a, err, errlen);
		if (rc < 0) {
			if ((sqlite3_extended_errcode(a->db) & 0xff) == SQLITE_READONLY ||
			    (sqlite3_extended_errcode(a->db) & 0xff) == SQLITE_CANTOPEN)
				sbx_audit_seterr(err, errlen, "%s: %s (a reader without write access needs the "
				       "log's -wal and -shm files, which its writer keeps)",
				       path, sqlite3_errmsg(a->db));
			goto fail;
		}
		if (rc == 0) {
			sbx_audit_seterr(err, errlen, "%s: not an sbx audit log (no records table)", path);
			goto fail;
		}
	} else if (setup_writer(a, err, errlen) < 0) {
		goto fail;
	}
	if (check_format(a, err, errlen) < 0)
		goto fail;
	if (!readonly) {
		setup_search(a);
		refresh_stats(a);
	}
	*out = a;
	return 0;
fail:
	sqlite3_close(a->db);
	if (a->lockfd >= 0)
		close(a->lockfd);
	free(a);
	return -1;
}

void sbx_audit_close(struct sbx_audit *a)
{
	if (a == NULL)
		return;
	sqlite3_close(a->db);
	if (a->lockfd >= 0)
		close(a->lockfd); /* after SQLite's own fds: see setup_lock */
	free(a);
}

int sbx_audit_start_claims(struct sbx_audit *a, const char *run_id, struct sbx_start_claims *c, char *err,
			   size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret = 1;

	memset(c, 0, sizeof(*c));
	/* both through the run_id index: a START, then its last END */
	if (sqlite3_prepare_v2(a->db,
			       "SELECT s.uid, COALESCE(s.session, ''), s.attempt, COALESCE(s.language, ''),"
			       " COALESCE(s.policy, ''), (SELECT COALESCE(e.outcome, '') FROM records e"
			       " WHERE e.run_id = s.run_id AND e.kind = 'end' ORDER BY e.seq DESC LIMIT 1)"
			       " FROM records s WHERE s.run_id = ?1 AND s.kind = 'start' ORDER BY s.seq LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: records: %s", a->path, sqlite3_errmsg(a->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t;

		c->uid = (uint32_t)sqlite3_column_int64(st, 0);
		c->attempt = (uint32_t)sqlite3_column_int64(st, 2);
		t = sqlite3_column_text(st, 1);
		snprintf(c->session, sizeof(c->session), "%s", t ? (const char *)t : "");
		t = sqlite3_column_text(st, 3);
		snprintf(c->language, sizeof(c->language), "%s", t ? (const char *)t : "");
		t = sqlite3_column_text(st, 4);
		snprintf(c->policy, sizeof(c->policy), "%s", t ? (const char *)t : "");
		t = sqlite3_column_text(st, 5);
		snprintf(c->outcome, sizeof(c->outcome), "%s", t ? (const char *)t : "");
		ret = 0;
	} else if (rc != SQLITE_DONE) {
		sbx_audit_seterr(err, errlen, "%s: records: %s", a->path, sqlite3_errmsg(a->db));
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

int sbx_audit_end_changeset(struct sbx_audit *a, const char *run_id, uint32_t *uid, char *sha, size_t sha_len,
			    char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret = 1;

	if (sha_len > 0)
		sha[0] = '\0';
	if (sqlite3_prepare_v2(a->db,
			       "SELECT uid, COALESCE(changeset_sha256, '') FROM records"
			       " WHERE run_id = ?1 AND kind = 'end' ORDER BY seq LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: records: %s", a->path, sqlite3_errmsg(a->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *s = sqlite3_column_text(st, 1);
		*uid = (uint32_t)sqlite3_column_int64(st, 0);
		snprintf(sha, sha_len, "%s", s ? (const char *)s : "");
		ret = 0;
	} else if (rc != SQLITE_DONE) {
		sbx_audit_seterr(err, errlen, "%s: records: %s", a->path, sqlite3_errmsg(a->db));
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

int sbx_audit_meta_get(struct sbx_audit *a, const char *key, char *buf,
		       size_t buflen, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret = 1;

	if (buflen > 0)
		buf[0] = '\0';
	if (sqlite3_prepare_v2(a->db, "SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		sbx_audit_seterr(err, errlen, "%s: meta: %s", a->path, sqlite3_errmsg(a->db));
		return -1;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);
		snprintf(buf, buflen, "%s", v ? (const char *)v : "");
		ret = 0;
	} else if (rc != SQLITE_DONE) {
		sbx_audit_seterr(err, errlen, "%s: meta: %s", a->path, sqlite3_errmsg(a->db));
		ret = -1;
	}
	sqlite3_finalize(st);
	return ret;
}

/* ---- append ---- */

/* Last seq and chain value, or 0 and 32 zero bytes for an empty log. */
static int chain_head(struct sbx_audit *a, uint64_t *seq, unsigned char chain[32],
		      char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	*seq = 0;
	memset(chain, 0, 32);
	if (sqlite3_prepare_v2(a->db, "SELECT seq, chain FROM records ORDER BY seq DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(a, "read chain head", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0);
		if (s < 0 || sqlite3_column_bytes(st, 1) != 32) {
			sbx_audit_seterr(err, errlen, "%s: last record (seq %lld) is damaged; run sbx-audit verify",
			       a->path, (long long)s);
			ret = -1;
		} else {
			*seq = (uint64_t)s;
			memcpy(chain, sqlite3_column_blob(st, 1), 32);
		}
	} else if (rc != SQLITE_DONE) {
		ret = sql_fail(a, "read chain head", err, errlen);
	}
	sqlite3_finalize(st);
	return ret;
}

/* One log, one key: records signed with two keys could never all verify,
 * so a replaced key must come with a new log. The first append records the
 * public key. */
static int check_key(struct sbx_audit *a, const unsigned char *pk, char *err, size_t errlen)
{
	char have[2 * crypto_sign_PUBLICKEYBYTES + 1], want[sizeof(have)];
	sqlite3_stmt *st;
	int rc;

	sodium_bin2hex(want, sizeof(want), pk, crypto_sign_PUBLICKEYBYTES);
	rc = sbx_audit_meta_get(a, "pubkey", have, sizeof(have), err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (strcmp(have, want) != 0) {
			sbx_audit_seterr(err, errlen, "%s: the signing key is not the key of this log "
			       "(meta pubkey %.16s..., key %.16s...); move the log aside after a key change",
			       a->path, have, want);
			return -1;
		}
		return 0;
	}
	if (sqlite3_prepare_v2(a->db, "INSERT INTO meta(key, value) VALUES('pubkey', ?1)",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(a, "record public key", err, errlen);
	sqlite3_bind_text(st, 1, want, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(a, "record public key", err, errlen);
	return 0;
}

static void bind_col(sqlite3_stmt *st, int idx, const struct sbx_colval *v)
{
	switch (v->type) {
	case SBX_COL_INT:
		sqlite3_bind_int64(st, idx, v->i);
		break;
	case SBX_COL_TEXT:
		sqlite3_bind_text(st, idx, v->s, (int)v->n, SQLITE_STATIC);
		break;
	default:
		sqlite3_bind_null(st, idx);
		break;
	}
}

char *sbx_audit_record_columns(void)
{
	size_t i, n = sbx_audit_ncols();
	char *s = malloc(2048), *p;

	if (s == NULL)
		return NULL;
	p = s;
	/* column names are the tables' own identifiers (unit test: [a-z_]) */
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s,", sbx_audit_colname(i));
	sprintf(p, "blob,leaf,chain,sig,origin");
	return s;
}

static char *insert_sql(void)
{
	size_t i, n = sbx_audit_ncols();
	char *cols = sbx_audit_record_columns(), *sql = malloc(4096), *p;

	if (sql == NULL || cols == NULL) {
		free(cols);
		free(sql);
		return NULL;
	}
	p = sql + sprintf(sql, "INSERT INTO records(%s) VALUES(", cols);
	free(cols);
	for (i = 0; i < n + 5; i++)
		p += sprintf(p, i ? ",?" : "?");
	sprintf(p, ")");
	return sql;
}

struct signed_rec {
	unsigned char *blob;
	size_t len;
	unsigned char leaf[32], chain[32], sig[crypto_sign_BYTES];
};

static int insert_row(struct sbx_audit *a, const struct sbx_record *rec,
		      const struct signed_rec *s, const char *origin,
		      char *err, size_t errlen)
{
	struct sbx_cols cols;
	sqlite3_stmt *st = NULL;
	char *sql;
	int i, n, rc;

	if (sbx_record_columns(rec, &cols, err, errlen) < 0)
		return -1;
	sql = insert_sql();
	if (sql == NULL || sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) != SQLITE_OK) {
		free(sql);
		sbx_cols_free(&cols);
		return sql_fail(a, "insert record", err, errlen);
	}
	free(sql);
	n = (int)sbx_audit_ncols();
	for (i = 0; i < n; i++)
		bind_col(st, i + 1, &cols.v[i]);
	sqlite3_bind_blob(st, n + 1, s->blob, (int)s->len, SQLITE_STATIC);
	sqlite3_bind_blob(st, n + 2, s->leaf, 32, SQLITE_STATIC);
	sqlite3_bind_blob(st, n + 3, s->chain, 32, SQLITE_STATIC);
	sqlite3_bind_blob(st, n + 4, s->sig, crypto_sign_BYTES, SQLITE_STATIC);
	sqlite3_bind_text(st, n + 5, origin, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	sbx_cols_free(&cols);
	if (rc != SQLITE_DONE)
		return sql_fail(a, "insert record", err, errlen);
	return 0;
}

/*
 * A START's text (its code, its policy) into table ("code" or "policy"),
 * keyed by its SHA-256 hex, once per digest; *added says whether this
 * call inserted the row. The key must be the text's own digest: a wrong
 * one would make the stored text look tampered with for every later run
 * that names it.
 */
static int insert_by_digest(struct sbx_audit *a, const char *table, const char *text, size_t len,
			    const unsigned char want[32], bool *added, char *err, size_t errlen)
{
	unsigned char digest[32];
	char hex[65], sql[96], what[32];
	sqlite3_stmt *st;
	int rc;

	*added = false;
	snprintf(what, sizeof(what), "insert %s", table);
	if (len > (size_t)INT32_MAX) {
		sbx_audit_seterr(err, errlen, "%s: %s text too large", a->path, table);
		return -1;
	}
	crypto_hash_sha256(digest, (const unsigned char *)text, len);
	if (sodium_memcmp(digest, want, 32) != 0) {
		sbx_audit_seterr(err, errlen, "%s: %s_sha256 does not match the %s text", a->path, table, table);
		return -1;
	}
	sodium_bin2hex(hex, sizeof(hex), digest, 32);
	snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO %s(sha256, text) VALUES(?1, ?2)", table);
	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(a, what, err, errlen);
	sqlite3_bind_text(st, 1, hex, -1, SQLITE_STATIC);
	/* A zero-length blob bound from a NULL pointer would be SQL NULL. */
	sqlite3_bind_blob(st, 2, len ? text : "", (int)len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(a, what, err, errlen);
	*added = sqlite3_changes(a->db) == 1;
	return 0;
}

static int insert_code(struct sbx_audit *a, const struct sbx_record *rec,
		       char *err, size_t errlen)
{
	sqlite3_stmt *st;
	bool added;
	int rc;

	if (rec->kind != SBX_REC_START || rec->code == NULL)
		return 0;
	if (insert_by_digest(a, "code", rec->code, rec->code_len, rec->code_sha256, &added, err, errlen) < 0)
		return -1;
	if (!a->has_fts || !added)
		return 0;
	/* New text: index it in the same transaction, so the index never
	 * lacks a committed code row. */
	if (sqlite3_prepare_v2(a->db, "INSERT INTO code_fts(rowid, text) VALUES(last_insert_rowid(), ?1)",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(a, "index code", err, errlen);
	sqlite3_bind_blob(st, 1, rec->code_len ? rec->code : "", (int)rec->code_len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(a, "index code", err, errlen);
	return 0;
}

/* START's policy text, once per digest: the record names it by
 * policy_sha256 (fixed field) and policy_bytes (extension field). */
static int insert_policy(struct sbx_audit *a, struct sbx_record *rec, char *err, size_t errlen)
{
	bool added;

	if (rec->kind != SBX_REC_START || rec->policy_text == NULL)
		return 0;
	return insert_by_digest(a, "policy", rec->policy_text, rec->policy_len, rec->policy_sha256, &added, err,
				errlen);
}

/*
 * What the writer adds to every record of version 2 (on a copy: the
 * caller's record is left as it was, but for seq): the origin, so that
 * the leaf (and a checkpoint) covers it, not only the signature; and in a
 * START the newest kept checkpoint (auditckpt.c), which binds the kept
 * checkpoint rows into the chain.
 */
static int encode_stamped(struct sbx_audit *a, const struct sbx_record *rec, const char *origin,
			  struct signed_rec *s, char *err, size_t errlen)
{
	struct sbx_record tmp = *rec;
	unsigned char root[32];
	uint64_t size = 0;
	struct sbx_fval v;
	int rc = 0;

	if (sbx_rec_get(rec, SBX_F_ORIGIN, &v) == 1 &&
	    (v.n != strlen(origin) || memcmp(v.p, origin, v.n) != 0)) {
		sbx_audit_seterr(err, errlen, "record origin field is not the log's origin");
		return -1;
	}
	tmp.ext.buf = NULL;
	tmp.ext.len = tmp.ext.cap = 0;
	if (rec->ext.len > 0) {
		tmp.ext.buf = malloc(rec->ext.len);
		if (tmp.ext.buf == NULL) {
			sbx_audit_seterr(err, errlen, "encode record: out of memory");
			return -1;
		}
		memcpy(tmp.ext.buf, rec->ext.buf, rec->ext.len);
		tmp.ext.len = tmp.ext.cap = rec->ext.len;
	}
	if (sbx_rec_get(rec, SBX_F_ORIGIN, &v) != 1)
		rc = sbx_rec_put_str(&tmp, SBX_F_ORIGIN, origin, err, errlen);
	/* the text goes into the policy table: its size is signed with it */
	if (rc == 0 && rec->kind == SBX_REC_START && rec->policy_text != NULL &&
	    sbx_rec_get(rec, SBX_F_POLICY_BYTES, &v) != 1)
		rc = sbx_rec_put_u64(&tmp, SBX_F_POLICY_BYTES, rec->policy_len, err, errlen);
	if (rc == 0 && rec->kind == SBX_REC_START && sbx_rec_get(rec, SBX_F_AFTER_CKPT, &v) != 1) {
		rc = sbx_audit_kept_checkpoint(a, &size, root, err, errlen);
		if (rc == 1) {
			struct sbx_fval item[2] = {{.type = SBX_FT_U64, .u = size},
						   {.type = SBX_FT_DIGEST, .p = root, .n = 32}};
			rc = sbx_rec_add_item(&tmp, SBX_F_AFTER_CKPT, item, 2, err, errlen);
		}
	}
	if (rc >= 0)
		rc = sbx_record_encode(&tmp, &s->blob, &s->len, err, errlen);
	sbx_rext_free(&tmp.ext);
	return rc < 0 ? -1 : 0;
}

static int append_locked(struct sbx_audit *a, struct sbx_record *rec,
			 struct sbx_signer *sg, const char *origin,
			 struct signed_rec *s, char *err, size_t errlen)
{
	uint64_t last;
	unsigned char prev[32];

	if (check_key(a, sg->pk, err, errlen) < 0 ||
	    chain_head(a, &last, prev, err, errlen) < 0)
		return -1;
	rec->seq = last + 1;
	if (encode_stamped(a, rec, origin, s, err, errlen) < 0)
		return -1;
	sbx_audit_leaf(s->blob, s->len, s->leaf);
	if (sg->record(sg, a, rec->seq, prev, origin, s->blob, s->len, s->chain, s->sig, err,
		       errlen) < 0)
		return -1;
	if (insert_row(a, rec, s, origin, err, errlen) < 0 ||
	    insert_code(a, rec, err, errlen) < 0 || insert_policy(a, rec, err, errlen) < 0)
		return -1;
	return 0;
}

static int append_args(struct sbx_audit *a, const struct sbx_record *rec,
			const struct sbx_signer *sg, const char *origin, char *err, size_t errlen)
{
	size_t olen;

	if (a == NULL || rec == NULL || sg == NULL) {
		sbx_audit_seterr(err, errlen, "audit append: missing argument");
		return -1;
	}
	if (a->readonly) {
		sbx_audit_seterr(err, errlen, "%s: opened read-only", a->path);
		return -1;
	}
	olen = origin ? strnlen(origin, SBX_ORIGIN_MAX + 1) : 0;
	if (olen == 0 || olen > SBX_ORIGIN_MAX) {
		sbx_audit_seterr(err, errlen, "%s: origin must be 1..%d bytes", a->path, SBX_ORIGIN_MAX);
		return -1;
	}
	return 0;
}

int sbx_audit_append_in_tx(struct sbx_audit *a, struct sbx_record *rec,
			   const unsigned char *sk, const char *origin,
			   unsigned char chain_out[32], char *err, size_t errlen)
{
	struct sbx_signer sg;

	if (sk == NULL) {
		sbx_audit_seterr(err, errlen, "audit append: missing argument");
		return -1;
	}
	sbx_signer_local(&sg, sk);
	return sbx_audit_append_in_tx_with(a, rec, &sg, origin, chain_out, err, errlen);
}

int sbx_audit_append_in_tx_with(struct sbx_audit *a, struct sbx_record *rec,
				struct sbx_signer *sg, const char *origin,
				unsigned char chain_out[32], char *err, size_t errlen)
{
	struct signed_rec s = {0};
	int rc;

	if (append_args(a, rec, sg, origin, err, errlen) < 0)
		return -1;
	rc = append_locked(a, rec, sg, origin, &s, err, errlen);
	free(s.blob);
	if (rc == 0 && chain_out != NULL)
		memcpy(chain_out, s.chain, 32);
	return rc;
}

int sbx_audit_append(struct sbx_audit *a, struct sbx_record *rec,
		     const unsigned char *sk, const char *origin,
		     unsigned char chain_out[32], char *err, size_t errlen)
{
	struct sbx_signer sg;

	if (sk == NULL) {
		sbx_audit_seterr(err, errlen, "audit append: missing argument");
		return -1;
	}
	sbx_signer_local(&sg, sk);
	return sbx_audit_append_with(a, rec, &sg, origin, chain_out, err, errlen);
}

int sbx_audit_append_with(struct sbx_audit *a, struct sbx_record *rec, struct sbx_signer *sg,
			  const char *origin, unsigned char chain_out[32], char *err,
			  size_t errlen)
{
	struct signed_rec s = {0};
	int rc;

	if (append_args(a, rec, sg, origin, err, errlen) < 0)
		return -1;
	rc = sqlite3_exec(a->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(a, "begin transaction", err, errlen);
	if (append_locked(a, rec, sg, origin, &s, err, errlen) < 0) {
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		free(s.blob);
		return -1;
	}
	free(s.blob);
	if (sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sql_fail(a, "commit", err, errlen);
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	if (chain_out != NULL)
		memcpy(chain_out, s.chain, 32);
	return 0;
}

int sbx_audit_insert_signed(struct sbx_audit *a, struct sbx_record *rec, const unsigned char *blob,
			    size_t len, const unsigned char leaf[32], const unsigned char chain[32],
			    const unsigned char sig[64], const char *origin, const unsigned char *pk,
			    char *err, size_t errlen)
{
	struct signed_rec s;

	if (a == NULL || rec == NULL || blob == NULL || origin == NULL || pk == NULL || a->readonly) {
		sbx_audit_seterr(err, errlen, "audit insert: missing argument or read-only log");
		return -1;
	}
	s.blob = sbx_unconst(blob); /* only read: insert_row binds it */
	s.len = len;
	memcpy(s.leaf, leaf, 32);
	memcpy(s.chain, chain, 32);
	memcpy(s.sig, sig, crypto_sign_BYTES);
	if (check_key(a, pk, err, errlen) < 0 || insert_row(a, rec, &s, origin, err, errlen) < 0 ||
	    insert_code(a, rec, err, errlen) < 0 || insert_policy(a, rec, err, errlen) < 0)
		return -1;
	return 0;
}

int sbx_audit_leaves(sqlite3 *db, uint64_t n, unsigned char (**out)[32], uint64_t *got)
{
	unsigned char (*l)[32] = malloc((n ? n : 1) * 32);
	sqlite3_stmt *st;
	uint64_t k = 0;

	*out = NULL;
	*got = n;
	if (l == NULL ||
	    sqlite3_prepare_v2(db, "SELECT seq, leaf FROM records WHERE seq <= ?1 ORDER BY seq", -1, &st, NULL) !=
		    SQLITE_OK) {
		free(l);
		return -1;
	}
	sqlite3_bind_int64(st, 1, (int64_t)n);
	while (k < n && sqlite3_step(st) == SQLITE_ROW && (uint64_t)sqlite3_column_int64(st, 0) == k + 1 &&
	       sqlite3_column_bytes(st, 1) == 32)
		memcpy(l[k++], sqlite3_column_blob(st, 1), 32);
	sqlite3_finalize(st);
	*got = k;
	if (k != n) {
		free(l);
		return -1;
	}
	*out = l;
	return 0;
}
