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

/* exit_status values that are not one number: SBX_STATUS_PAYLOAD (the
 * program's own exit status), SBX_STATUS_SIGNAL (128 + the signal's
 * number), outcome.h */

struct sbx_errcode {
	const char *code;    /* error.code: [a-z_]+ */
	const char *outcome; /* the outcome it belongs to */
	int exit_status;     /* sbx run's exit status, or SBX_STATUS_PAYLOAD/SIGNAL */
	const char *what;    /* one line for sbx(1) and the schema */
};

/* The codes, in the order sbx(1) ERROR CODES lists them: the outcomes'
 * (from the outcome table) first, then sbx's own. sbx_errcode_at(i) for i
 * from 0 to sbx_errcode_count() - 1; NULL past the end. */
size_t sbx_errcode_count(void);
const struct sbx_errcode *sbx_errcode_at(size_t i);

/* The row of code, or NULL. */
const struct sbx_errcode *sbx_errcode_find(const char *code);

/* The row of a non-ok outcome other than sandbox_error (its code is the
 * outcome's name), or NULL. */
const struct sbx_errcode *sbx_errcode_of_outcome(const char *outcome);

#endif
