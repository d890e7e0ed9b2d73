/* SPDX-License-Identifier: ISC */
/*
 * The result's "error" member (PLAN.md "Conventions", sbx(1) The result):
 * one shape for every way a run can fail, so an agent reads one place.
 *
 *   null when the outcome is "ok"; otherwise
 *   {"code":    from the error-code table (common/errcode.h): the outcome's
 *               name for a program that ran ("error", "timeout", ...),
 *               else why sbx could not run it ("usage", "setup", ...),
 *    "message": one line: the exception's message; for a limit, which one,
 *               its value in the units a policy writes and the policy
 *               ("wall-time limit of 30s reached (policy default)"); for
 *               "signal", the signal's name; else the last non-empty line
 *               of stderr (at most 512 bytes), or null,
 *    "type":    the exception type ("ZeroDivisionError") when a traceback
 *               was parsed, else the code,
 *    "hint":    what to do about it when sbx knows, else null}
 *
 * The parsed traceback stays in the result's "traceback". The facts come
 * from the helper's result (outcome, limits, traceback, stderr); the
 * helper's own "error" string, set only for sandbox_error, becomes the
 * message.
 */
#ifndef SBX_CLIENT_ERROBJ_H
#define SBX_CLIENT_ERROBJ_H
#include <jansson.h>

/* The error object for result res (new reference; NULL if out of memory). */
json_t *result_error(json_t *res);

/* The object {code, message, type, hint}; type NULL: the code; message
 * (consumed) and hint may be NULL (null). New reference, or NULL. */
json_t *result_error_object(const char *code, const char *type, json_t *message, const char *hint);

/* The result when sbx failed without one from the helper: every member
 * of the schema, outcome sandbox_error, what is unknown null or empty, and
 * error {code, message} (message: any bytes, invalid UTF-8 replaced). New
 * reference, or NULL out of memory. */
json_t *result_of_failure(const char *code, const char *message);

/* Replace res's "error" with result_error(res) and set its schema_version
 * (client/resultschema.h). 0, or -1 out of memory. */
int result_set_error(json_t *res);

#endif
