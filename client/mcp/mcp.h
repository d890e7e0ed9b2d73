/* SPDX-License-Identifier: ISC */
/*
 * `sbx mcp`: a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0,
 * one message per line) with one tool, execute_code. Each call runs as a
 * child `sbx run --jsonl` (this binary, re-executed), so every run is as
 * isolated and audited as a command-line run; the server only translates.
 * See sbx(1), MCP SERVER.
 */
#ifndef SBX_CLIENT_MCP_H
#define SBX_CLIENT_MCP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "proto.h"

/*
 * The protocol revisions spoken (modelcontextprotocol.io/specification/REV),
 * newest first, with what each adds that this server uses. A client on an
 * older revision gets what that revision defines and nothing newer: no
 * title, outputSchema or structuredContent before 2025-06-18 (the result
 * JSON is then the last text block, as 2025-06-18 recommends for
 * compatibility), artifacts that are not embedded images as a text block
 * naming their sbx:// URI instead of a resource_link, no tool annotations
 * and no progress message before 2025-03-26.
 */
struct mcp_revision {
	const char *name;
	bool structured;       /* 2025-06-18: title, outputSchema, structuredContent, resource_link */
	bool annotations;      /* 2025-03-26: tool annotations, progress "message" */
	bool batches;          /* 2025-03-26 only: JSON-RPC batches must be accepted */
	bool arg_tool_errors;  /* 2025-11-25 (SEP-1303): bad tool arguments are a tool error */
};
extern const struct mcp_revision mcp_revisions[];
extern const size_t mcp_n_revisions;
#define MCP_VERSION_NEWEST (mcp_revisions[0].name)

/* Runs at the same time; further calls wait in arrival order, at most
 * MCP_MAX_WAITING of them (then a call is refused as a tool error). */
#define MCP_MAX_RUNNING 4
#define MCP_MAX_WAITING 64

/* Embedded image data per call, before base64; an image that does not
 * fit becomes a resource link like the other artifacts. */
#define MCP_EMBED_MAX (16u << 20)

/* Serve until stdin ends and every call has been answered, or a signal
 * (SIGTERM, SIGINT, SIGHUP) or a closed stdout stops it; keep_bytes is
 * the artifact store's capacity (mcp_store.h). First checks that the
 * caller may run the helper (access.h): if not, one line on stderr saying
 * why and the exit status of its error code (77 not in group sbx, 125).
 * Returns the exit status: 0, or 125 when stdin or stdout failed. */
int mcp_serve(uint64_t keep_bytes);

/* The revision to answer initialize with (lifecycle, "Version
 * Negotiation"): the client's if spoken here, else the newest (the client
 * then decides whether to go on). Never NULL. */
const struct mcp_revision *mcp_negotiate(const char *asked);

/* One of `files`: content decoded, to be put under /in as name. */
struct mcp_file {
	const char *name;    /* borrowed from the request */
	unsigned char *data; /* malloc'ed */
	size_t len;
};

/* execute_code's arguments, checked. Strings are borrowed from the
 * request JSON, which must outlive this. */
struct mcp_args {
	const char *code;
	size_t code_len;
	const char *lang;    /* "python" when not given */
	const char *policy;  /* NULL: the configured default */
	uint64_t timeout_ms; /* 0: the policy's */
	const char *session; /* NULL: none */
	struct mcp_file *files;
	size_t nfiles;
};

#define MCP_FILES_MAX SBX_MAX_INPUTS /* what sbx run --input takes */

/*
 * Check the arguments object of a tools/call against the input schema
 * (mcp_tool_def). Returns 0, or -1 with one line in err naming the
 * argument and why (nothing to free then).
 */
int mcp_args_parse(json_t *args, struct mcp_args *a, char *err, size_t errlen);
void mcp_args_free(struct mcp_args *a);

/* The tools/list entry of execute_code: name, description, inputSchema,
 * outputSchema, annotations. New reference. */
json_t *mcp_tool_def(const struct mcp_revision *rev);

/*
 * The CallToolResult for a run's result JSON (consumed; "path" members of
 * its artifacts are removed since the files go away): structuredContent,
 * content (the error's traceback or "type: message", stdout, stderr, a
 * summary line, then the
 * artifacts read from dirfd: PNG and JPEG as images, at most MCP_EMBED_MAX
 * bytes together, others as resource links to files moved into the store,
 * mcp_store.h), isError unless the outcome is "ok". dirfd -1: no artifact
 * files. New reference.
 */
json_t *mcp_tool_result(json_t *result, int dirfd);

/* Default of `sbx mcp --max-text`: bytes of each of stdout and stderr in
 * a result's text block and structuredContent (head and tail). */
#define MCP_MAX_TEXT_DEFAULT (32u << 10)
/* Set that bound (at least 256 bytes). */
void mcp_set_max_text(size_t bytes);

/* sbx mcp --workspace DIR: execute_code's runs get --workspace DIR (the
 * absolute path; dies with one line when DIR is not a directory), and
 * apply_changes is offered. mcp_workspace(): that path, or NULL. */
void mcp_set_workspace(const char *dir);
const char *mcp_workspace(void);

/* A CallToolResult with isError and one text block. New reference. */
json_t *mcp_tool_error(const char *msg);

#endif
