/* SPDX-License-Identifier: ISC */
/*
 * The result's "error" member (PLAN.md "Conventions", sbx(1) The result,
 * docs/result.schema.json): one shape for every way a run can fail, so an
 * agent reads one place, leading with what stopped the program.
 *
 *   null when the outcome is "ok"; otherwise
 *   {"code":      from the error-code table (common/errcode.h): the
 *                 outcome's name for a program that ran ("error",
 *                 "timeout", "memory_limit"...), else why sbx could not
 *                 run it ("usage", "setup", "limit_above_policy"...),
 *    "type":      the exception type ("ZeroDivisionError", "ShellError")
 *                 when the program failed with a parsed traceback, else
 *                 the code: a limit comes first even when the interpreter
 *                 printed a traceback as it was stopped (Python's
 *                 KeyboardInterrupt at the wall-time limit),
 *    "message":   for a limit, which one, its value and where it came
 *                 from, in the policy's units ("wall-time limit of 30s
 *                 (policy default) reached", "... (--timeout) ..."); else
 *                 the exception's message; for "signal", the signal's
 *                 name; else the last non-empty line of stderr (at most
 *                 512 bytes), or null,
 *    "hint":      what the caller can do (hint.h), or null,
 *    "line":      line in the user's code of the innermost frame, or null,
 *    "traceback": the whole report as the interpreter printed it, or null
 *                 (for a limit: where the program was when stopped)}
 *
 * The facts come from the helper's result (outcome, limits, policy,
 * traceback, stderr; sbx(1) "The result") and, for where a limit came
 * from, the options of the run; the helper's own "error" string, set only
 * for sandbox_error, becomes the message.
 */
#ifndef SBX_CLIENT_ERROBJ_H
#define SBX_CLIENT_ERROBJ_H
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "cli.h"

/* The object {code, type, message, hint, line: null, traceback: null}
 * for a failure of sbx itself; type NULL: the code; message (consumed)
 * and hint may be NULL (null). New reference, or NULL. */
json_t *result_error_object(const char *code, const char *type, json_t *message, const char *hint);

/* The result when sbx failed without one from the helper: every member
 * of the schema, outcome sandbox_error, what is unknown null or empty, and
 * error {code, message} (message: any bytes, invalid UTF-8 replaced). New
 * reference, or NULL out of memory. */
json_t *result_of_failure(const char *code, const char *message);

/* The error object for result res of a run with options o (NULL: none
 * tightened a limit). New reference; NULL if out of memory. */
json_t *result_error(json_t *res, const struct run_opts *o);

/* Replace res's "error" with result_error(res, o) and set its
 * schema_version (client/resultschema.h). 0, or -1 out of memory. */
int result_set_error(json_t *res, const struct run_opts *o);

/* "memory limit of 512M (policy default) reached" for a result whose
 * outcome is a limit: true and the sentence in buf; false otherwise. */
bool result_limit_message(json_t *res, const struct run_opts *o, char *buf, size_t len);

/* "512M (policy default)", "2s (--timeout)": the value of the limit under
 * limit_key ("memory_bytes", "output_bytes"... of the result's "limits")
 * and where it came from; false when the result has no such limit. */
bool result_limit_value(json_t *res, const struct run_opts *o, const char *limit_key, char *buf, size_t len);

#endif
