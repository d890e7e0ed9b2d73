/* SPDX-License-Identifier: ISC */
/* sbx-audit: error messages and the options all subcommands share. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "version.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_common_opt(struct cli *c, const char *cmd, int opt, char **argv)
{
	/* getopt leaves the offending word at optind - 1 in both error cases. */
	const char *word = optind > 0 ? argv[optind - 1] : "?";
	const char *sep = cmd[0] ? " " : "";
	char *e;

	switch (opt) {
	case OPT_DB:
		c->db = optarg;
		return -1;
	case OPT_PUBKEY:
		c->pubkey = optarg;
		return -1;
	case OPT_VERSION: /* anywhere, like --help: "sbx-audit VERSION" */
		printf(PROG " %s\n", SBX_VERSION);
		return EXIT_OK;
	case ':':
		e = out_esc(word, strlen(word), 0);
		cli_err("%s%soption '%s' needs a value (see " PROG "%s%s --help)",
			cmd, cmd[0] ? ": " : "", e, sep, cmd);
		break;
	default:
		if (optopt != 0 && strncmp(word, "--", 2) != 0) {
			char o[2] = {(char)optopt, 0};
			e = out_esc(o, 1, 0);
		} else {
			e = out_esc(word, strlen(word), 0);
		}
		cli_err("%s%sunknown option '%s%s' (see " PROG "%s%s --help)",
			cmd, cmd[0] ? ": " : "", optopt != 0 && strncmp(word, "--", 2) != 0 ? "-" : "",
			e, sep, cmd);
		break;
	}
	free(e);
	return EXIT_USAGE;
}

int cli_extra_args(const char *cmd, int argc, char **argv)
{
	if (optind < argc) {
		char *e = out_esc(argv[optind], strlen(argv[optind]), 0);
		cli_err("%s: unexpected argument '%s' (see " PROG " %s --help)", cmd, e, cmd);
		free(e);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_open_log(const struct cli *c, struct sbx_audit **a)
{
	char err[SBX_ERR_LEN];

	if (sbx_audit_open(c->db, 1, a, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return -1;
	}
	return 0;
}

int cli_open_checkpoints(const struct cli *c, unsigned char pk[32], struct sbx_audit **a, char ***notes,
			 size_t *n)
{
	char err[SBX_ERR_LEN];

	if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	if (cli_open_log(c, a) < 0)
		return EXIT_UNREADABLE;
	if (sbx_audit_checkpoint_notes(*a, notes, n, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		sbx_audit_close(*a);
		*a = NULL;
		return EXIT_UNREADABLE;
	}
	return 0;
}
