/* SPDX-License-Identifier: ISC */
/* Live sessions, the caller's side (live.c, sbx(1) SESSIONS). */
#ifndef SBX_CLIENT_LIVE_H
#define SBX_CLIENT_LIVE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "cli.h"

/* The live session NAME's socket, its holder checked to be _sbx's; -1 when
 * no session of ours has that name. Dies when someone else holds it. */
int live_connect(const char *name);
/* sbx run --session NAME: a call when NAME is live (*handled true, the
 * exit status); SBX_EXIT_NO_SESSION when it was and ended; else *handled
 * false and the run goes on with NAME as the /work directory only. */
int live_run(const struct run_opts *o, bool *handled);
/* sbx session start NAME [...] (argv from "session"); exit status. */
int live_start(int argc, char **argv);
/* Start the live session NAME in language lang (policy NULL: the default; 0 ms: the
 * policy's); its id in sid. 0, or an exit status (the reason on fd 2). */
int live_begin(const char *name, const char *policy, const char *lang, uint64_t idle_ms, uint64_t lifetime_ms,
	       char *sid, size_t sidlen);
/* After a restart of NAME: its next call's session_state is "restarted". */
void live_mark_restarted(const char *name);
/* sbx session stop NAME (quiet: print nothing on success); exit status. */
int live_stop(const char *name, bool json, bool quiet);
/* The STATUS answer of a live NAME (*out, the caller decrefs), or -1. */
int live_status(const char *name, json_t **out);
/* What ls says of NAME as a live session: its STATUS when live, the end
 * its keeper recorded when it ended, NULL when it never was one. */
json_t *live_info(const char *name);
#endif
