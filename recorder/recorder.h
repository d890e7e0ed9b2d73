/* SPDX-License-Identifier: ISC */
/*
 * sbx-recorder internals: one run's audit-log side, as _sbx with no
 * capabilities, exec'd by the supervisor (helper/main.c) with the fds of
 * proto.h enum sbx_recorder_fd. It trusts nothing it reads from the
 * sandbox or the collector; what it sends the supervisor is one byte (enum
 * sbx_rec_reply), what it sends the client is frames (outq.h).
 */
#ifndef SBX_RECORDER_H
#define SBX_RECORDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "egress_record.h"
#include "log.h"
#include "proto.h"
#include "outq.h"
#include "record.h"
#include "environment.h"
#include "rundesc.h"

/* Files not returned that the result lists by path (all are counted). */
#define MAX_SKIPPED_LISTED 1024
/* After END, the longest the recorder waits for the payload's pipes to
 * reach EOF, and for each further message of the collector (ms). The
 * supervisor sends END once the sandbox and the collector are gone, so
 * what is left is already buffered; a process that did not die (frozen in
 * the caller's cgroup v1 freezer, docs/threat-model.md row 28) still holds
 * its end open, and nothing of the recorder waits on it for longer. */
#define REC_TAIL_MS 2000

struct skipped_art {
	char path[SBX_PATH_MAX_ART + 1];
	enum sbx_art_skip why;
};

struct stream {
	int in;                /* the payload's pipe */
	uint32_t frame;        /* SBX_FRAME_STDOUT or SBX_FRAME_STDERR */
	struct outq_src cap;   /* captured bytes, at most the output cap in all */
	size_t alloc;
	uint64_t total;        /* bytes the payload wrote, kept or not */
	/* Past the head (output_action truncate): the last bytes written, a
	 * ring of tail_cap bytes, put after the head with a marker at the end. */
	char *tail;
	size_t tail_cap, tail_len, tail_pos;
	uint64_t omitted;      /* bytes in neither the head nor the tail */
	bool eof, truncated;
};

struct rec {
	const struct sbx_run_desc *d;
	int ctl, art;
	struct rec_log *log;
	struct outq q;
	struct stream s[2];
	uint64_t captured;     /* head bytes of both streams together */
	struct sbx_run_end end;
	bool have_end;
	char *code;
	size_t code_len;
	unsigned char code_sha256[32];
	unsigned char refused_sha256[32]; /* a refused run's checked code (SBX_DESC_CODE) */
	bool refused_hashed;
	unsigned char input_sha256[SBX_MAX_INPUTS][32]; /* set with START (startfacts.c) */
	unsigned char stdin_sha256[32];                 /* likewise, with SBX_DESC_STDIN */
	bool stdin_hashed;
	struct sbx_artifact *arts;  /* at most arts_cap (limits.artifacts) */
	bool *art_truncated;        /* the payload was writing it when /out filled up */
	size_t n_arts, arts_cap, skipped_arts;
	uint64_t art_total;         /* bytes of the artifacts taken */
	bool art_eof;
	bool art_done;  /* SBX_COLLECT_DONE came: the list is all of /out (proto.h) */
	struct skipped_art *skipped; /* the first MAX_SKIPPED_LISTED of skipped_arts */
	size_t n_skipped;
	uint64_t skipped_why[SBX_ART_SKIP_N]; /* all of them, by reason */
	uint64_t start_seq, end_seq;
	unsigned char chain[32];
	struct egress_report net; /* what sbx-relay carried, checked (egress_record.c) */
	struct run_env env;   /* environment.h: set with START, in the result */
	/* a live session (live.c): the call's number (0: the session itself)
	 * and what the session is after it ("live", "died: memory_limit"...) */
	uint64_t cell;
	char session_state[64];
	/* --workspace (workspace.c): the manifest's digest and entries, or
	 * why there is none / why it is incomplete */
	bool cs_have;
	bool cs_said;   /* the collector's changeset word came (a manifest or a note) */
	unsigned char cs_sha256[32];
	uint64_t cs_entries;
	char cs_missing[256];
};

/* recorder.c, shared with live.c: one line to the client (a MESSAGE
 * frame); one byte to the supervisor; the fields every record has; the
 * output cap applied to data of stream st; the tail after the head; END
 * from the supervisor (or why not); the END record's fields. */
void rec_message(struct rec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rec_reply(const struct rec *c, enum sbx_rec_reply r);
void rec_fill_common(struct sbx_record *rec, const struct rec *c);
void rec_capture(struct rec *c, struct stream *st, const char *data, size_t n);
void rec_finish_tail(struct rec *c, struct stream *st);
void rec_read_end(struct rec *c);
void rec_fill_end(struct rec *c, struct sbx_record *end);
/* The artifact arrays for limits.artifacts; one artifact (name, a sealed
 * memfd, which this takes): checked, hashed, counted, sent to the client,
 * or skipped with why. */
void rec_artifacts_init(struct rec *c);
void rec_take_artifact(struct rec *c, const char *name, int fd);

/* live.c: a live session (SBX_DESC_LIVE). live_listen, before the
 * session's START: its socket, or -1 and err (the name is taken).
 * live_serve, after START: every call, each its START and END, until
 * the session ends (END from the supervisor read, pipes at EOF). */
int live_listen(const struct sbx_run_desc *d, char *err, size_t errlen);
void live_serve(struct rec *c, int lsock);

/* recorder.c: the run, from START to the result; never returns. */
_Noreturn void recorder_run(const struct sbx_run_desc *d);

/* recorder.c: what the END record and the result call the limit that
 * ended the run (its policy key), or the full tmpfs it ran into, or "". */
const char *rec_limit_name(const struct sbx_run_end *e);

/* result.c: the result JSON (docs/result.schema.json) of a recorded run.
 * The caller's reference to traceback is released on every path, NULL
 * returned included: the caller must not use or release it afterwards.
 * NULL when out of memory. */
json_t *result_json(const struct rec *c, json_t *traceback);

#endif
