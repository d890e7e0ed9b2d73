/* SPDX-License-Identifier: ISC */
/*
 * Errors of the client: one line "sbx: WHAT: WHY" on stderr and exit status
 * 125 (SBX_EXIT_FAILURE), so a caller can tell sbx failing from the
 * payload failing.
 */
#ifndef SBX_CLIENT_FAIL_H
#define SBX_CLIENT_FAIL_H
#include <stdbool.h>

/*
 * Set once --json is known: from then on die() also prints
 * {"outcome":"sandbox_error","error":"sbx: WHAT: WHY"} on stdout, so that
 * stdout of `sbx run --json` is always one JSON object.
 */
extern bool cli_json_errors;
/* --jsonl: the same object as one line {"event":"result","result":{...}}. */
extern bool cli_jsonl_errors;

/* Print "sbx: WHAT: WHY" (WHY formatted like printf) and exit 125. */
void cli_die(const char *what, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* The same line without exiting, for problems the run survives. */
void cli_warn(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print {"outcome":"sandbox_error","error":MSG} (MSG: any bytes; invalid
 * UTF-8 is replaced) on stdout. Used by die() and when no result came. */
void cli_print_json_error(const char *msg);

#endif
