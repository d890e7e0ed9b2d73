/* SPDX-License-Identifier: ISC */
/* `sbx run --dry-run` (proto.h --dry-run). */
#ifndef SBX_CLIENT_DRYRUN_H
#define SBX_CLIENT_DRYRUN_H
#include <jansson.h>

#include "cli.h"

/*
 * Ask the helper to check the request as for a run; it answers with its
 * run description (proto.h SBX_FRAME_DRY_RUN, rundesc.h), which we print:
 * "key: value" lines on stdout, or with --json one object (keys mount,
 * input and env are arrays) with "dry_run": true. Returns the helper's exit
 * status (0, or 125 with its error on stderr / as the JSON error object).
 */
int run_dry(const struct run_opts *o);

/* The helper's checked description as one object, in the order the facts
 * are listed in sbx(1) (--dry-run); every limit under its JSON key. */
struct sbx_dry_run;
json_t *dry_run_json(const struct sbx_dry_run *dr);

#endif
