/* SPDX-License-Identifier: ISC */
/* `sbx run --dry-run` (proto.h --dry-run). */
#ifndef SBX_CLIENT_DRYRUN_H
#define SBX_CLIENT_DRYRUN_H
#include "cli.h"

/*
 * Ask the helper to check the request as for a run and print the effective
 * set-up instead of running it. Without --json its "key: value" lines go
 * straight to stdout; with --json they become one object (keys mount,
 * input and env are arrays) with "dry_run": true. Returns the helper's exit
 * status (0, or 125 with its error on stderr / as the JSON error object).
 */
int run_dry(const struct run_opts *o);

#endif
