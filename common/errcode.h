/* SPDX-License-Identifier: ISC */
/*
 * The error codes: the one table of the result's error.code (PLAN.md
 * "Conventions"; sbx(1) ERROR CODES lists the same rows, checked by
 * tests/unit/test_errcode.c against docs/result.schema.json and the man
 * page). One row per non-ok outcome, whose code is the outcome's name, and
 * one per way sbx itself fails before or around a run (outcome
 * sandbox_error). The exit status is what `sbx run` exits with for it.
 */
#ifndef SBX_ERRCODE_H
#define SBX_ERRCODE_H
#include <stddef.h>

#define SBX_EXIT_USAGE   2   /* as most tools: a bad option or value */
#define SBX_EXIT_AUDIT   74  /* EX_IOERR (sysexits.h): the audit log failed */
#define SBX_EXIT_REFUSED 77  /* EX_NOPERM: refused by policy or group */
/* SBX_EXIT_FAILURE (125, common/proto.h): set-up failed */

/* exit_status values that are not one number */
#define SBX_EXIT_PROGRAM (-1) /* the program's own exit status */
#define SBX_EXIT_SIGNAL  (-2) /* 128 + the signal's number */

struct sbx_errcode {
	const char *code;    /* error.code: [a-z_]+ */
	const char *outcome; /* the outcome it belongs to */
	int exit_status;     /* sbx run's exit status, or SBX_EXIT_PROGRAM/SIGNAL */
	const char *what;    /* one line for sbx(1) and the schema */
};

extern const struct sbx_errcode sbx_errcodes[];
extern const size_t sbx_n_errcodes;

/* The row of code, or NULL. */
const struct sbx_errcode *sbx_errcode_find(const char *code);

/* The row of a non-ok outcome other than sandbox_error (its code is the
 * outcome's name), or NULL. */
const struct sbx_errcode *sbx_errcode_of_outcome(const char *outcome);

#endif
