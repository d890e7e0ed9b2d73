/* SPDX-License-Identifier: ISC */
/*
 * Turning a payload's stderr into a structured error an agent can feed back
 * to a model. Runs in the helper's unprivileged recorder on output the
 * sandboxed code wrote, so it treats its input as hostile: any bytes, any
 * length (a few MB), one linear pass, bounded output.
 */
#ifndef SBX_TRACEBACK_H
#define SBX_TRACEBACK_H
#include <stddef.h>
#include <jansson.h>

/* Output bounds: a RecursionError or a log full of tracebacks must not turn
 * into megabytes of JSON. */
#define SBX_TB_MAX_FRAMES  64          /* innermost frames kept */
#define SBX_TB_MAX_CHAIN   16          /* most recent earlier exceptions kept */
#define SBX_TB_MAX_MSG_LINES 50        /* lines of a multi-line message */
#define SBX_TB_MESSAGE_MAX (8u << 10)  /* bytes of "message" */
#define SBX_TB_FIELD_MAX   1024u       /* bytes of a frame's file/function/text */
#define SBX_TB_TEXT_MAX    (64u << 10) /* bytes of "text" (its tail is kept) */

/*
 * Parse the last error report in stderr_text (len bytes, need not be
 * NUL-terminated, may contain NULs and invalid UTF-8).
 *
 * language selects the format: NULL or a name starting with "python"
 * (CPython 3 tracebacks); "sh", "bash", "dash" or "shell" (shell error
 * lines). Any other language returns NULL.
 *
 * Python: the last "Traceback (most recent call last):" report wins, with
 * the chain it closes ("During handling of the above exception..." /
 * "The above exception was the direct cause..."); a compile error report
 * without the header (File line, source, caret, "SyntaxError: msg") and a
 * 3.11 "Exception Group Traceback" (its own frames and exception; the
 * sub-exceptions are not parsed) are recognised too.
 *
 * Returns a new JSON object (caller json_decref()s it), or NULL when there
 * is no report or memory ran out:
 *   type      string, e.g. "ZeroDivisionError", "numpy.linalg.LinAlgError",
 *             "ShellError"; null when the report was cut off before its
 *             exception line (output cap)
 *   message   string, "" when the exception has none; null with type null.
 *             A multi-line message runs to the first blank line (Python
 *             does not mark where it ends, so output printed right after
 *             a traceback can end up here), at most SBX_TB_MAX_MSG_LINES
 *             lines and SBX_TB_MESSAGE_MAX bytes
 *   line      integer: line of the innermost frame in a file under /code/
 *             (the user's code), or null
 *   frames    [{file, line (integer or null), function (string or null:
 *             compile errors and shell errors have none), text (the source
 *             line, trimmed, or null), repeat (only when Python printed
 *             "[Previous line repeated N more times]": N)}], outermost
 *             first, at most SBX_TB_MAX_FRAMES innermost ones
 *   frames_omitted  integer, only when frames were dropped
 *   chain     [{type, message}]: earlier exceptions of the chain, oldest
 *             first, at most SBX_TB_MAX_CHAIN; [] when none
 *   text      the raw report (the whole chain), at most SBX_TB_TEXT_MAX
 *             bytes from its end
 *   text_truncated  true, only when text was cut
 * All strings are valid UTF-8 without NULs (bad bytes become U+FFFD).
 *
 * Shell: lines "FILE: line N: MSG" (bash) and "FILE: N: MSG" (dash); the
 * last one from a file under /code/ wins, else the last one. type is
 * "ShellError", frames holds that one location, text that one line.
 */
json_t *sbx_traceback_parse(const char *stderr_text, size_t len, const char *language);

#endif
