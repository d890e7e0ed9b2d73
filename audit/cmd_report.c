/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit report: summaries of the log in the manner of aureport. The
 * numbers are SQL aggregates over the columns (report_query.c); the
 * columns are what `verify` checks against the signed blobs.
 */
#include "cli.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auditdb.h"
#include "hosts.h"
#include "keyring.h"
#include "auditwhen.h"
#include "checkpoint.h"
#include "vkey.h"

#include <inttypes.h>
#include "units.h"

#define DEFAULT_TOP 10
#define DEFAULT_FAILED 50

static void help(void)
{
	printf("usage: " PROG " report [--since WHEN] [--until WHEN] [--summary] [--no-verify]\n"
	       "         [--by user|policy|outcome|language|day|hour] [--failed] [--limit N]\n"
	       "         [--limits] [--top-code [N]] [--sessions] [--network] [--environments]\n"
	       "         [--applies]\n"
	       "         [--format text|csv|json]\n"
	       "         [--html FILE] [--hosts DIR [--keyring FILE]]\n"
	       "\n"
	       "Counts of runs from the log. A run is dated by its END record, or by\n"
	       "its START when it has no END (outcome \"incomplete\"). Without a section\n"
	       "option the summary is printed.\n"
	       "\n"
	       "  --since WHEN    runs at or after WHEN; --until WHEN: before WHEN\n"
	       "  --summary       runs, complete, incomplete, failed, distinct users,\n"
	       "                  first and last run time, and runs per outcome\n"
	       "  --by KEY        runs per user, policy, outcome, language, day or hour\n"
	       "                  (of day), days and hours in local time, with one\n"
	       "                  column per outcome; may repeat\n"
	       "                  or list keys with commas\n"
	       "  --failed        runs whose outcome is not ok, newest --limit N, oldest\n"
	       "                  first\n"
	       "  --limit N       rows of --failed, --sessions, --applies and the\n"
	       "                  --network destinations (default %d; 0: all)\n"
	       "  --limits        which limit fired how often, and for which users\n"
	       "  --top-code [N]  the N (default %d) most repeated code digests, with\n"
	       "                  runs, distinct users, user names and ok runs\n"
	       "  --sessions      retry loops (sbx run --fix): attempts per session,\n"
	       "                  whether one succeeded, and the attempt that did; the\n"
	       "                  newest --limit N sessions, oldest first; then the live\n"
	       "                  sessions (sbx session start): calls, failed calls, end\n"
	       "  --network       runs with [network] mode = allow: connections, bytes\n"
	       "                  each way, refused attempts, runs at a limit; and per\n"
	       "                  destination the runs that reached it and that were\n"
	       "                  refused it (the --limit N most frequent)\n"
	       "  --environments  runs per environment (image and digest, or host and\n"
	       "                  its package-set digest), and every code digest that\n"
	       "                  ran in more than one environment with more than one\n"
	       "                  outcome: same code, different environment, different\n"
	       "                  outcome\n"
	       "  --applies       sbx apply: each changeset applied or refused (dated by\n"
	       "                  its end record), who applied it, the run, full (all) or\n"
	       "                  subset (only), files, result, and whether the digest\n"
	       "                  applied is the one the run's END signed (matches_run:\n"
	       "                  yes, or NO and why); then the applies per result\n"
	       "  --format FMT    text (default), csv (RFC 4180; several tables are\n"
	       "                  separated by an empty line) or json (one object)\n"
	       "  --no-verify     do not verify the log first (the report's header says\n"
	       "                  so); by default text, JSON and HTML start with what\n"
	       "                  the report stands on: the log, its origin, the key\n"
	       "                  (C2SP verifier key, SHA-256), verify's result (as\n"
	       "                  sbx-audit verify without options) and the time\n"
	       "  --hosts DIR     a central store (sbx-audit import --into DIR): one report\n"
	       "                  per host archive, each verified with its host's key\n"
	       "                  from --keyring FILE; text: a heading per host, json:\n"
	       "                  {\"hosts\": [{origin, archive, report}]}, --html: an\n"
	       "                  overview of the hosts and a view of each\n"
	       "  --html FILE     write every section and a chart of runs per day as\n"
	       "                  one self-contained HTML page to FILE (mode 0600,\n"
	       "                  replaced atomically); nothing is printed\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       SBX_WHEN_HELP
	       "exit status: 0 ok, 1 FILE cannot be written, 2 usage, 3 log unreadable\n",
	       DEFAULT_FAILED, DEFAULT_TOP);
}

static int parse_by(const char *arg, unsigned *by)
{
	char *copy = out_need(strdup(arg)), *save = NULL, *w;
	int i, found;

	for (w = strtok_r(copy, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		found = 0;
		for (i = 0; i < BY_N; i++)
			if (strcmp(w, report_by_names[i]) == 0) {
				*by |= 1u << i;
				found = 1;
			}
		if (!found) {
			char *e = out_esc(w, strlen(w), 0);
			cli_err("report: --by: '%s' is not one of user, policy, outcome, language, "
				"day, hour", e);
			free(e);
			free(copy);
			return -1;
		}
	}
	free(copy);
	return 0;
}

static int parse_when(const char *opt, const char *arg, int64_t *out)
{
	char why[160];

	if (sbx_when_parse(arg, time(NULL), out, why, sizeof(why)) == 0)
		return 0;
	{
		char *e = out_esc(arg, strlen(arg), 0);
		cli_err("report: %s '%s': %s", opt, e, why);
		free(e);
	}
	return -1;
}

/* Write the page next to FILE and rename it into place: a reader never
 * sees half a report, and a failure leaves FILE as it was. */
static int write_html(const char *path, const struct report *r, const struct ropts *o)
{
	char *tmp;
	FILE *f;
	int fd, bad;

	if (strcmp(path, "-") == 0)
		return report_html(stdout, r, o) < 0 ? EXIT_FAIL : EXIT_OK;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		out_need(NULL);
	fd = mkstemp(tmp);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		cli_err("report: --html: %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return EXIT_FAIL;
	}
	bad = report_html(f, r, o) < 0;
	bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) < 0) {
		cli_err("report: --html: %s: %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		free(tmp);
		return EXIT_FAIL;
	}
	free(tmp);
	return EXIT_OK;
}

/* The origin the log names: its newest checkpoint's, else its last record's. */
static void log_origin(struct sbx_audit *a, char *out, size_t outlen)
{
	struct sbx_checkpoint cp;
	char err[SBX_ERR_LEN], **notes;
	size_t n;
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sbx_audit_checkpoint_notes(a, &notes, &n, err, sizeof(err)) == 0) {
		if (n > 0 && sbx_checkpoint_parse(notes[n - 1], strlen(notes[n - 1]), &cp, NULL, 0) == 0)
			snprintf(out, outlen, "%s", cp.origin);
		sbx_checkpoint_notes_free(notes, n);
	}
	if (out[0] == '\0' &&
	    sqlite3_prepare_v2(sbx_audit_db(a), "SELECT origin FROM records ORDER BY seq DESC LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
			snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
}

/* Which log, which key, whether it verifies (a default verify: every
 * link, leaf, column and checkpoint, the last signature), and when. */
static void provenance(const struct cli *c, struct sbx_audit *a, int check,
		       const unsigned char *host_pk, struct provenance *p)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], h[32];
	struct sbx_verify_opts vo = {0};
	struct sbx_verify_report rep;
	struct timespec ts;
	char err[SBX_ERR_LEN];
	size_t i, bad = 0;

	memset(p, 0, sizeof(*p));
	p->db = sbx_audit_path(a);
	clock_gettime(CLOCK_REALTIME, &ts);
	p->generated_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	log_origin(a, p->origin, sizeof(p->origin));
	if (host_pk != NULL) {
		memcpy(pk, host_pk, sizeof(pk));
	} else if (c == NULL) {
		snprintf(p->verify, sizeof(p->verify), "not run: the origin has no key in the keyring");
		return;
	} else if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		snprintf(p->verify, sizeof(p->verify), "not run: %s", err);
		return;
	}
	crypto_hash_sha256(h, pk, sizeof(pk));
	sodium_bin2hex(p->fingerprint, sizeof(p->fingerprint), h, sizeof(h));
	if (p->origin[0] == '\0' || vkey_format(p->origin, pk, p->vkey) < 0)
		p->vkey[0] = '\0';
	if (!check) {
		snprintf(p->verify, sizeof(p->verify), "not run (--no-verify)");
		return;
	}
	if (sbx_audit_verify_opts(a, pk, &vo, &rep, err, sizeof(err)) < 0) {
		snprintf(p->verify, sizeof(p->verify), "not run: %s", err);
		return;
	}
	for (i = 0; i < rep.n_findings; i++)
		bad += !sbx_finding_is_warning(rep.findings[i].kind);
	if (rep.n_findings == 0)
		snprintf(p->verify, sizeof(p->verify), "OK: %" PRIu64 " records (checkpoint at %" PRIu64
			 ")", rep.n_records, rep.latest_size);
	else
		snprintf(p->verify, sizeof(p->verify), "%zu finding%s (%zu tampering) in %" PRIu64
			 " records: the counts below may not be what was signed; run " PROG
			 " verify", rep.n_findings, rep.n_findings == 1 ? "" : "s", bad, rep.n_records);
	p->verified = bad == 0;
	sbx_verify_report_free(&rep);
}

static void all_sections(struct ropts *o);

static int run(const struct cli *c, struct sbx_audit *a, struct ropts *o, const char *format,
	       const char *html, int check)
{
	struct report r;
	struct provenance prov;
	int rc;

	if (html != NULL) {
		/* The page holds everything; the chart needs the per-day data. */
		all_sections(o);
	}
	if (strcmp(format, "csv") != 0 || html != NULL)
		provenance(c, a, check, NULL, &prov);
	if (report_build(sbx_audit_db(a), sbx_audit_path(a), o, &r) < 0)
		return EXIT_UNREADABLE;
	if (strcmp(format, "csv") != 0 || html != NULL)
		r.prov = &prov;
	if (html != NULL)
		rc = write_html(html, &r, o);
	else if (strcmp(format, "json") == 0)
		rc = report_json(stdout, &r, o) < 0 ? EXIT_FAIL : EXIT_OK;
	else if (strcmp(format, "csv") == 0)
		rc = report_csv(stdout, &r) < 0 ? EXIT_FAIL : EXIT_OK;
	else
		rc = report_text(stdout, &r) < 0 ? EXIT_FAIL : EXIT_OK;
	report_free(&r);
	return rc;
}

static void all_sections(struct ropts *o)
{
	o->sections |= RS_SUMMARY | RS_LIMITS | RS_TOPCODE | RS_SESSIONS | RS_NETWORK | RS_ENVIRONMENTS | RS_APPLIES |
		       RS_FAILED | RS_DAYCHART;
	o->by |= 1u << BY_USER | 1u << BY_POLICY | 1u << BY_LANGUAGE | 1u << BY_DAY;
}

/*
 * report --hosts DIR: one report per archive of a central store (hosts.h),
 * each verified with its host's key from --keyring: text sections under a
 * heading per host, JSON {"hosts": [{"origin", "archive", "report"}]}, an
 * HTML page with an overview of the hosts and a view of each.
 */
static int run_hosts(const char *dir, const char *ring, struct ropts *o, const char *format,
		     const char *html, int check)
{
	char err[SBX_ERR_LEN + 300], **origins, **paths;
	struct report *r = NULL;
	struct provenance *prov = NULL;
	struct handle {
		struct sbx_audit *log;
	} *a = NULL;
	struct keyring kr = {0};
	size_t n, i, built = 0;
	int rc = EXIT_OK;

	if (ring != NULL && keyring_load(ring, &kr, err, sizeof(err)) < 0) {
		cli_err("report: --keyring %s", err);
		return EXIT_UNREADABLE;
	}
	if (hosts_list(dir, &origins, &paths, &n, err, sizeof(err)) < 0) {
		cli_err("report: --hosts %s", err);
		keyring_free(&kr);
		return EXIT_UNREADABLE;
	}
	if (html != NULL)
		all_sections(o);
	r = out_need(calloc(n + 1, sizeof(*r)));
	prov = out_need(calloc(n + 1, sizeof(*prov)));
	a = out_need(calloc(n + 1, sizeof(*a)));
	for (i = 0; i < n; i++, built++) {
		const struct keyring_entry *e = keyring_find(&kr, origins[i]);
		if (sbx_audit_open(paths[i], 1, &a[i].log, err, sizeof(err)) < 0) {
			cli_err("report: %s", err);
			rc = EXIT_UNREADABLE;
			break;
		}
		provenance(NULL, a[i].log, check, e ? e->pk : NULL, &prov[i]);
		if (!check)
			snprintf(prov[i].verify, sizeof(prov[i].verify), "not run (--no-verify)");
		if (report_build(sbx_audit_db(a[i].log), paths[i], o, &r[i]) < 0) {
			rc = EXIT_UNREADABLE;
			break;
		}
		r[i].prov = &prov[i];
	}
	if (rc == EXIT_OK) {
		if (html != NULL) {
			FILE *f = strcmp(html, "-") == 0 ? stdout : fopen(html, "we");
			if (f == NULL || report_html_hosts(f, r, (const char *const *)origins, n, o) < 0 ||
			    (f != stdout && fclose(f) != 0)) {
				cli_err("report: --html: %s: %s", html, strerror(errno ? errno : EIO));
				rc = EXIT_FAIL;
			}
		} else if (strcmp(format, "json") == 0) {
			json_t *doc = out_need(json_object()), *arr = out_need(json_array());
			for (i = 0; i < n; i++)
				json_array_append_new(arr, out_need(json_pack("{s:s,s:s,s:o}", "origin", origins[i],
					"archive", paths[i], "report", report_json_doc(&r[i], o))));
			json_object_set_new(doc, "hosts", arr);
			rc = out_json(doc) < 0 ? EXIT_FAIL : EXIT_OK;
		} else if (strcmp(format, "csv") == 0) {
			cli_err("report: --hosts: --format csv has one table per host: use json");
			rc = EXIT_USAGE;
		} else {
			printf("hosts: %zu (%s)\n", n, dir);
			for (i = 0; i < n && rc == EXIT_OK; i++) {
				printf("\n=== host ");
				out_str(stdout, origins[i]);
				printf(" ===\n");
				rc = report_text(stdout, &r[i]) < 0 ? EXIT_FAIL : EXIT_OK;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (i < built || r[i].t != NULL)
			report_free(&r[i]);
		sbx_audit_close(a[i].log);
	}
	free(r);
	free(prov);
	free(a);
	hosts_free(origins, paths, n);
	keyring_free(&kr);
	return rc;
}

/* --top-code takes an optional N, also as the next word ("--top-code 5"). */
static int top_arg(int argc, char **argv, int64_t *n)
{
	uint64_t v;
	const char *s = optarg;

	if (s == NULL && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
		s = argv[optind++];
	if (s == NULL) {
		*n = DEFAULT_TOP;
		return 0;
	}
	if (sbx_parse_uint(s, 1000000, &v) < 0 || v == 0) {
		char *e = out_esc(s, strlen(s), 0);
		cli_err("report: --top-code: '%s' is not a number from 1 to 1000000", e);
		free(e);
		return -1;
	}
	*n = (int64_t)v;
	return 0;
}

int cmd_report(struct cli *c, int argc, char **argv)
{
	enum { O_SINCE = OPT_FIRST_CMD, O_UNTIL, O_SUMMARY, O_BY, O_FAILED, O_LIMIT, O_LIMITS,
	       O_TOP, O_SESSIONS, O_NETWORK, O_ENVIRONMENTS, O_APPLIES, O_FORMAT, O_HTML, O_NOVERIFY, O_HOSTS,
	       O_KEYRING };
	static const struct option opts[] = {
		{"since", required_argument, NULL, O_SINCE},
		{"until", required_argument, NULL, O_UNTIL},
		{"summary", no_argument, NULL, O_SUMMARY},
		{"by", required_argument, NULL, O_BY},
		{"failed", no_argument, NULL, O_FAILED},
		{"limit", required_argument, NULL, O_LIMIT},
		{"limits", no_argument, NULL, O_LIMITS},
		{"top-code", optional_argument, NULL, O_TOP},
		{"sessions", no_argument, NULL, O_SESSIONS},
		{"network", no_argument, NULL, O_NETWORK},
		{"environments", no_argument, NULL, O_ENVIRONMENTS},
		{"applies", no_argument, NULL, O_APPLIES},
		{"format", required_argument, NULL, O_FORMAT},
		{"html", required_argument, NULL, O_HTML},
		{"no-verify", no_argument, NULL, O_NOVERIFY},
		{"hosts", required_argument, NULL, O_HOSTS},
		{"keyring", required_argument, NULL, O_KEYRING},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct ropts o = {.since_ns = 0, .until_ns = INT64_MAX, .top_n = DEFAULT_TOP,
			  .failed_max = DEFAULT_FAILED};
	const char *format = "text", *html = NULL, *hosts = NULL, *ring = NULL;
	struct sbx_audit *a;
	uint64_t v;
	int opt, rc, check = 1;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_SINCE:
			if (parse_when("--since", optarg, &o.since_ns) < 0)
				return EXIT_USAGE;
			break;
		case O_UNTIL:
			if (parse_when("--until", optarg, &o.until_ns) < 0)
				return EXIT_USAGE;
			break;
		case O_SUMMARY:
			o.sections |= RS_SUMMARY;
			break;
		case O_BY:
			if (parse_by(optarg, &o.by) < 0)
				return EXIT_USAGE;
			o.sections |= RS_BY;
			break;
		case O_FAILED:
			o.sections |= RS_FAILED;
			break;
		case O_LIMIT:
			if (sbx_parse_uint(optarg, INT64_MAX, &v) < 0) {
				char *e = out_esc(optarg, strlen(optarg), 0);
				cli_err("report: --limit: '%s' is not a number", e);
				free(e);
				return EXIT_USAGE;
			}
			o.failed_max = v == 0 ? -1 : (int64_t)v;
			break;
		case O_LIMITS:
			o.sections |= RS_LIMITS;
			break;
		case O_TOP:
			if (top_arg(argc, argv, &o.top_n) < 0)
				return EXIT_USAGE;
			o.sections |= RS_TOPCODE;
			break;
		case O_SESSIONS:
			o.sections |= RS_SESSIONS;
			break;
		case O_NETWORK:
			o.sections |= RS_NETWORK;
			break;
		case O_ENVIRONMENTS:
			o.sections |= RS_ENVIRONMENTS;
			break;
		case O_APPLIES:
			o.sections |= RS_APPLIES;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "text") != 0 && strcmp(optarg, "csv") != 0 &&
			    strcmp(optarg, "json") != 0) {
				char *e = out_esc(optarg, strlen(optarg), 0);
				cli_err("report: --format: '%s' is not text, csv or json", e);
				free(e);
				return EXIT_USAGE;
			}
			format = optarg;
			break;
		case O_NOVERIFY:
			check = 0;
			break;
		case O_HTML:
			html = optarg;
			break;
		case O_HOSTS:
			hosts = optarg;
			break;
		case O_KEYRING:
			ring = optarg;
			break;
		default:
			rc = cli_common_opt(c, "report", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("report", argc, argv)) != EXIT_OK)
		return rc;
	if (o.since_ns >= o.until_ns) {
		cli_err("report: --since must be before --until");
		return EXIT_USAGE;
	}
	if (o.sections == 0)
		o.sections = RS_SUMMARY;
	if (ring != NULL && hosts == NULL) {
		cli_err("report: --keyring goes with --hosts DIR");
		return EXIT_USAGE;
	}
	if (hosts != NULL)
		return run_hosts(hosts, ring, &o, format, html, check);
	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	rc = run(c, a, &o, format, html, check);
	sbx_audit_close(a);
	return rc;
}
