/* SPDX-License-Identifier: ISC */
/*
 * audit-bench: writes audit logs through the real append function
 * (sbx_audit_append), for the benchmark (bench/audit) and for the search
 * test's fixtures. Not installed.
 *
 *   audit-bench fixture DB KEY < SPEC
 *       one run per line: USER UID POLICY LANGUAGE OUTCOME SESSION TIME CODE...
 *       (TIME: ISO 8601 UTC "2026-01-02T03:04:05Z"; SESSION "-" for none;
 *       OUTCOME "incomplete" writes only the START; CODE: the rest of the line)
 *   audit-bench gen DB KEY RUNS
 *       RUNS synthetic runs (2 records each) spread over the last 30 days,
 *       with synchronous=OFF (a fast load; still signed and chained)
 *   audit-bench append DB KEY WRITERS COUNT
 *       WRITERS processes append COUNT records each, concurrently, as the
 *       recorder does (WAL, BEGIN IMMEDIATE, synchronous=FULL); prints the
 *       latency median and p99 (ms), throughput (records/s) and failures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sodium.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "outcome.h"
#include "record.h"

static unsigned char sk[crypto_sign_SECRETKEYBYTES];

/* The log's origin and the records' host: "bench", or $AUDIT_BENCH_ORIGIN
 * (the fleet tests' second host) with the host up to its first '/'. */
static const char *origin(void)
{
	const char *o = getenv("AUDIT_BENCH_ORIGIN");
	return o && *o ? o : "bench";
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "audit-bench: %s: %s\n", what, err);
	exit(1);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void base(struct sbx_record *r, const char *run_id, const char *user, uint32_t uid,
		 const char *policy, const char *lang, const char *session, int64_t t_ns,
		 const char *code)
{
	memset(r, 0, sizeof(*r));
	r->kind = SBX_REC_START;
	snprintf(r->run_id, sizeof(r->run_id), "%s", run_id);
	snprintf(r->boot_id, sizeof(r->boot_id), "00000000-0000-0000-0000-000000000000");
	r->realtime_ns = t_ns;
	r->boottime_ns = t_ns;
	snprintf(r->host, sizeof(r->host), "%.*s", (int)strcspn(origin(), "/"), origin());
	r->uid = uid;
	r->gid = uid;
	snprintf(r->user, sizeof(r->user), "%s", user);
	snprintf(r->policy, sizeof(r->policy), "%s", policy);
	snprintf(r->language, sizeof(r->language), "%s", lang);
	memcpy(r->argv, "python3\0-I\0", 11);
	r->argv_len = 11;
	r->limits.wall_ms = 10000;
	r->code = code;
	r->code_len = strlen(code);
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code, r->code_len);
	if (session)
		snprintf(r->session, sizeof(r->session), "%s", session);
	r->attempt = 1;
}

static void end_of(struct sbx_record *r, const char *outcome)
{
	r->kind = SBX_REC_END;
	r->code = NULL;
	r->code_len = 0;
	r->realtime_ns += 1000000000;
	r->boottime_ns += 1000000000;
	snprintf(r->outcome, sizeof(r->outcome), "%s", outcome);
	r->exit_code = strcmp(outcome, "ok") == 0 ? 0 : 1;
	r->wall_ms = 42;
	r->cpu_ms = 40;
	r->memory_peak_bytes = 8 << 20;
	r->stdout_bytes = 12;
}

static void append(struct sbx_audit *a, struct sbx_record *r)
{
	char err[512];

	if (sbx_audit_append(a, r, sk, origin(), NULL, err, sizeof(err)) < 0)
		die("append", err);
}

static void random_id(char out[SBX_ID_LEN + 1])
{
	unsigned char b[16];

	randombytes_buf(b, sizeof(b));
	sodium_bin2hex(out, SBX_ID_LEN + 1, b, sizeof(b));
}

static int64_t parse_utc(const char *s)
{
	struct tm tm = {0};
	char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);

	if (end == NULL || *end)
		die("fixture", "TIME is not YYYY-MM-DDTHH:MM:SSZ");
	return (int64_t)timegm(&tm) * 1000000000;
}

/* After each END, as the recorder does: a checkpoint over the whole log. */
static void seal(struct sbx_audit *a)
{
	char err[512];

	if (sbx_audit_checkpoint(a, sk, origin(), 0, 0, NULL, err, sizeof(err)) < 0)
		die("checkpoint", err);
}

static int fixture(struct sbx_audit *a)
{
	char line[4096], user[65], policy[65], lang[65], outcome[32], session[65], when[64], id[SBX_ID_LEN + 1];
	unsigned uid;
	int off;
	struct sbx_record r;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (sscanf(line, "%64s %u %64s %64s %31s %64s %63s %n", user, &uid, policy, lang,
			   outcome, session, when, &off) != 7)
			die("fixture", line);
		random_id(id);
		base(&r, id, user, uid, policy, lang, strcmp(session, "-") ? session : NULL,
		     parse_utc(when), line + off);
		append(a, &r);
		if (strcmp(outcome, "incomplete") != 0) {
			end_of(&r, outcome);
			append(a, &r);
			seal(a);
		}
	}
	return 0;
}

/* A failed run's outcome: a row of the outcome table after ok, not the
 * audit-only one. */
static const char *failed_outcome(unsigned x)
{
	const struct sbx_outcome_def *o;

	do
		o = &sbx_outcome_defs[1 + x++ % (SBX_OUTCOME_N - 1)];
	while (!sbx_outcome_of_run(o));
	return o->name;
}

static int gen(struct sbx_audit *a, long runs)
{
	static const char *const pol[] = {"default", "strict", "net"};
	static const char *const lang[] = {"python", "sh", "node"};
	int64_t now = (int64_t)time(NULL) * 1000000000, span = 30LL * 86400 * 1000000000;
	char user[32], session[32], code[128], id[SBX_ID_LEN + 1];
	struct sbx_record r;
	long i;

	if (sqlite3_exec(sbx_audit_db(a), "PRAGMA synchronous=OFF", NULL, NULL, NULL) != SQLITE_OK)
		die("gen", "synchronous=OFF");
	for (i = 0; i < runs; i++) {
		uint32_t x = randombytes_uniform(1000);
		snprintf(user, sizeof(user), "user%03u", (unsigned)(i % 1000));
		snprintf(session, sizeof(session), "session-%ld", i / 10);
		/* 20000 distinct texts; a rare marker in one of them */
		snprintf(code, sizeof(code), "import math\nprint(math.sqrt(%ld)) # %s\n", i % 20000,
			 i % 20000 == 777 ? "needle_marker" : "common");
		snprintf(id, sizeof(id), "%032lx", i + 1);
		base(&r, id, user, 10000 + (uint32_t)(i % 1000), pol[i % 3], lang[(i / 3) % 3], session,
		     now - span + span / runs * i, code);
		append(a, &r);
		end_of(&r, x < 900 ? "ok" : failed_outcome(x));
		append(a, &r);
		seal(a);
		if (i % 50000 == 0)
			fprintf(stderr, "\r%ld/%ld runs", i, runs);
	}
	fprintf(stderr, "\r%ld/%ld runs\n", runs, runs);
	return 0;
}

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

static int bench_append(const char *db, int writers, long count)
{
	size_t total = (size_t)writers * (size_t)count;
	int64_t *lat = mmap(NULL, total * sizeof(int64_t) + 64 * sizeof(int64_t),
			    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int64_t *fails, t0, t1;
	int w, status, bad = 0, no_ckpt = getenv("SBX_BENCH_NO_CHECKPOINT") != NULL;

	if (lat == MAP_FAILED)
		die("append", "mmap");
	fails = lat + total;
	t0 = mono_ns();
	for (w = 0; w < writers; w++) {
		pid_t p = fork();
		if (p < 0)
			die("append", "fork");
		if (p == 0) {
			struct sbx_audit *a;
			struct sbx_record r;
			char err[512], id[SBX_ID_LEN + 1];
			long i;

			if (sbx_audit_open(db, 0, &a, err, sizeof(err)) < 0)
				die("open", err);
			for (i = 0; i < count; i++) {
				int64_t s;
				if (i % 2 == 0)
					random_id(id); /* the END has its START's id */
				base(&r, id, "bench", 1000, "default", "python", NULL,
				     (int64_t)time(NULL) * 1000000000, "print(1)\n");
				if (i % 2)
					end_of(&r, "ok");
				s = mono_ns();
				if (sbx_audit_append(a, &r, sk, origin(), NULL, err, sizeof(err)) < 0) {
					fprintf(stderr, "audit-bench: writer %d: %s\n", w, err);
					fails[w]++;
				}
				/* an END's latency includes its checkpoint (the recorder's
				 * path), unless SBX_BENCH_NO_CHECKPOINT is set */
				if (i % 2 && !no_ckpt &&
				    sbx_audit_checkpoint(a, sk, origin(), 0, 0, NULL, err, sizeof(err)) < 0) {
					fprintf(stderr, "audit-bench: writer %d: checkpoint: %s\n", w, err);
					fails[w]++;
				}
				lat[(size_t)w * (size_t)count + (size_t)i] = mono_ns() - s;
			}
			sbx_audit_close(a);
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad++;
	t1 = mono_ns();
	for (w = 0; w < writers; w++)
		bad += (int)fails[w];
	qsort(lat, total, sizeof(int64_t), cmp64);
	printf("%s writers=%d records=%zu median_ms=%.2f p99_ms=%.2f max_ms=%.2f throughput_per_s=%.0f failures=%d\n",
	       no_ckpt ? "no-checkpoint" : "checkpoint-per-END", writers, total, (double)lat[total / 2] / 1e6, (double)lat[total * 99 / 100] / 1e6,
	       (double)lat[total - 1] / 1e6, (double)total / ((double)(t1 - t0) / 1e9), bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sbx_audit *a;
	char err[512];
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: audit-bench fixture|gen|append DB KEY [ARGS]\n");
		return 2;
	}
	if (sbx_key_load_secret(argv[3], sk, err, sizeof(err)) < 0)
		die("key", err);
	if (strcmp(argv[1], "append") == 0 && argc == 6)
		return bench_append(argv[2], atoi(argv[4]), atol(argv[5]));
	if (sbx_audit_open(argv[2], 0, &a, err, sizeof(err)) < 0)
		die("open", err);
	if (strcmp(argv[1], "fixture") == 0)
		rc = fixture(a);
	else if (strcmp(argv[1], "gen") == 0 && argc == 5)
		rc = gen(a, atol(argv[4]));
	else
		die("usage", "unknown mode or wrong arguments");
	sbx_audit_close(a);
	return rc;
}
