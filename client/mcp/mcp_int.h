/* SPDX-License-Identifier: ISC */
/* Inside `sbx mcp`: the state shared by the request loop (mcp.c), the
 * calls and their children (mcp_call.c) and message framing (mcp_io.c). */
#ifndef SBX_CLIENT_MCP_INT_H
#define SBX_CLIENT_MCP_INT_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "clock.h"
#include "mcp.h"
#include "mcp_child.h"

#define LINE_MAX_BYTES (64u << 20) /* a request: 4 MiB of code plus files */
#define EVENT_MAX_BYTES (64u << 20) /* a result event, escaped output included */
#define NOTE_EVERY_MS 1000
#define NOTE_MIN_MS 100            /* output notes at most this often */
#define KILL_GRACE_MS 2000         /* SIGTERM to the child, then SIGKILL */

enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_METHOD = -32601, RPC_PARAMS = -32602 };

struct linebuf {
	char *buf;
	size_t len, cap;
	bool skipping; /* an over-long line: drop bytes up to its newline */
};

enum call_kind {
	CALL_RUN,     /* execute_code's sbx run --jsonl */
	CALL_CHANGES, /* then, for a run that left a changeset, its sbx changes --json --diff */
	CALL_APPLY,   /* apply_changes: sbx apply --json */
};

/* One tools/call of execute_code or apply_changes: waiting, then running
 * as a child. */
struct call {
	struct call *next;
	json_t *id;        /* request id */
	json_t *req;       /* the request: a's strings point into it */
	json_t *token;     /* progressToken, or NULL */
	bool running, cancelled, killed;
	const char *tool;  /* a session tool (mcp_session.c) waiting for its session's calls, or NULL */
	struct mcp_args a;
	struct mcp_child ch;
	struct linebuf lb;
	json_t *result;    /* from the result event */
	long long start, last_note, kill_at;
	double progress;
	char recent[160];  /* the end of the latest output, for the note */
	bool note_due;
	enum call_kind kind;
	char cs_id[65];    /* CALL_CHANGES, CALL_APPLY: the changeset */
	json_t *only;      /* CALL_APPLY: the paths (borrowed from req), or NULL */
	char *raw;         /* CALL_CHANGES, CALL_APPLY: the child's stdout, at most RAW_MAX bytes */
	size_t raw_len;
};
#define RAW_MAX (64u << 20)

struct mcp_server {
	struct call *calls;
	const struct mcp_revision *rev; /* negotiated at initialize */
	bool initialized, stdin_eof, in_failed, out_broken;
	struct linebuf in;
};
extern struct mcp_server mcp_srv;

extern volatile sig_atomic_t mcp_stop_signal; /* the signal that asked the server to stop, or 0 */

/* mcp_io.c */
/* Send one message (consumed) as one line on stdout; a failed write sets
 * mcp_srv.out_broken and later messages are dropped. */
void mcp_send(json_t *m);
void mcp_send_error(json_t *id, int code, const char *msg); /* id NULL: null */
void mcp_send_result(json_t *id, json_t *result);             /* result consumed */
/* mcp_session.c: the live-session tools (appended to tools), a call of one
 * of them (false: not one of them), execute_code's first use of a session */
void mcp_session_tool_defs(json_t *tools);
bool mcp_session_call(json_t *id, const char *tool, json_t *args);
/* a session tool's name (its session in *name), or NULL for another tool */
const char *mcp_session_tool(const char *tool, json_t *args, const char **name);
/* an earlier call of session name (any: any earlier call) is running or
 * waiting (mcp_call.c) */
bool mcp_session_pending(const struct call *before, const char *name, bool any);
void mcp_session_first_use(const struct mcp_args *a);
/* At the server's end: stop the live sessions it started (a kernel ends
 * with its notebook server); sessions started with sbx session start stay. */
void mcp_session_end_all(void);
/* Append n bytes to lb and call fn(arg, line, len) for every complete line
 * (NUL-terminated, without its newline). A line over max bytes is dropped
 * whole and fn gets (arg, NULL, 0) once for it. */
void mcp_feed_lines(struct linebuf *lb, const char *buf, size_t n, size_t max,
		    void (*fn)(void *, const char *, size_t), void *arg);

/* mcp_child.c */
#define MCP_TMPDIR_MAX 480 /* longer TMPDIR values are not used */
/* TMPDIR as mktemp(1) takes it (absolute, at most MCP_TMPDIR_MAX bytes),
 * else "/tmp": the calls' directories and the artifact store, one file
 * system so that artifacts can be renamed from one to the other. */
const char *mcp_tmpdir(void);

/* mcp_result.c */
/* The regular file name in dirfd ("/", "." and ".." refused), at most max
 * bytes, in a buffer of n + 1 bytes (malloc'ed); NULL with why set. */
unsigned char *mcp_read_artifact(int dirfd, const char *name, size_t max, size_t *n, const char **why);
/* A resource contents object {uri, mimeType, text | blob}: text when mime
 * is a text type and d (n bytes, room for a NUL after) is UTF-8, else
 * base64. New reference, NULL when out of memory. */
json_t *mcp_resource_contents(const char *uri, const char *mime, unsigned char *d, size_t n);

/* mcp_workspace.c (sbx mcp --workspace) */
/* After c's run: when its result names a changeset, remember it (for
 * apply_changes) and start `sbx changes ID --json --diff` as c's child
 * (c->kind becomes CALL_CHANGES): true; false when there is none or it
 * did not start (the result's changeset then says why). */
bool mcp_ws_changes_start(struct call *c);
/* The entries (the first 100) and the diff from c->raw into c->result's
 * changeset; or review_error with why (the child's stderr). */
void mcp_ws_changes_merge(struct call *c, int status);
/* apply_changes in tools (only with a workspace) */
void mcp_ws_tool_defs(json_t *tools, const struct mcp_revision *rev);
/* apply_changes's arguments into c (kind CALL_APPLY): 0, or -1 with one
 * line in err (no workspace, an id this server did not propose, bad only) */
int mcp_ws_apply_check(struct call *c, json_t *args, char *err, size_t errlen);
int mcp_ws_apply_start(struct call *c, char *err, size_t errlen);
/* The CallToolResult of c's finished sbx apply; isError unless applied */
json_t *mcp_ws_apply_result(struct call *c, int status);
size_t mcp_max_text(void); /* mcp_result.c: --max-text */

/* mcp_call.c */
size_t mcp_calls_count(bool running); /* children running, or calls waiting */
void mcp_calls_start(void);           /* start waiting calls while there is room */
void mcp_call_read(struct call *c);   /* its pipe is readable; may free c */
void mcp_call_kill(struct call *c);   /* cancel: no answer, the run stopped */
int mcp_calls_timeout(void);          /* ms to the next timer, -1: none */
void mcp_calls_timers(void);          /* progress notes and SIGKILLs due */
void mcp_calls_drop(void);            /* free cancelled calls that are not running */

#endif
