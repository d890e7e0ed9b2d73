/* SPDX-License-Identifier: ISC */
/*
 * The outcomes of a run: one table (SBX_OUTCOMES below) from which every
 * consumer derives what it needs: the supervisor's classification and exit
 * status, the END record and the result, `sbx-audit search --outcome`,
 * the report and its HTML palette, the MCP output schema, the client's
 * error messages, and the checks of the man pages and bash completion
 * (tests/unit/test_vocab.c). Outcome names are part of the audit record:
 * never rename one.
 */
#ifndef SBX_OUTCOME_H
#define SBX_OUTCOME_H
#include <stdbool.h>

#include "limit.h"
#include "proto.h"

/* Exit status columns that are not a number: */
#define SBX_STATUS_PAYLOAD (-1) /* the payload's own exit status */
#define SBX_STATUS_SIGNAL  (-2) /* 128 + the signal's number */
#define SBX_STATUS_NONE    (-3) /* not a run's outcome (audit only) */

/*
 * X(SYMBOL, name, exit status of sbx run, limit that fired or
 *   SBX_LIMIT_NONE, report colour, description).
 */
#define SBX_OUTCOMES(X)                                                                           \
	X(OK, "ok", SBX_STATUS_PAYLOAD, SBX_LIMIT_NONE, "#2e7d32", "the program exited with status 0") \
	X(ERROR, "error", SBX_STATUS_PAYLOAD, SBX_LIMIT_NONE, "#c62828",                           \
	  "the program exited with another status")                                               \
	X(TIMEOUT, "timeout", SBX_EXIT_TIMEOUT, SBX_LIMIT_WALL_TIME, "#ef6c00",                    \
	  "the wall-time limit was reached (SIGINT, then SIGKILL)")                                \
	X(CPU_LIMIT, "cpu_limit", SBX_EXIT_TIMEOUT, SBX_LIMIT_CPU_TIME, "#6a1b9a",                 \
	  "the CPU-time limit was reached")                                                        \
	X(MEMORY_LIMIT, "memory_limit", 128 + 9, SBX_LIMIT_MEMORY, "#1565c0",                      \
	  "the memory limit was reached (the OOM killer acted in the cgroup)")                     \
	X(PIDS_LIMIT, "pids_limit", 128 + 9, SBX_LIMIT_PIDS, "#00838f",                            \
	  "the process limit was reached (a fork failed)")                                         \
	X(OUTPUT_LIMIT, "output_limit", 128 + 9, SBX_LIMIT_OUTPUT, "#795548",                      \
	  "the output limit was reached")                                                          \
	X(FILE_SIZE, "file_size", SBX_STATUS_SIGNAL, SBX_LIMIT_FILE_SIZE, "#f9a825",               \
	  "a file reached the file size limit (SIGXFSZ)")                                          \
	X(SIGNAL, "signal", SBX_STATUS_SIGNAL, SBX_LIMIT_NONE, "#ad1457",                          \
	  "the program was killed by a signal")                                                    \
	X(SANDBOX_ERROR, "sandbox_error", SBX_EXIT_FAILURE, SBX_LIMIT_NONE, "#424242",             \
	  "sbx refused the run or could not set it up")                                            \
	X(INCOMPLETE, "incomplete", SBX_STATUS_NONE, SBX_LIMIT_NONE, "#9e9e9e",                    \
	  "a START record without END: the run is going on, or its recorder died")

enum sbx_outcome {
#define SBX_OUTCOME_ENUM(sym, name, status, limit, color, doc) SBX_OUTCOME_##sym,
	SBX_OUTCOMES(SBX_OUTCOME_ENUM)
#undef SBX_OUTCOME_ENUM
	SBX_OUTCOME_N
};

struct sbx_outcome_def {
	const char *name;
	const char *color;   /* sbx-audit report --html */
	const char *doc;
	enum sbx_outcome id;
	int status;          /* exit status, or SBX_STATUS_* */
	int limit;           /* enum sbx_limit, or SBX_LIMIT_NONE */
};

extern const struct sbx_outcome_def sbx_outcome_defs[SBX_OUTCOME_N];

/* The row named name, or NULL. */
const struct sbx_outcome_def *sbx_outcome_by_name(const char *name);
/* Whether a run can end so (every row but the audit-only "incomplete"). */
bool sbx_outcome_of_run(const struct sbx_outcome_def *o);
/* The names, space-separated ("ok error ..."), with or without the
 * audit-only ones: for usage texts and error messages. */
const char *sbx_outcome_names(bool with_audit_only);

#endif
