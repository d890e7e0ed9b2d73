/* SPDX-License-Identifier: ISC */
/* `sbx run --fix CMD`: run, hand a failure to the fixer, run its
 * corrected code, a capped number of times (see cli.c --fix). */
#ifndef SBX_CLIENT_LOOP_H
#define SBX_CLIENT_LOOP_H
#include "cli.h"

/* Returns the exit status of the last attempt (125 if sbx failed). */
int run_fix_loop(struct run_opts *o);

#endif
