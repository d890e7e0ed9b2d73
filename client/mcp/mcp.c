/* SPDX-License-Identifier: ISC */
/*
 * `sbx mcp`: the server loop and the requests (calls: mcp_call.c; lines
 * in and out: mcp_io.c). One thread, ppoll() over stdin, the running
 * children's event pipes and the progress and kill timers. Requests are
 * answered as they come; execute_code calls run concurrently (at most
 * MCP_MAX_RUNNING children, later calls wait in order), so ping, tools/list
 * and cancellation are answered while code runs. Every message goes out as
 * one write of one line (short writes continued), never interleaved.
 */
#include "mcp_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../access.h"
#include "../cli.h" /* not audit/cli.h */
#include "errcode.h"
#include "mcp_store.h"
#include "proto.h"

struct mcp_server mcp_srv;
volatile sig_atomic_t mcp_stop_signal;

const struct mcp_revision mcp_revisions[] = {
	{"2025-11-25", true, true, false, true},
	{"2025-06-18", true, true, false, false},
	{"2025-03-26", false, true, true, false},
	{"2024-11-05", false, false, false, false},
};
const size_t mcp_n_revisions = sizeof(mcp_revisions) / sizeof(mcp_revisions[0]);

const struct mcp_revision *mcp_negotiate(const char *asked)
{
	for (size_t i = 0; asked != NULL && i < mcp_n_revisions; i++)
		if (strcmp(asked, mcp_revisions[i].name) == 0)
			return &mcp_revisions[i];
	return &mcp_revisions[0];
}

static json_t *initialize_result(void)
{
	return json_pack("{s:s,s:{s:{s:b},s:{s:b,s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion",
			 mcp_srv.rev->name, "capabilities", "tools", "listChanged", 0, "resources",
			 "subscribe", 0, "listChanged", 0, "serverInfo", "name", "sbx", "title",
			 "sbx sandbox", "version", SBX_VERSION, "instructions",
			 "Use execute_code to run code in an isolated, audited sandbox. Write files "
			 "to /out to return them (images come back as images, other files as "
			 "resource links to read with resources/read); pass inputs with "
			 "`files` (read-only under /in).");
}

static void tools_call(json_t *req, json_t *id, json_t *params)
{
	json_t *name = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta"), *tok = json_object_get(meta, "progressToken");
	json_t *none;
	struct call *c, **pp;
	char err[512];

	if (!json_is_string(name)) {
		mcp_send_error(id, RPC_PARAMS, "tools/call: params.name: missing or not a string");
		return;
	}
	const char *sess = NULL;
	if (mcp_session_tool(json_string_value(name), json_is_object(args) ? args : NULL, &sess) != NULL) {
		/* after the calls of its session sent before it, in order */
		/* sbx_session_list (no name) after every call sent before it */
		if (!mcp_session_pending(NULL, sess, sess == NULL)) {
			mcp_session_call(id, json_string_value(name), json_is_object(args) ? args : NULL);
			return;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			mcp_send_error(id, -32603, "out of memory");
			return;
		}
		c->ch.pid = -1;
		c->ch.out_fd = c->ch.out_dirfd = c->ch.err_fd = -1;
		c->req = json_incref(req);
		c->id = json_incref(id);
		c->tool = json_string_value(name);
		c->a.session = sess;
		for (pp = &mcp_srv.calls; *pp != NULL; pp = &(*pp)->next)
			;
		*pp = c;
		mcp_calls_start();
		return;
	}
	if (strcmp(json_string_value(name), "execute_code") != 0 &&
	    (strcmp(json_string_value(name), "apply_changes") != 0 || mcp_workspace() == NULL)) {
		snprintf(err, sizeof(err), "Unknown tool: %.200s", json_string_value(name));
		mcp_send_error(id, RPC_PARAMS, err);
		return;
	}
	if (args != NULL && !json_is_object(args)) {
		mcp_send_error(id, RPC_PARAMS, "tools/call: params.arguments: not an object");
		return;
	}
	if (tok != NULL && !json_is_string(tok) && !json_is_integer(tok)) {
		mcp_send_error(id, RPC_PARAMS, "tools/call: params._meta.progressToken: not a string or integer");
		return;
	}
	if (mcp_calls_count(false) >= MCP_MAX_WAITING) {
		mcp_send_result(id, mcp_tool_error("sbx mcp: too many calls waiting (64); try again when some are answered"));
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		mcp_send_error(id, -32603, "out of memory");
		return;
	}
	c->ch.pid = -1;
	c->ch.out_fd = c->ch.out_dirfd = c->ch.err_fd = -1;
	none = json_object();
	if (strcmp(json_string_value(name), "apply_changes") == 0
		    ? mcp_ws_apply_check(c, args ? args : none, err, sizeof(err)) < 0
		    : mcp_args_parse(args ? args : none, &c->a, err, sizeof(err)) < 0) {
		/* 2025-11-25 (SEP-1303): bad arguments are a tool error the model
		 * can read and correct; 2025-06-18 calls them a protocol error. */
		if (!mcp_srv.rev->arg_tool_errors)
			mcp_send_error(id, RPC_PARAMS, err);
		else
			mcp_send_result(id, mcp_tool_error(err));
		json_decref(none);
		free(c);
		return;
	}
	json_decref(none); /* a call without arguments failed above: code is required */
	c->req = json_incref(req);
	c->id = json_incref(id);
	c->token = tok;
	for (pp = &mcp_srv.calls; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = c;
	mcp_calls_start();
}

/* Resource not found is -32602 with data.uri: SEP-2164, which replaced
 * the -32002 the 2025 revisions suggested (the TypeScript SDK's code). */
static void resources_read(json_t *id, json_t *params)
{
	json_t *u = json_object_get(params, "uri"), *r;
	const char *uri = json_string_value(u);

	if (uri == NULL) {
		mcp_send_error(id, RPC_PARAMS, "resources/read: params.uri: missing or not a string");
		return;
	}
	if (strlen(uri) != json_string_length(u)) {
		mcp_send_error(id, RPC_PARAMS, "resources/read: params.uri: contains a NUL character");
		return;
	}
	r = mcp_store_read(uri);
	if (r != NULL) {
		mcp_send_result(id, r);
		return;
	}
	mcp_send(json_pack("{s:s,s:O,s:{s:i,s:s,s:{s:s}}}", "jsonrpc", "2.0", "id", id, "error", "code",
			   RPC_PARAMS, "message", "Resource not found (artifacts are kept while the server runs, "
			   "the oldest dropped first beyond --keep-artifacts)", "data", "uri", uri));
}

static void cancel_request(json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct call *c;

	for (c = mcp_srv.calls; c != NULL; c = c->next)
		if (rid != NULL && json_equal(c->id, rid))
			mcp_call_kill(c);
}

static bool valid_id(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static void on_request(json_t *req)
{
	json_t *id = json_object_get(req, "id"), *params = json_object_get(req, "params");
	const char *method = json_string_value(json_object_get(req, "method"));
	const char *v = json_string_value(json_object_get(req, "jsonrpc"));

	if (!json_is_object(req)) {
		mcp_send_error(NULL, RPC_INVALID, json_is_array(req) ? "batches are not supported" : "not a JSON-RPC object");
		return;
	}
	if (method == NULL && id != NULL && (json_object_get(req, "result") || json_object_get(req, "error")))
		return; /* a response: this server sends no requests, so nothing to match */
	if (v == NULL || strcmp(v, "2.0") != 0 || method == NULL || (id != NULL && !valid_id(id))) {
		mcp_send_error(valid_id(id) ? id : NULL, RPC_INVALID,
			   "invalid request: needs \"jsonrpc\": \"2.0\", a string \"method\" and a string or integer \"id\"");
		return;
	}
	if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			mcp_send_error(id, RPC_PARAMS, "params: not an object");
		return;
	}
	if (id == NULL) { /* a notification: never answered */
		if (strcmp(method, "notifications/initialized") == 0)
			mcp_srv.initialized = true;
		else if (strcmp(method, "notifications/cancelled") == 0)
			cancel_request(params);
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
		if (asked == NULL) {
			mcp_send_error(id, RPC_PARAMS, "initialize: params.protocolVersion: missing or not a string");
			return;
		}
		mcp_srv.rev = mcp_negotiate(asked);
		mcp_send_result(id, initialize_result());
	} else if (strcmp(method, "ping") == 0) {
		mcp_send_result(id, json_object());
	} else if (strcmp(method, "tools/list") == 0) {
		json_t *tools = json_pack("[o]", mcp_tool_def(mcp_srv.rev));
		mcp_session_tool_defs(tools);
		mcp_ws_tool_defs(tools, mcp_srv.rev);
		mcp_send_result(id, json_pack("{s:o}", "tools", tools));
	} else if (strcmp(method, "tools/call") == 0) {
		tools_call(req, id, params);
	} else if (strcmp(method, "resources/list") == 0) {
		mcp_send_result(id, mcp_store_list());
	} else if (strcmp(method, "resources/templates/list") == 0) {
		mcp_send_result(id, json_pack("{s:[]}", "resourceTemplates"));
	} else if (strcmp(method, "resources/read") == 0) {
		resources_read(id, params);
	} else {
		char msg[256];
		snprintf(msg, sizeof(msg), "Method not found: %.200s", method);
		mcp_send_error(id, RPC_METHOD, msg);
	}
}

/* One line: a request or notification, or under 2025-03-26 (which
 * requires accepting them) a batch. Each member of a batch is handled as
 * if it came alone and answered as its own message: a tool call is
 * answered when its run ends, so one array holding every answer
 * (JSON-RPC 2.0, Batch) would hold the others back. */
static void on_message(json_t *msg)
{
	size_t i;
	json_t *m;

	if (!json_is_array(msg) || !mcp_srv.rev->batches || json_array_size(msg) == 0) {
		on_request(msg);
		return;
	}
	json_array_foreach(msg, i, m) {
		if (json_is_array(m))
			mcp_send_error(NULL, RPC_INVALID, "a batch inside a batch");
		else
			on_request(m);
	}
}

static void request_line(void *arg, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req;
	char msg[300];

	(void)arg;
	if (line == NULL) {
		mcp_send_error(NULL, RPC_PARSE, "Parse error: message longer than 64 MiB");
		return;
	}
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return; /* blank lines between messages are harmless */
	req = json_loadb(line, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (req == NULL) {
		snprintf(msg, sizeof(msg), "Parse error: %s (column %d)", jerr.text, jerr.column);
		mcp_send_error(NULL, RPC_PARSE, msg);
		return;
	}
	on_message(req);
	json_decref(req);
}

static void read_stdin(void)
{
	char buf[65536];
	ssize_t n = read(0, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (n < 0) {
			fprintf(stderr, "sbx: mcp: standard input: %s\n", strerror(errno));
			mcp_srv.in_failed = true;
		}
		mcp_srv.stdin_eof = true;
		if (mcp_srv.in.len > 0 && !mcp_srv.in.skipping)
			mcp_feed_lines(&mcp_srv.in, "\n", 1, LINE_MAX_BYTES, request_line, NULL); /* a last line without newline */
		return;
	}
	mcp_feed_lines(&mcp_srv.in, buf, (size_t)n, LINE_MAX_BYTES, request_line, NULL);
}

static void on_signal(int sig)
{
	mcp_stop_signal = sig;
}

int mcp_serve(uint64_t keep_bytes)
{
	struct sigaction sa;
	sigset_t block, old;
	char why[512];
	const char *code = helper_access(why, sizeof(why));

	/* Every call would fail: say why once, before a client connects. */
	if (code != NULL) {
		const struct sbx_errcode *e = sbx_errcode_find(code);
		fprintf(stderr, "sbx mcp: cannot run sandboxes: %s\n", why);
		return e != NULL && e->exit_status > 0 ? e->exit_status : SBX_EXIT_FAILURE;
	}
	memset(&mcp_srv, 0, sizeof(mcp_srv));
	mcp_srv.rev = &mcp_revisions[0];
	mcp_store_init(keep_bytes);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL); /* inherited SIG_IGN would reap the children for us */
	/* Signals are only taken inside ppoll(), so none is lost between a
	 * check of mcp_stop_signal and the wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigdelset(&old, SIGTERM);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGHUP);

	for (;;) {
		struct pollfd p[1 + MCP_MAX_RUNNING];
		struct call *owner[1 + MCP_MAX_RUNNING], *c;
		int np = 0, ms, r, i;
		struct timespec ts, *tsp = NULL;

		if (mcp_stop_signal || mcp_srv.out_broken) {
			for (c = mcp_srv.calls; c != NULL; c = c->next)
				mcp_call_kill(c);
			mcp_srv.stdin_eof = true;
		}
		mcp_calls_drop();
		if (mcp_srv.stdin_eof && mcp_srv.calls == NULL)
			break;
		if (!mcp_srv.stdin_eof) {
			owner[np] = NULL;
			p[np++] = (struct pollfd){.fd = 0, .events = POLLIN};
		}
		for (c = mcp_srv.calls; c != NULL && np < 1 + MCP_MAX_RUNNING; c = c->next)
			if (c->running) {
				owner[np] = c;
				p[np++] = (struct pollfd){.fd = c->ch.out_fd, .events = POLLIN};
			}
		ms = mcp_calls_timeout();
		if (ms >= 0) {
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000;
			tsp = &ts;
		}
		r = ppoll(p, (nfds_t)np, tsp, &old);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "sbx: mcp: poll: %s\n", strerror(errno));
			mcp_store_close();
			return SBX_EXIT_FAILURE;
		}
		if (r > 0) {
			for (i = 0; i < np; i++) {
				if (!p[i].revents)
					continue;
				if (owner[i] == NULL)
					read_stdin();
				else
					mcp_call_read(owner[i]); /* may free the call */
			}
		}
		mcp_calls_timers();
		mcp_calls_start();
	}
	free(mcp_srv.in.buf);
	mcp_store_close();
	mcp_session_end_all();
	return mcp_srv.out_broken || mcp_srv.in_failed ? SBX_EXIT_FAILURE : 0;
}
