/* SPDX-License-Identifier: ISC */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/string.h>

#include "fail.h"
#include "name.h"
#include "policy.h"
#include "proto.h"
#include "units.h"

/* The helper's own bounds (helper/args.c); checking them here gives the
 * caller a message naming the option instead of a refused run. */
/* The bounds are the helper's argv bounds (proto.h SBX_ARG_*), checked here
 * first so the caller hears about them in its own units. */

void cli_usage(FILE *out)
{
	fputs("Usage: sbx run [OPTIONS] (-c CODE | FILE | -)\n"
	      "       sbx policies [--json]\n"
	      "       sbx session ls [--json] | rm NAME | start NAME | stop NAME | restart NAME\n"
	      "       sbx changes ID [--json]\n"
	      "       sbx apply ID [--only PATH]... [--json]\n"
	      "       sbx mcp [--keep-artifacts SIZE] [--max-text SIZE] [--workspace DIR]\n"
	      "       sbx doctor [--json]\n"
	      "       sbx --help | --version\n"
	      "\n"
	      "Run untrusted code (typically model-written) in a sandbox: no network,\n"
	      "no capabilities, a private filesystem, and the CPU, memory, process and\n"
	      "time limits of an administrator's policy. Every run is recorded in a\n"
	      "signed audit log.\n"
	      "\n"
	      "Commands:\n"
	      "  run        run code once; see `sbx run --help`\n"
	      "  policies   list the policies you may use, with their limits\n"
	      "  session    sessions: persistent /work directories, and live ones that\n"
	      "             keep an interpreter between calls; see `sbx session --help`\n"
	      "  changes    what a --workspace run changed: its changeset, with diffs\n"
	      "  apply      apply a --workspace run's changeset to its directory\n"
	      "  mcp        serve the Model Context Protocol on stdin/stdout (tool\n"
	      "             execute_code); see `sbx mcp --help`\n"
	      "  doctor     check that this host and install can run sandboxes, and\n"
	      "             say how to fix what is wrong; see `sbx doctor --help`\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  --version      show the version\n"
	      "\n"
	      "Exit status: that of the program; 124 time or CPU limit; 128+N killed by\n"
	      "signal N (137: memory limit); sbx itself: 2 usage, 77 refused (group,\n"
	      "policy), 74 audit log, 125 set-up; 126/127 as env(1). sbx(1), ERROR CODES.\n",
	      out);
}

void cli_version(void)
{
	printf("sbx %s\n", SBX_VERSION);
	exit(fflush(stdout) == 0 ? 0 : SBX_EXIT_FAILURE);
}

void cli_std_opts(int argc, char **argv, void (*usage)(FILE *), const char *const *with_value)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		bool value_next = false;

		for (size_t k = 0; with_value != NULL && with_value[k] != NULL; k++)
			value_next = value_next || strcmp(argv[i], with_value[k]) == 0;
		if (value_next) {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(argv[i], "--version") == 0)
			cli_version();
	}
}

void cli_usage_mcp(FILE *out)
{
	fputs("Usage: sbx mcp [--keep-artifacts SIZE] [--max-text SIZE] [--workspace DIR]\n"
	      "\n"
	      "Serve the Model Context Protocol (revisions 2024-11-05, 2025-03-26,\n"
	      "2025-06-18 and 2025-11-25: the client's, else the newest) on\n"
	      "standard input and output: JSON-RPC 2.0, one message per line; log lines\n"
	      "go to standard error. For MCP clients that start a server as a command,\n"
	      "such as agent frameworks and desktop assistants.\n"
	      "\n"
	      "One tool, execute_code, with arguments:\n"
	      "  code      the program text (required, at most 4 MiB)\n"
	      "  language  as for --lang; default python\n"
	      "  policy    as for --policy\n"
	      "  timeout   wall-clock limit in seconds, a number (2.5 = 2500 ms)\n"
	      "  files     [{name, content, encoding?}], at most 32: put read-only under\n"
	      "            /in/NAME as for --input; encoding \"utf-8\" (default) or \"base64\"\n"
	      "  session   as for --session: a directory at /work kept between calls\n"
	      "Each call runs as `sbx run --jsonl`: at most 4 at a time, up to 64 more\n"
	      "wait, further calls are refused.\n"
	      "The result has the result JSON of `sbx run --json` as structuredContent;\n"
	      "content holds the error (its traceback first), stdout, stderr, a\n"
	      "summary, PNG and JPEG artifacts as images (16 MiB per call) and other\n"
	      "artifacts as resource links, sbx://run/ID/out/NAME, that resources/read\n"
	      "returns while the server runs. Any outcome but ok is a tool error (isError). With\n"
	      "a progressToken, progress notifications come every second and on output.\n"
	      "\n"
	      "Options:\n"
	      "  --keep-artifacts SIZE  bytes of linked artifacts kept for resources/read\n"
	      "                 (each file counts at least 4 KiB; files over 32 MiB are\n"
	      "                 not kept); earlier calls' files are dropped first\n"
	      "                 (default 256M; 0 keeps none)\n"
	      "  --max-text SIZE  bytes of stdout and of stderr in a result's text and\n"
	      "                 structuredContent: past it the first and last part and\n"
	      "                 a link to the whole as a resource (default 32K)\n"
	      "  --workspace DIR  every execute_code call without a session sees DIR\n"
	      "                 at /work copy-on-write (as sbx run --workspace): the\n"
	      "                 result carries its changeset (entries and diff, within\n"
	      "                 --max-text), and the tool apply_changes applies one of\n"
	      "                 this server's changesets to DIR (recorded; put it behind\n"
	      "                 the client's human approval)\n"
	      "  -h, --help     show this help\n"
	      "\n"
	      "Ends when standard input ends and every call is answered (exit 0), or on\n"
	      "SIGTERM, SIGINT or SIGHUP (runs are stopped). Exit status 2 for a usage\n"
	      "error, 77 when the caller may not run the helper (not in group sbx,\n"
	      "checked at start-up), 125 when standard input or output fails.\n",
	      out);
}

void cli_usage_run(FILE *out)
{
	fputs("Usage: sbx run [OPTIONS] (-c CODE | FILE | -)\n"
	      "\n"
	      "Run CODE, the contents of FILE, or standard input (-) in the sandbox.\n"
	      "Output is streamed as the program writes it; files it leaves in /out are\n"
	      "returned as artifacts. With -c or FILE, a piped or redirected standard\n"
	      "input is read to its end and is the program's (at most input_size).\n"
	      "\n"
	      "Code:\n"
	      "  -c, --code CODE     the code itself (at most 4 MiB, like FILE and -)\n"
	      "  FILE                a file to read the code from\n"
	      "  -                   read the code from standard input\n"
	      "\n"
	      "Options:\n"
	      "  --lang LANG         language as configured in sbx.conf (python, sh, ...);\n"
	      "                      default sh for a FILE ending in .sh, else python\n"
	      "  --policy NAME       policy to run under; default: the configured default.\n"
	      "                      Limits below can only tighten the policy's; a value\n"
	      "                      above it is refused with the policy's limit\n"
	      "  --timeout DURATION  wall-clock limit: a number with ms, s, m or h\n"
	      "                      (2s, 500ms, 1.5m; a bare number is seconds)\n"
	      "  --memory SIZE       memory limit: bytes with K, M, G or T (powers of 1024;\n"
	      "                      256M, 1G), at least 1M; no swap\n"
	      "  --pids N            limit on processes and threads, 1 to 4194304\n"
	      "  --name NAME         file name of the code under /code (what tracebacks\n"
	      "                      show): [A-Za-z0-9._-], 1-64 bytes, not starting with\n"
	      "                      '.'; default FILE's name with other characters\n"
	      "                      replaced by '_', or main.<ext> for -c and -\n"
	      "  --artifacts DIR     save files the program left in /out into DIR (created\n"
	      "                      with mode 0755 if missing; DIR itself must not be a\n"
	      "                      symbolic link). A file is written as NAME.tmp-XXXXXXXX\n"
	      "                      and renamed over NAME; symbolic links in DIR are\n"
	      "                      replaced, never followed\n"
	      "  --allow HOST:PORT   reach only this service of the policy's [network]\n"
	      "                      allow list (repeatable; each must be in the list,\n"
	      "                      written as there: db.internal:5432, [2001:db8::1]:443)\n"
	      "  --input PATH        copy the file PATH (read as you) read-only into the\n"
	      "                      sandbox as /in/BASENAME; repeatable, at most 32; names\n"
	      "                      must be [A-Za-z0-9._-], not starting with '.', and\n"
	      "                      differ; all together at most the policy's input_size\n"
	      "  --session NAME      mount the session directory NAME read-write at /work\n"
	      "  --workspace DIR     DIR at /work, copy-on-write: its changes become a changeset\n"
	      "                      (sbx changes ID, sbx apply ID); DIR itself is not changed\n"
	      "                      (the program starts there); it persists between runs\n"
	      "                      with the same NAME, in $XDG_DATA_HOME/sbx/sessions\n"
	      "                      (default ~/.local/share/sbx/sessions), created 0700.\n"
	      "                      NAME: [A-Za-z0-9._-], 1-64, not starting with '.'.\n"
	      "                      When NAME is a live session (sbx session start), the\n"
	      "                      code runs in its interpreter instead (state kept).\n"
	      "                      Without it there is no /work and nothing persists\n"
	      "  --dry-run           check everything a run checks, then print the\n"
	      "                      effective limits, mounts, namespaces and seccomp\n"
	      "                      profile instead of running (with --json: one JSON\n"
	      "                      object); not recorded in the audit log\n"
	      "  --json              print one JSON result on stdout instead of streaming\n"
	      "                      the output: outcome, error {type, message, line,\n"
	      "                      traceback} (null when ok), exit_code, signal,\n"
	      "                      stdout, stderr, traceback, artifacts (\"path\" when\n"
	      "                      saved), limits, resource use, audit id. If sbx fails\n"
	      "                      it prints {\"outcome\": \"sandbox_error\", \"error\": ...}\n"
	      "  --jsonl             stream one JSON object per line on stdout as things\n"
	      "                      happen: {\"event\":\"stdout\"|\"stderr\",\"data\":TEXT},\n"
	      "                      with --fix {\"event\":\"attempt\",\"attempt\":N,\n"
	      "                      \"result\":R} and {\"event\":\"fix\",...}, and last\n"
	      "                      {\"event\":\"result\",\"result\":R} (R as for --json,\n"
	      "                      also when sbx fails)\n"
	      "  -h, --help          show this help\n"
	      "  --version           show the version\n"
	      "\n"
	      "Retry loop (see sbx(1), FIXER PROTOCOL):\n"
	      "  --fix CMD           after a failed attempt, run CMD with /bin/sh -c, as\n"
	      "                      you and outside the sandbox; it reads one JSON\n"
	      "                      document (attempt, code, result, traceback) on stdin\n"
	      "                      and writes the corrected code on stdout (raw, or JSON\n"
	      "                      {\"code\": ...}); the code is run again. Stops at\n"
	      "                      success, at the attempt cap, at the budget, when CMD\n"
	      "                      fails or times out, or when it returns code already\n"
	      "                      tried. Exit status: that of the last attempt\n"
	      "  --max-attempts N    attempts at most, 1 to 10, never above the policy's\n"
	      "                      max_attempts; default the policy's\n"
	      "  --budget DURATION   wall-clock time for the whole loop, attempts and fixer\n"
	      "                      runs together (ms, s, m, h); each attempt's time limit\n"
	      "                      is cut to what is left; default none\n"
	      "  --fix-timeout DURATION\n"
	      "                      time one run of CMD may take; default 60s\n"
	      "\n"
	      "Ctrl-C (SIGINT) is passed to the program; SIGTERM and SIGHUP ask it to\n"
	      "terminate (SIGTERM); a third Ctrl-C kills the sandbox.\n"
	      "\n"
	      "Exit status: that of the program; 124 time or CPU limit; 128+N killed by\n"
	      "signal N (137: memory limit); sbx itself: 2 usage, 77 refused (group,\n"
	      "policy), 74 audit log, 125 set-up (with --json: error.code, sbx(1) ERROR\n"
	      "CODES); 126/127 as env(1).\n"
	      "\n"
	      "Examples:\n"
	      "  sbx run -c 'print(6*7)'\n"
	      "  sbx run --timeout 10s --memory 256M --artifacts out analysis.py\n"
	      "  echo 'echo hi' | sbx run --lang sh --json -\n"
	      "  sbx run --fix ./my-fixer --max-attempts 3 --budget 2m --json analysis.py\n"
	      "  sbx run --input data.csv --session s1 -c 'print(open(\"/in/data.csv\").read())'\n"
	      "  sbx run --dry-run --timeout 5s -c pass\n",
	      out);
}

void cli_usage_session(FILE *out)
{
	fputs("Usage: sbx session ls [--json]\n"
	      "       sbx session rm NAME\n"
	      "       sbx session start NAME [--policy P] [--idle DURATION] [--lifetime DURATION] [--json]\n"
	      "       sbx session stop|restart NAME [--json]\n"
	      "\n"
	      "Sessions are directories that `sbx run --session NAME` mounts read-write\n"
	      "at /work, kept between runs in $XDG_DATA_HOME/sbx/sessions (default\n"
	      "~/.local/share/sbx/sessions), on your own disk and quota. A live session\n"
	      "(session start) also keeps one Python interpreter between the calls of\n"
	      "`sbx run --session NAME`, each call audited (sbx(1) Live sessions).\n"
	      "\n"
	      "Commands:\n"
	      "  ls          list sessions: name, size in bytes (regular files), last use,\n"
	      "              and whether a running `sbx run --session` holds it (in use),\n"
	      "              or a live session's calls and idle time, or how it ended\n"
	      "  rm NAME     remove session NAME and everything in it, never following a\n"
	      "              symbolic link; refused (exit 75) while NAME is in use\n"
	      "  start NAME  start a live session; prints its id (the audit log's key)\n"
	      "              --idle, --lifetime: stop it after that long without a call, or\n"
	      "              that long in all (at most the policy's live_idle, live_lifetime)\n"
	      "  stop NAME   stop the live session NAME (recorded; /work stays)\n"
	      "  restart NAME  a fresh interpreter under the same name\n"
	      "\n"
	      "Options:\n"
	      "  --json      ls: print a JSON array of {name, size_bytes, last_used, in_use}\n"
	      "  -h, --help  show this help\n",
	      out);
}

void cli_usage_policies(FILE *out)
{
	fputs("Usage: sbx policies [--json]\n"
	      "\n"
	      "List the policies you may use (as sbx-helper decides: policy users and\n"
	      "groups, and membership of group sbx) with their limits. The default\n"
	      "policy is marked with '*'. Policies that you cannot read are listed as\n"
	      "unreadable.\n"
	      "\n"
	      "Options:\n"
	      "  --json      print a JSON array, one object per policy\n"
	      "  -h, --help  show this help\n",
	      out);
}

enum {
	OPT_LANG = 256,
	OPT_POLICY,
	OPT_TIMEOUT,
	OPT_MEMORY,
	OPT_PIDS,
	OPT_JSON,
	OPT_ARTIFACTS,
	OPT_NAME,
	OPT_FIX,
	OPT_MAX_ATTEMPTS,
	OPT_BUDGET,
	OPT_FIX_TIMEOUT,
	OPT_JSONL,
	OPT_INPUT,
	OPT_SESSION,
	OPT_DRY_RUN,
	OPT_VERSION,
	OPT_ALLOW,
	OPT_WORKSPACE,
};

static const struct option long_opts[] = {
	{"code", required_argument, NULL, 'c'},
	{"lang", required_argument, NULL, OPT_LANG},
	{"policy", required_argument, NULL, OPT_POLICY},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"pids", required_argument, NULL, OPT_PIDS},
	{"json", no_argument, NULL, OPT_JSON},
	{"artifacts", required_argument, NULL, OPT_ARTIFACTS},
	{"name", required_argument, NULL, OPT_NAME},
	{"fix", required_argument, NULL, OPT_FIX},
	{"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"fix-timeout", required_argument, NULL, OPT_FIX_TIMEOUT},
	{"jsonl", no_argument, NULL, OPT_JSONL},
	{"input", required_argument, NULL, OPT_INPUT},
	{"session", required_argument, NULL, OPT_SESSION},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"allow", required_argument, NULL, OPT_ALLOW},
	{"workspace", required_argument, NULL, OPT_WORKSPACE},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

static const char *opt_name(int c)
{
	const struct option *o;

	for (o = long_opts; o->name != NULL; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The JSON error object must be on stdout even for a usage error that
 * comes before --json on the command line, so look for it first. */
static void prescan_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--jsonl") == 0)
			cli_json_errors = true;
		if (strcmp(argv[i], "--jsonl") == 0)
			cli_jsonl_errors = true;
	}
}

static void parse_loop_duration(const char *opt, const char *v, uint64_t *ms)
{
	if (sbx_parse_duration_ms(v, ms) < 0)
		cli_die_usage(opt, "'%s' is not a duration (examples: 2s, 500ms)", v);
	if (*ms == 0)
		cli_die_usage(opt, "'%s' is not more than 0 ms", v);
	if (*ms > SBX_ARG_TIMEOUT_MAX)
		cli_die_usage(opt, "'%s' is too long", v);
}

static void parse_value(int c, const char *v, struct run_opts *o)
{
	switch (c) {
	case OPT_LANG:
		if (!sbx_valid_name(v))
			cli_die_usage("--lang", "'%s' is not a language name ([a-z0-9][a-z0-9_-]{0,63})", v);
		o->lang = v;
		break;
	case OPT_POLICY:
		if (!sbx_valid_name(v))
			cli_die_usage("--policy", "'%s' is not a policy name ([a-z0-9][a-z0-9_-]{0,63})", v);
		o->policy = v;
		break;
	case OPT_TIMEOUT:
		if (sbx_parse_duration_ms(v, &o->timeout_ms) < 0)
			cli_die_usage("--timeout", "'%s' is not a duration (examples: 2s, 500ms)", v);
		if (o->timeout_ms == 0)
			cli_die_usage("--timeout", "'%s' is not more than 0 ms", v);
		if (o->timeout_ms > SBX_ARG_TIMEOUT_MAX)
			cli_die_usage("--timeout", "'%s' is too long", v);
		break;
	case OPT_MEMORY:
		if (sbx_parse_size(v, &o->memory_bytes) < 0)
			cli_die_usage("--memory", "'%s' is not a size (examples: 256M, 1G)", v);
		if (o->memory_bytes < SBX_ARG_MEMORY_MIN)
			cli_die_usage("--memory", "'%s' is below the minimum of 1M", v);
		if (o->memory_bytes > SBX_ARG_MEMORY_MAX)
			cli_die_usage("--memory", "'%s' is too large", v);
		break;
	case OPT_PIDS:
		if (sbx_parse_uint(v, SBX_ARG_PIDS_MAX, &o->pids) < 0 || o->pids == 0)
			cli_die_usage("--pids", "'%s' is not a number from 1 to %llu", v, (unsigned long long)SBX_ARG_PIDS_MAX);
		break;
	case OPT_ARTIFACTS:
		if (v[0] == '\0')
			cli_die_usage("--artifacts", "the directory name is empty");
		o->artifacts = v;
		break;
	case OPT_NAME:
		if (!code_name_valid(v))
			cli_die_usage("--name", "'%s' is not a file name for the code "
				"([A-Za-z0-9._-], 1-64 characters, not starting with '.')", v);
		strlcpy(o->name, v, sizeof(o->name)); /* length checked just above */
		break;
	case OPT_FIX:
		if (v[0] == '\0')
			cli_die_usage("--fix", "the command is empty");
		o->fix = v;
		break;
	case OPT_MAX_ATTEMPTS:
		if (sbx_parse_uint(v, SBX_MAX_ATTEMPTS, &o->max_attempts) < 0 || o->max_attempts == 0)
			cli_die_usage("--max-attempts", "'%s' is not a number from 1 to %d", v, SBX_MAX_ATTEMPTS);
		break;
	case OPT_ALLOW: {
		char host[SBX_HOST_MAX + 1];
		const char *why;
		uint16_t port;

		if (o->n_allow == SBX_EGRESS_MAX)
			cli_die("--allow", "more than %d services", SBX_EGRESS_MAX);
		if (sbx_hostport_parse(v, host, &port, &why) < 0)
			cli_die("--allow", "'%s': %s", v, why);
		o->allow[o->n_allow++] = v;
		break;
	}
	case OPT_INPUT:
		if (o->n_inputs == SBX_MAX_INPUTS)
			cli_die_usage("--input", "more than %d files", SBX_MAX_INPUTS);
		if (v[0] == '\0')
			cli_die_usage("--input", "the file name is empty");
		o->inputs[o->n_inputs++] = v;
		break;
	case OPT_SESSION:
		if (!code_name_valid(v))
			cli_die_usage("--session", "'%s' is not a session name "
				"([A-Za-z0-9._-], 1-64 characters, not starting with '.')", v);
		o->work_session = v;
		break;
	case OPT_WORKSPACE:
		if (v[0] == '\0')
			cli_die_usage("--workspace", "the directory name is empty");
		o->workspace = v;
		break;
	case OPT_BUDGET:
	case OPT_FIX_TIMEOUT:
		parse_loop_duration(c == OPT_BUDGET ? "--budget" : "--fix-timeout", v,
				    c == OPT_BUDGET ? &o->budget_ms : &o->fix_timeout_ms);
		break;
	default:
		break;
	}
}

void run_opts_init(struct run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->work_fd = -1;
	o->stdin_fd = -1;
	o->ws_fd = o->cs_fd = -1;
}

int cli_parse_run(int argc, char **argv, struct run_opts *o)
{
	unsigned long seen = 0;
	int c;

	run_opts_init(o);
	prescan_json(argc, argv);
	opterr = 0; /* our own messages, in our format */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:h", long_opts, NULL)) != -1) {
		unsigned long bit;

		if (c == 'h') {
			cli_usage_run(stdout);
			return 1;
		}
		if (c == OPT_VERSION)
			cli_version();
		if (c == '?') {
			if (optopt != 0)
				cli_die_usage("run", "unknown option '-%c' (see sbx run --help)", optopt);
			cli_die_usage("run", "unknown option '%s' (see sbx run --help)", argv[optind - 1]);
		}
		if (c == ':')
			cli_die_usage("run", "option '%s' needs a value (see sbx run --help)", argv[optind - 1]);
		bit = 1ul << (c == 'c' ? 0 : c - OPT_LANG + 1);
		if ((seen & bit) && c != OPT_INPUT) {
			char what[32];
			snprintf(what, sizeof(what), c == 'c' ? "-c" : "--%s", opt_name(c));
			cli_die_usage(what, "given more than once");
		}
		seen |= bit;
		if (c == 'c')
			o->code = optarg;
		else if (c == OPT_JSON)
			o->json = true;
		else if (c == OPT_JSONL)
			o->jsonl = true;
		else if (c == OPT_DRY_RUN)
			o->dry_run = true;
		else
			parse_value(c, optarg, o);
	}
	if (optind < argc)
		o->file = argv[optind++];
	if (optind < argc)
		cli_die_usage("run", "more than one FILE given ('%s', '%s')", o->file, argv[optind]);
	if (o->code && o->file)
		cli_die_usage("run", "both -c and FILE '%s' given; use one", o->file);
	if (!o->code && !o->file)
		cli_die_usage("run", "no code given: use -c CODE, FILE, or - for standard input");
	if (o->json && o->jsonl)
		cli_die_usage("run", "--json and --jsonl given; use one");
	if (o->jsonl)
		o->json = true; /* the same pipes and quiet stderr; events.h for the rest */
	if (!o->fix && (o->max_attempts || o->budget_ms || o->fix_timeout_ms))
		cli_die_usage("run", "--max-attempts, --budget and --fix-timeout need --fix CMD");
	if (o->workspace && (o->work_session || o->fix))
		cli_die_usage("--workspace", "cannot be combined with --session or --fix");
	if (o->dry_run && (o->fix || o->jsonl || o->artifacts))
		cli_die_usage("--dry-run", "cannot be combined with --fix, --jsonl or --artifacts");
	if (o->lang == NULL)
		o->lang = o->file && ends_with(o->file, ".sh") ? "sh" : "python";
	if (o->name[0] == '\0' && o->file && strcmp(o->file, "-") != 0)
		code_name_from_path(o->file, o->name);
	return 0;
}
