/* SPDX-License-Identifier: ISC */
/*
 * Running the retry loop's fixer: the caller's own command, outside the
 * sandbox and as the caller (it is their tool, holding their API keys).
 * It gets one JSON document on stdin and answers with code on stdout.
 */
#ifndef SBX_CLIENT_FIXER_H
#define SBX_CLIENT_FIXER_H
#include <stddef.h>
#include <stdint.h>

enum fix_status {
	FIX_OK,          /* exited 0; out holds its stdout */
	FIX_FAILED,      /* exited non-zero or was killed: see detail */
	FIX_TIMEOUT,     /* still running at the deadline; killed */
	FIX_TOO_BIG,     /* wrote more than SBX_CODE_MAX bytes; killed */
	FIX_INTERRUPTED, /* we got SIGINT/SIGTERM/SIGHUP; killed */
};

struct fix_run {
	enum fix_status status;
	char detail[128]; /* "exited with status 3", "killed by signal 9" */
	char *out;        /* stdout, NUL-terminated (malloc'ed), or NULL */
	size_t out_len;
	uint64_t wall_ms;
};

/*
 * Run `/bin/sh -c cmd` in a process group of its own (so a terminal Ctrl-C
 * reaches us, and a timeout can kill everything it started), writing in
 * to its stdin while reading its stdout; its stderr is ours. Kills the group
 * at timeout_ms. Returns 0, or -1 with err set if it could not be started.
 */
int fixer_run(const char *cmd, const char *in, size_t in_len, uint64_t timeout_ms,
	      struct fix_run *r, char *err, size_t errlen);

/*
 * The code in a fixer's answer: JSON {"code": "..."} when the output is a
 * JSON object with a string member "code" (leading white space allowed),
 * otherwise the raw output. Returns malloc'ed code with its length in
 * *len, or NULL with why set (empty answer, JSON without "code", NUL byte).
 */
char *fixer_answer_code(const char *out, size_t len, size_t *code_len, char *why, size_t whylen);

#endif
