/* SPDX-License-Identifier: ISC */
/*
 * Errors of the client: one line "sbx: WHAT: WHY" on stderr, a code of the
 * error-code table (common/errcode.h) in the --json result, and that
 * code's exit status (usage 2, set-up 125, ...; sbx(1) EXIT STATUS), so a
 * caller can tell sbx failing from the payload failing, and how.
 */
#ifndef SBX_CLIENT_FAIL_H
#define SBX_CLIENT_FAIL_H
#include <stdbool.h>

/*
 * Set once --json is known: from then on die() also prints the result of
 * the failure (errobj.h, result_of_failure: every member of the schema,
 * error {code, message: "sbx: WHAT: WHY"}) on stdout, so that stdout of
 * `sbx run --json` is always one result of the one shape.
 */
extern bool cli_json_errors;
/* --jsonl: the same object as one line {"event":"result","result":{...}}. */
extern bool cli_jsonl_errors;

/* Print "sbx: WHAT: WHY" (WHY formatted like printf) and exit 125: code
 * "setup", sbx could not do its part. */
void cli_die(const char *what, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* The same for a bad option, value or argument: code "usage", exit 2. */
void cli_die_usage(const char *what, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* The same with any code of the table, exiting with its exit status. */
void cli_die_code(const char *code, const char *what, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* The same line without exiting, for problems the run survives. */
void cli_warn(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print result_of_failure(code, msg) on stdout (MSG: any bytes; invalid
 * UTF-8 is replaced). Used by die() and when no result came. */
void cli_print_json_error(const char *code, const char *msg);

#endif
