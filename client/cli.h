/* SPDX-License-Identifier: ISC */
/* Command line of `sbx`: usage texts and the options of `sbx run`. */
#ifndef SBX_CLIENT_CLI_H
#define SBX_CLIENT_CLI_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"
#include "proto.h"
#include "version.h"

/* What `sbx run` was asked to do. Strings point into argv. */
struct run_opts {
	const char *code;      /* -c CODE, or NULL */
	const char *file;      /* FILE, "-" for stdin, or NULL with -c */
	const char *lang;      /* --lang, or the default from FILE's suffix */
	const char *policy;    /* --policy, or NULL: the helper's default */
	uint64_t timeout_ms;   /* --timeout; 0: the policy's */
	uint64_t memory_bytes; /* --memory; 0: the policy's */
	uint64_t pids;         /* --pids; 0: the policy's */
	bool json;             /* --json, or --jsonl: machine output on stdout */
	bool jsonl;            /* --jsonl: events as they happen (events.h) */
	const char *artifacts; /* --artifacts DIR, or NULL */
	char name[65];         /* --name or derived from FILE; "" = let the helper choose */
	/* the retry loop (loop.c) */
	const char *fix;         /* --fix CMD, or NULL: run once */
	uint64_t max_attempts;   /* --max-attempts; 0: the policy's */
	uint64_t budget_ms;      /* --budget; 0: none */
	uint64_t fix_timeout_ms; /* --fix-timeout; 0: FIX_TIMEOUT_DEFAULT_MS */
	const char *inputs[SBX_MAX_INPUTS]; /* --input PATH, in order */
	size_t n_inputs;
	const char *work_session; /* --session NAME: persistent /work, or NULL */
	bool dry_run;            /* --dry-run: print the set-up, run nothing */
	/* sbx session start (live.c): helper --live, --idle, --lifetime */
	bool live;
	uint64_t idle_ms, lifetime_ms; /* 0: the policy's */
	const char *allow[SBX_EGRESS_MAX]; /* --allow HOST:PORT: narrow the policy's services */
	size_t n_allow;
	/* opened once before the first attempt (inputs.c, session.c) */
	int input_fds[SBX_MAX_INPUTS];       /* sealed memfds */
	char input_names[SBX_MAX_INPUTS][65]; /* their names under /in */
	int work_fd;                          /* the session directory, or -1 */
	int stdin_fd;                         /* sealed memfd of the standard input, or -1 */
	const char *workspace;                /* --workspace DIR, or NULL (workspace.h) */
	int ws_fd, cs_fd;                     /* the workspace and its fresh changeset directory, or -1 */
	char ws_path[4096];                   /* the workspace's absolute path, for sbx apply */
	uint64_t ws_dev, ws_ino;              /* and its identity (fstat) */
	/* set per attempt by the loop, never from the command line */
	size_t code_len;         /* bytes of code; 0: strlen(code) */
	const char *session;     /* helper --session, or NULL */
	uint32_t attempt;        /* helper --attempt; 0: not passed */
	const char *parent;      /* helper --parent, or NULL */
};

#define FIX_TIMEOUT_DEFAULT_MS 60000u

/* `sbx --help` and `sbx run --help`. */
void cli_usage(FILE *out);
void cli_usage_run(FILE *out);
void cli_usage_mcp(FILE *out);
void cli_usage_session(FILE *out);
void cli_usage_policies(FILE *out);

/* Print "sbx VERSION" (the top-level VERSION file) and exit 0. */
void cli_version(void) __attribute__((noreturn));

/*
 * The options every command and subcommand takes, for those that have no
 * option parser of their own: among argv[1..argc) up to a "--", --help or
 * -h prints usage(stdout) and exits 0, --version exits through
 * cli_version(). with_value (NULL-terminated, or NULL) names the
 * command's options that take the next argument as their value, which is
 * skipped: `sbx apply ID --only --help` selects a path named --help.
 * Everything else is left to the caller.
 */
void cli_std_opts(int argc, char **argv, void (*usage)(FILE *), const char *const *with_value);

/*
 * Parse the arguments after "run" (argv[0] is "run"). Validates every
 * value (ranges as the helper enforces them, see proto.h) and dies with
 * "sbx: OPTION: why" (exit 125) on the first bad one.
 * Returns 0, or 1 when --help was given (usage already printed).
 */
int cli_parse_run(int argc, char **argv, struct run_opts *o);
/* No option given: every fd -1 ("none"), everything else zero. Every
 * run_opts starts here (a zero fd is stdin, not "none"). */
void run_opts_init(struct run_opts *o);

#endif
