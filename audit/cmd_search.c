/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit search: the runs that match every filter given, in the manner
 * of ausearch. Reads the SQL columns (indexed) like list; verify is what
 * checks them against the signed blobs.
 */
#include "cli.h"
#include "hosts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auditdb.h"
#include "auditwhen.h"
#include "hostport.h"
#include "outcome.h"
#include "runs.h"
#include "policy.h"
#include "units.h"

static void help(void)
{
	printf("usage: " PROG " search [FILTER...] [--limit N] [--format table|csv|json|jsonl]\n"
	       "\n"
	       "The runs (START joined with END) that match every filter given, oldest\n"
	       "first. Values match exactly; times are the run's START time.\n"
	       "\n"
	       "  --user NAME         run by this user name\n"
	       "  --uid N             run by this numeric uid\n"
	       "  --policy NAME       under this policy\n"
	       "  --language NAME     in this language\n"
	       "  --outcome NAME      one of: %s\n"
	       "                      (incomplete: START without END)\n"
	       "  --failed            finished with an outcome other than ok\n"
	       "  --applied           a --workspace run whose changeset sbx apply applied (wholly or in part)\n"
	       "  --success           finished with outcome ok\n"
	       "  --since WHEN        started at or after WHEN\n"
	       "  --until WHEN        started before WHEN\n"
	       "  --session ID        in this session\n"
	       "  --code-sha256 HEX   ran the code with this SHA-256 (64 hex digits)\n"
	       "  --code-contains TEXT  ran code whose text contains TEXT (bytes, case-sensitive)\n"
	       "  --dest HOST[:PORT]  reached or was refused HOST (a name as the policy\n"
	       "                      writes it, or an address; [ADDR] for IPv6), on\n"
	       "                      PORT or on any port ([network] mode = allow)\n"
	       "  --image NAME        ran with this image (sbx-image(8)), or \"host\" for the host's /usr\n"
	       "  --image-digest D    ran in the environment with this digest (sha256:HEX or HEX):\n"
	       "                      an image's content digest, or a host's package-set digest\n"
	       "  --limit N           only the N newest matching runs (default 0: all)\n"
	       "  --format FMT        table (default), csv, json (one array), jsonl (one object a line)\n"
	       "  --hosts DIR         every host archive of a central store (the directory of\n"
	       "                      sbx-audit import), in order of origin, as one output; --limit\n"
	       "                      applies per host; the host column names the host\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       SBX_WHEN_HELP
	       "exit status: 0 one or more runs, 1 none, 2 usage, 3 log unreadable\n",
	       sbx_outcome_names(true));
}

static int bad(const char *opt, const char *val, const char *why)
{
	char *e = out_esc(val, strlen(val), 0);

	cli_err("search: %s '%s': %s", opt, e, why);
	free(e);
	return EXIT_USAGE;
}

static int set_when(const char *opt, const char *val, char *iso, int *has)
{
	char why[160];
	int64_t ns;

	if (sbx_when_parse(val, time(NULL), &ns, why, sizeof(why)) < 0)
		return bad(opt, val, why);
	/* The time column holds milliseconds; round down to compare. */
	ns -= ((ns % 1000000) + 1000000) % 1000000;
	if (sbx_iso_time(ns, iso, 48) < 0)
		return bad(opt, val, "out of range");
	*has = 1;
	return -1;
}

/*
 * --dest HOST[:PORT] into a LIKE pattern for the destinations of the END
 * record ("host:port" words, IPv6 bracketed: recorder/egress_record.c):
 * the exact word, or "host:%" for any port. Host names compare in lower
 * case, as policies store them.
 */
static int set_dest(const char *val, char *pat, size_t len)
{
	char host[SBX_HOST_MAX + 1], word[SBX_HOSTPORT_LEN + 1], probe[SBX_HOSTPORT_LEN + 8];
	const char *why;
	uint16_t port;
	size_t j = 0;
	int any = 0;

	if (sbx_hostport_parse(val, host, &port, &why) == 0) {
		sbx_hostport_format(host, port, word, sizeof(word));
	} else {
		/* no port: HOST, [IPV6] or a bare IPv6 address */
		size_t n = strlen(val);
		if (n > 2 && val[0] == '[' && val[n - 1] == ']')
			snprintf(probe, sizeof(probe), "%.*s:1", (int)n, val);
		else if (strchr(val, ':') != NULL)
			snprintf(probe, sizeof(probe), "[%.*s]:1", (int)(n < 260 ? n : 260), val);
		else
			snprintf(probe, sizeof(probe), "%.*s:1", (int)(n < 260 ? n : 260), val);
		if (n > SBX_HOSTPORT_LEN || sbx_hostport_parse(probe, host, &port, &why) < 0)
			return bad("--dest", val, "not HOST, HOST:PORT, [IPV6] or [IPV6]:PORT");
		sbx_hostport_format(host, 1, word, sizeof(word));
		word[strlen(word) - 1] = '\0'; /* "host:" */
		any = 1;
	}
	for (size_t i = 0; word[i] && j + 3 < len; i++) {
		if (word[i] == '%' || word[i] == '_' || word[i] == '\\')
			pat[j++] = '\\';
		pat[j++] = word[i];
	}
	if (any)
		pat[j++] = '%';
	pat[j] = '\0';
	return -1;
}

static int set_hex(const char *opt, const char *val, char out[65])
{
	size_t i;

	if (strlen(val) != 64)
		return bad(opt, val, "not 64 hex digits");
	for (i = 0; i < 64; i++) {
		if (!isxdigit((unsigned char)val[i]))
			return bad(opt, val, "not 64 hex digits");
		out[i] = (char)tolower((unsigned char)val[i]);
	}
	out[64] = '\0';
	return -1;
}

static int nonempty(const char *opt, const char *val)
{
	return val[0] ? -1 : bad(opt, val, "empty");
}

enum {
	O_USER = OPT_FIRST_CMD, O_UID, O_POLICY, O_LANG, O_OUTCOME, O_FAILED,
	O_SUCCESS, O_SINCE, O_UNTIL, O_SESSION, O_CODE_SHA, O_CODE_CONTAINS, O_DEST,
	O_IMAGE, O_IMAGE_DIGEST, O_LIMIT, O_FORMAT, O_HOSTS, O_APPLIED,
};

/* search --hosts DIR: the same query on every archive of a central store
 * (hosts.h), in order of origin; one output (one header, one JSON array).
 * The host column says whose run it is. */
static int search_hosts(const char *dir, const struct run_filter *f, enum run_format fmt, uint64_t *total)
{
	char err[SBX_ERR_LEN + 300], **origins, **paths;
	json_t *arr = fmt == FMT_JSON ? out_need(json_array()) : NULL;
	size_t n, i;
	int rc = 0;

	*total = 0;
	if (hosts_list(dir, &origins, &paths, &n, err, sizeof(err)) < 0) {
		cli_err("search: --hosts %s", err);
		json_decref(arr);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		struct sbx_audit *a;
		sqlite3_stmt *st;
		uint64_t k = 0;
		int64_t last;
		if (sbx_audit_open(paths[i], 1, &a, err, sizeof(err)) < 0) {
			cli_err("search: %s", err);
			rc = -1;
			break;
		}
		rc = runs_prepare(sbx_audit_db(a), paths[i], f, &st);
		if (rc == 0) {
			rc = runs_write_part(sbx_audit_db(a), paths[i], st, fmt, &k, &last, arr, i == 0);
			sqlite3_finalize(st);
		}
		sbx_audit_close(a);
		*total += k;
	}
	if (n == 0 && fmt != FMT_JSON) /* the header alone, as for an empty log */
		cli_err("search: --hosts %s: no host archives (DIR/HOST/audit.db)", dir);
	if (arr != NULL) {
		if (rc == 0 && out_json(arr) < 0)
			rc = -1;
		else if (rc != 0)
			json_decref(arr);
	}
	hosts_free(origins, paths, n);
	return rc;
}

int cmd_search(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"user", required_argument, NULL, O_USER},
		{"uid", required_argument, NULL, O_UID},
		{"policy", required_argument, NULL, O_POLICY},
		{"language", required_argument, NULL, O_LANG},
		{"outcome", required_argument, NULL, O_OUTCOME},
		{"failed", no_argument, NULL, O_FAILED},
		{"success", no_argument, NULL, O_SUCCESS},
		{"since", required_argument, NULL, O_SINCE},
		{"until", required_argument, NULL, O_UNTIL},
		{"session", required_argument, NULL, O_SESSION},
		{"code-sha256", required_argument, NULL, O_CODE_SHA},
		{"code-contains", required_argument, NULL, O_CODE_CONTAINS},
		{"dest", required_argument, NULL, O_DEST},
		{"applied", no_argument, NULL, O_APPLIED},
		{"image", required_argument, NULL, O_IMAGE},
		{"image-digest", required_argument, NULL, O_IMAGE_DIGEST},
		{"limit", required_argument, NULL, O_LIMIT},
		{"format", required_argument, NULL, O_FORMAT},
		{"hosts", required_argument, NULL, O_HOSTS},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct run_filter f = {.after_end_seq = -1};
	enum run_format fmt = FMT_TABLE;
	const char *hosts = NULL;
	uint64_t v, n;
	int64_t last;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		rc = -1;
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_USER:
			rc = nonempty("--user", f.user = optarg);
			break;
		case O_UID:
			if (sbx_parse_uint(optarg, UINT32_MAX, &v) < 0)
				return bad("--uid", optarg, "not a number from 0 to 4294967295");
			f.has_uid = 1;
			f.uid = (uint32_t)v;
			break;
		case O_POLICY:
			rc = nonempty("--policy", f.policy = optarg);
			break;
		case O_LANG:
			rc = nonempty("--language", f.language = optarg);
			break;
		case O_OUTCOME:
			if (!runs_outcome_ok(optarg)) {
				char why[256];
				snprintf(why, sizeof(why), "not an outcome (%s)", sbx_outcome_names(true));
				return bad("--outcome", optarg, why);
			}
			f.outcome = optarg;
			break;
		case O_FAILED:
			f.failed = 1;
			break;
		case O_APPLIED:
			f.applied = 1;
			break;
		case O_SUCCESS:
			f.success = 1;
			break;
		case O_SINCE:
			rc = set_when("--since", optarg, f.since, &f.has_since);
			break;
		case O_UNTIL:
			rc = set_when("--until", optarg, f.until, &f.has_until);
			break;
		case O_SESSION:
			rc = nonempty("--session", f.session = optarg);
			break;
		case O_CODE_SHA:
			rc = set_hex("--code-sha256", optarg, f.code_sha256);
			break;
		case O_IMAGE:
			if (!sbx_valid_name(optarg))
				return bad("--image", optarg, "not an image name ([a-z0-9][a-z0-9_-]*) or host");
			f.image = optarg;
			break;
		case O_IMAGE_DIGEST:
			/* as sbx-image ls and the result print it, or bare */
			rc = set_hex("--image-digest", strncmp(optarg, "sha256:", 7) == 0 ? optarg + 7 : optarg,
				     f.image_digest);
			break;
		case O_CODE_CONTAINS:
			rc = nonempty("--code-contains", f.code_contains = optarg);
			break;
		case O_DEST:
			rc = set_dest(optarg, f.dest, sizeof(f.dest));
			break;
		case O_LIMIT:
			if (sbx_parse_uint(optarg, INT64_MAX, &f.limit) < 0)
				return bad("--limit", optarg, "not a number");
			break;
		case O_FORMAT:
			if (runs_parse_format(optarg, &fmt) < 0)
				return bad("--format", optarg, "not table, csv, json or jsonl");
			break;
		case O_HOSTS:
			hosts = optarg;
			break;
		default:
			rc = cli_common_opt(c, "search", opt, argv);
		}
		if (rc >= 0)
			return rc;
	}
	if ((rc = cli_extra_args("search", argc, argv)) != EXIT_OK)
		return rc;
	if (f.failed && f.success) {
		cli_err("search: --failed and --success exclude each other");
		return EXIT_USAGE;
	}
	if (hosts != NULL) {
		if (search_hosts(hosts, &f, fmt, &n) < 0)
			return EXIT_UNREADABLE;
	} else if (runs_print(c, &f, fmt, &n, &last) < 0) {
		return EXIT_UNREADABLE;
	}
	return n > 0 ? EXIT_OK : EXIT_FAIL;
}
