/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit: query and verify the sbx audit log.
 *
 *   sbx-audit [--db PATH] [--pubkey PATH] COMMAND [OPTIONS]
 *
 * Global options may also follow the command name. Exit status: 0 success,
 * 1 findings or failure, 2 usage, 3 log or key unreadable.
 */
#include "cli.h"
#include "sha256_ossl.h"

#include <stdlib.h>
#include <string.h>

#include "paths.h"

static const struct {
	const char *name;
	int (*fn)(struct cli *, int, char **);
	const char *summary;
} commands[] = {
	{"list", cmd_list, "one line per run, newest last"},
	{"search", cmd_search, "the runs that match every filter (like ausearch)"},
	{"export", cmd_export, "finished runs as JSON lines or CSV for a SIEM, resumable"},
	{"show", cmd_show, "the START and END records of one run"},
	{"report", cmd_report, "summaries: runs by user, outcome, limits, code, sessions"},
	{"verify", cmd_verify, "check hashes, chain, signatures, columns, checkpoints"},
	{"checkpoint", cmd_checkpoint, "print (or --write) the newest signed checkpoint"},
	{"prove", cmd_prove, "inclusion proof of a run in the newest checkpoint"},
	{"verify-proof", cmd_verify_proof, "check a proof offline with the public key"},
	{"import", cmd_import, "take a host's records export into a central store"},
	{"consistency", cmd_consistency, "RFC 9162 consistency proof between two checkpoints"},
	{"rotate", cmd_rotate, "move old runs to an archive log (root)"},
	{"keygen", cmd_keygen, "create the signing key pair (root)"},
	{"key", cmd_key, "print the public key as a C2SP verifier key"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: " PROG " [--db PATH] [--pubkey PATH] COMMAND [OPTIONS]\n"
		"\n"
		"Query and verify the sbx audit log.\n"
		"\n"
		"commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"options:\n"
		"  --db PATH      the log (default " SBX_LOCALSTATEDIR "/lib/sbx/audit.db)\n"
		"  --pubkey PATH  the public key (default " SBX_SYSCONFDIR "/sbx/audit.pub)\n"
		"  --version      print \"sbx-audit VERSION\" and exit\n"
		"  -h, --help     this text; COMMAND --help for a command's options\n"
		"\n"
		"exit status: 0 ok, 1 findings or failure, 2 usage (verify: warnings only),\n"
		"3 log or key unreadable\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
	struct cli c = {
		.db = SBX_LOCALSTATEDIR "/lib/sbx/audit.db",
		.pubkey = SBX_SYSCONFDIR "/sbx/audit.pub",
	};
	const char *name;
	size_t i;
	int opt, rc;

	audit_sha256_fast();
	opterr = 0;
	/* "+": stop at the command name; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return EXIT_OK;
		}
		rc = cli_common_opt(&c, "", opt, argv);
		if (rc >= 0)
			return rc;
	}
	if (optind >= argc) {
		cli_err("no command given (see " PROG " --help)");
		return EXIT_USAGE;
	}
	name = argv[optind];
	if (strcmp(name, "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name) == 0) {
			argc -= optind;
			argv += optind;
			optind = 0; /* glibc: full re-initialisation for the command */
			rc = commands[i].fn(&c, argc, argv);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				cli_err("standard output: write failed");
				return rc ? rc : EXIT_FAIL;
			}
			return rc;
		}
	}
	{
		char *e = out_esc(name, strlen(name), 0);
		cli_err("%s: unknown command (see " PROG " --help)", e);
		free(e);
	}
	return EXIT_USAGE;
}
