/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit: shared pieces of the subcommands. sbx-audit is not setuid: it
 * reads the log with the invoker's rights (root or group sbx-audit), so
 * --db and --pubkey may point anywhere. What it prints comes from a log
 * that may have been tampered with, so every string goes through out.c.
 */
#ifndef SBX_AUDIT_CLI_H
#define SBX_AUDIT_CLI_H
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

#include "record.h"

#define PROG "sbx-audit"

/* Exit statuses of every subcommand. */
#define EXIT_OK 0
#define EXIT_FAIL 1       /* findings, not found, or the command failed */
#define EXIT_USAGE 2      /* bad command line */
#define EXIT_UNREADABLE 3 /* the log or the key cannot be read */
#define EXIT_WARNINGS 4   /* verify: warnings only, no tampering */

struct cli {
	const char *db;     /* --db, default SBX_LOCALSTATEDIR/lib/sbx/audit.db */
	const char *pubkey; /* --pubkey, default SBX_SYSCONFDIR/sbx/audit.pub */
};

/* Options every subcommand accepts, also before the subcommand name. */
enum { OPT_DB = 0x100, OPT_PUBKEY, OPT_VERSION, OPT_FIRST_CMD };
#define CLI_COMMON_OPTIONS                                  \
	{"db", required_argument, NULL, OPT_DB},            \
	{"pubkey", required_argument, NULL, OPT_PUBKEY},    \
	{"version", no_argument, NULL, OPT_VERSION},        \
	{"help", no_argument, NULL, 'h'}

/* "sbx-audit: <message>" on stderr; message is "what: why". */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Handle one getopt_long result that is not the subcommand's own: --db,
 * --pubkey, --version (prints "sbx-audit VERSION", EXIT_OK), or an unknown
 * option / missing value (message, EXIT_USAGE).
 * Returns -1 when handled without error, else the exit status to return.
 */
int cli_common_opt(struct cli *c, const char *cmd, int opt, char **argv);

/* Extra operands after the options: a usage error. */
int cli_extra_args(const char *cmd, int argc, char **argv);

/* Open the log read-only; on failure print the reason, return -1. */
int cli_open_log(const struct cli *c, struct sbx_audit **a);

/*
 * The verifier key (c->pubkey) into pk, the log opened read-only into *a
 * and its checkpoint notes, oldest first, into *notes and *n (the
 * caller frees them with sbx_checkpoint_notes_free and closes *a). 0, or the
 * exit status (EXIT_UNREADABLE) with the reason printed and nothing left
 * open.
 */
int cli_open_checkpoints(const struct cli *c, unsigned char pk[32], struct sbx_audit **a, char ***notes,
			 size_t *n);

/* ---- safe output (out.c) ---- */

/*
 * Render n bytes of untrusted text so that nothing in it can act on a
 * terminal: C0 and C1 controls, DEL, invalid UTF-8 and bidirectional
 * overrides become \xNN or \u{NNNN}; a backslash becomes \\. multiline
 * keeps newlines and tabs as they are (and backslashes, for tracebacks).
 * Returns malloc'd text; exits on out of memory.
 */
char *out_esc(const char *s, size_t n, int multiline);
/* out_esc of a C string, written to f. */
void out_str(FILE *f, const char *s);
/* A JSON string of n untrusted bytes (invalid UTF-8 becomes U+FFFD). */
json_t *out_json_str(const char *s, size_t n);
/* Lower-case hex of n bytes as a JSON string. */
json_t *out_json_hex(const unsigned char *p, size_t n);
/* Write j to stdout, indented, with a newline; consumes j. */
int out_json(json_t *j);
/* Exit with a message if p is NULL (jansson or malloc failed). */
void *out_need(void *p);

/* ---- subcommands ---- */
int cmd_keygen(struct cli *c, int argc, char **argv);
int cmd_key(struct cli *c, int argc, char **argv);
int cmd_list(struct cli *c, int argc, char **argv);
int cmd_report(struct cli *c, int argc, char **argv);
int cmd_rotate(struct cli *c, int argc, char **argv);
int cmd_show(struct cli *c, int argc, char **argv);
int cmd_verify(struct cli *c, int argc, char **argv);
int cmd_checkpoint(struct cli *c, int argc, char **argv);
int cmd_prove(struct cli *c, int argc, char **argv);
int cmd_verify_proof(struct cli *c, int argc, char **argv);
int cmd_search(struct cli *c, int argc, char **argv);
int cmd_export(struct cli *c, int argc, char **argv);

#endif
