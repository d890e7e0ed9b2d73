/* SPDX-License-Identifier: ISC */
/*
 * The result's "error" member: one shape for every way a run can fail, so
 * an agent reads one place, with the traceback text first.
 *
 *   null when the outcome is "ok"; otherwise
 *   {"type":      the exception type ("ZeroDivisionError", "ShellError")
 *                 when a traceback was parsed, else the outcome
 *                 ("timeout", "memory_limit", "error", "sandbox_error"...),
 *    "message":   the exception's message; for a limit, which one and its
 *                 value ("wall-time limit of 30000 ms reached"); for
 *                 "signal", the signal's name; else the last non-empty
 *                 line of stderr (at most 512 bytes), or null,
 *    "line":      line in the user's code of the innermost frame, or null,
 *    "traceback": the whole report as the interpreter printed it, or null}
 *
 * The facts come from the helper's result (outcome, limits, traceback,
 * stderr; sbx(1) "The result"); the helper's own "error" string, set only
 * for sandbox_error, becomes the message.
 */
#ifndef SBX_CLIENT_ERROBJ_H
#define SBX_CLIENT_ERROBJ_H
#include <jansson.h>

/* The error object for result res (new reference; NULL if out of memory). */
json_t *result_error(json_t *res);

/* Replace res's "error" with result_error(res). 0, or -1 out of memory. */
int result_set_error(json_t *res);

#endif
