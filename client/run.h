/* SPDX-License-Identifier: ISC */
/* `sbx run`: one run from the loaded code to the exit status. */
#ifndef SBX_CLIENT_RUN_H
#define SBX_CLIENT_RUN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "artifacts.h"
#include "cli.h"
#include "events.h"
#include "frames.h"
#include "spawn.h"
#include "ttysafe.h"
#include "ttyout.h"

#define MAX_ARTIFACTS 4096 /* far above any policy's cap: a guard, not a limit */

/* An artifact as received; size from the memfd. */
struct artifact_rec {
	char *name;
	uint64_t size;
	char *path; /* saved there, or NULL */
};

struct run_state {
	const struct run_opts *o;
	struct artifact_dir dir;
	bool have_dir;
	struct helper h;
	int pidfd;                 /* the helper's pidfd, or -1 (kernel < 5.3) */
	bool helper_exited;
	int status;                /* from waitpid() */
	struct frame_reader fr;
	bool sock_done;
	char *result;              /* the result frame's JSON text, or NULL */
	size_t result_len;
	char proto_err[512];       /* first protocol error, or "" */
	struct artifact_rec *arts;
	size_t narts;
	bool arts_dropped;
	char message[SBX_FRAME_LINE_MAX + 16]; /* the helper's last message line, "sbx-helper: ..." */
	char run_id[SBX_ID_LEN + 1]; /* from SBX_FRAME_STARTED, or "" */
	struct utf8_carry carry[2]; /* --jsonl: stdout, stderr */
	struct ttysafe tty[2];      /* plain mode on a terminal: stdout, stderr */
	struct ttyout show[2];      /* plain mode, piped: what waits for our stdout, stderr */
	json_t **keep;             /* the retry loop takes the result here instead of printing it */
};

/* A live session's call: the frames on sock (connected, request sent). */
int run_on_socket(const struct run_opts *o, int sock);

/* Run o's code and return the exit status for sbx (proto.h). */
int run_code(const struct run_opts *o);

/* The same, but with result non-NULL the parsed result (artifact paths
 * added) goes to *result instead of stdout; *result stays NULL when the
 * helper gave none (the error is printed as for run_code). */
int run_attempt(const struct run_opts *o, json_t **result);

/* Read every frame the result socket holds now (rs->fr): output and the
 * helper's messages are shown (or become --jsonl events), artifact frames
 * are saved or noted, the result frame's JSON is kept in rs->result, a
 * protocol error is kept in rs->proto_err; at EOF or on an error
 * rs->sock_done is set (the caller closes rs->h.result_fd). Exposed for
 * tests/fuzz/fuzz_result.c. */
void run_read_frames(struct run_state *rs);

/* After the helper is gone: print the result or the error, return the
 * exit status (finish.c). */
int run_finish(struct run_state *rs);

#endif
