/*
 * `sbx mcp`: the server loop. One thread, poll() over stdin, the running
 * children's event pipes and a one-second progress timer. Requests are
 * answered as they come; execute_code calls run concurrently (at most
 * MCP_MAX_RUNNING children, later calls wait in order), so ping, tools/list
 * and cancellation are answered while code runs. Every message goes out as
 * one write of one line (short writes continued), never interleaved.
 */
#include "mcp.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcp_child.h"
#include "proto.h"

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

struct call {
	struct call *next;
	json_t *id;        /* request id */
	json_t *args;      /* arguments object (the request keeps the strings) */
	json_t *req;
	json_t *token;     /* progressToken, or NULL */
	bool running, cancelled, killed;
	struct mcp_args a;
	struct mcp_child ch;
	struct linebuf lb;
	json_t *result;    /* from the result event */
	long long start, last_note, kill_at;
	double progress;
	char recent[160];  /* the end of the latest output, for the note */
	bool note_due;
};

static struct {
	struct call *calls;
	const char *version;
	bool initialized, stdin_eof, in_failed, out_broken;
	struct linebuf in;
} srv;

static volatile sig_atomic_t stop_signal;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *mcp_negotiate(const char *asked)
{
	if (asked != NULL && (strcmp(asked, MCP_VERSION_NEWEST) == 0 || strcmp(asked, MCP_VERSION_OLDEST) == 0))
		return strcmp(asked, MCP_VERSION_NEWEST) == 0 ? MCP_VERSION_NEWEST : MCP_VERSION_OLDEST;
	return MCP_VERSION_NEWEST;
}

/* Send one message (consumed) as one line. A failed write (the client
 * closed its end: EPIPE, SIGPIPE being ignored) stops the server. */
static void send_msg(json_t *m)
{
	char *text = m ? json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12)) : NULL;
	size_t len, off = 0;

	json_decref(m);
	if (text == NULL || srv.out_broken) {
		free(text);
		return;
	}
	len = strlen(text);
	text[len] = '\n'; /* the NUL goes: len + 1 bytes are written */
	while (off < len + 1) {
		ssize_t n = write(1, text + off, len + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			srv.out_broken = true;
			break;
		}
		off += (size_t)n;
	}
	free(text);
}

static void send_error(json_t *id, int code, const char *msg)
{
	send_msg(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			   "code", code, "message", msg));
}

static void send_result(json_t *id, json_t *result)
{
	send_msg(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* ---- progress ---- */

static void send_note(struct call *c)
{
	long long now = now_ms();
	double elapsed = (double)(now - c->start) / 1000.0;
	char msg[256];

	if (c->token == NULL || c->cancelled)
		return;
	/* progress MUST increase with every notification */
	c->progress = elapsed > c->progress ? elapsed : c->progress + 0.001;
	if (c->recent[0] != '\0')
		snprintf(msg, sizeof(msg), "running for %.0f s; output: %s", elapsed, c->recent);
	else
		snprintf(msg, sizeof(msg), "running for %.0f s", elapsed);
	send_msg(json_pack("{s:s,s:s,s:{s:O,s:f,s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
			   "params", "progressToken", c->token, "progress", c->progress, "message", msg));
	c->last_note = now;
	c->note_due = false;
}

/* Keep the last line of output (up to sizeof(recent) - 1 bytes, cut at a
 * character boundary) for the next note. */
static void remember_output(struct call *c, const char *data)
{
	size_t len = strlen(data), start;
	const char *end = data + len;

	while (end > data && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	start = (size_t)(end - data) > sizeof(c->recent) - 1 ? (size_t)(end - data) - (sizeof(c->recent) - 1) : 0;
	while (start > 0 && ((unsigned char)data[start] & 0xC0) == 0x80)
		start++;
	if (end - (data + start) <= 0)
		return;
	snprintf(c->recent, sizeof(c->recent), "%.*s", (int)(end - (data + start)), data + start);
	for (char *p = c->recent; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	c->note_due = true;
}

/* ---- calls ---- */

static void call_free(struct call *c)
{
	mcp_args_free(&c->a);
	json_decref(c->id);
	json_decref(c->req);
	json_decref(c->result);
	free(c->lb.buf);
	free(c);
}

static void unlink_call(struct call *c)
{
	struct call **pp;

	for (pp = &srv.calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

static void start_call(struct call *c)
{
	char err[512];

	c->running = true;
	c->start = c->last_note = now_ms();
	if (mcp_child_start(&c->a, &c->ch, err, sizeof(err)) < 0) {
		c->ch.pid = -1;
		send_result(c->id, mcp_tool_error(err));
		c->running = false;
		c->cancelled = true; /* answered: just drop it */
	}
}

/* Children running (cancelled ones too: they still take a process), or
 * calls waiting to run. */
static size_t count_calls(bool running)
{
	struct call *c;
	size_t n = 0;

	for (c = srv.calls; c != NULL; c = c->next)
		n += running ? c->running : !c->running && !c->cancelled;
	return n;
}

static void start_waiting(void)
{
	struct call *c;

	for (c = srv.calls; c != NULL && count_calls(true) < MCP_MAX_RUNNING; c = c->next)
		if (!c->running && !c->cancelled && !srv.out_broken && !stop_signal)
			start_call(c);
}

/* One line of the child's output: a JSONL event (events.h). */
static void on_event(struct call *c, const char *line, size_t len)
{
	json_t *e = json_loadb(line, len, 0, NULL);
	const char *ev = json_string_value(json_object_get(e, "event"));

	if (ev != NULL && strcmp(ev, "result") == 0 && json_is_object(json_object_get(e, "result"))) {
		json_decref(c->result);
		c->result = json_incref(json_object_get(e, "result"));
	} else if (ev != NULL && (strcmp(ev, "stdout") == 0 || strcmp(ev, "stderr") == 0)) {
		const char *data = json_string_value(json_object_get(e, "data"));
		if (data != NULL)
			remember_output(c, data);
		if (c->note_due && now_ms() - c->last_note >= NOTE_MIN_MS)
			send_note(c);
	}
	json_decref(e);
}

/* Append bytes to lb; call fn for every complete line. Lines over max
 * are dropped whole; fn gets (NULL, 0) once for each. */
static void feed_lines(struct linebuf *lb, const char *buf, size_t n, size_t max,
		       void (*fn)(void *, const char *, size_t), void *arg)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;

		if (!lb->skipping && lb->len + take > max) {
			lb->skipping = true;
			lb->len = 0;
			fn(arg, NULL, 0);
		}
		if (!lb->skipping) {
			if (lb->len + take + 1 > lb->cap) {
				size_t cap = (lb->len + take + 1) * 2;
				if (cap > max + 1)
					cap = max + 1;
				char *p = realloc(lb->buf, cap);
				if (p == NULL) {
					lb->skipping = true;
					lb->len = 0;
					fn(arg, NULL, 0);
					continue;
				}
				lb->buf = p;
				lb->cap = cap;
			}
			memcpy(lb->buf + lb->len, buf, take);
			lb->len += take;
		}
		if (nl == NULL)
			return;
		if (!lb->skipping) {
			lb->buf[lb->len] = '\0';
			fn(arg, lb->buf, lb->len);
		}
		lb->skipping = false;
		lb->len = 0;
		buf = nl + 1;
		n -= take + 1;
	}
}

static void event_line(void *arg, const char *line, size_t len)
{
	if (line != NULL)
		on_event(arg, line, len);
}

static void finish_call(struct call *c)
{
	int status = 0;
	json_t *res;
	char msg[256];

	while (waitpid(c->ch.pid, &status, 0) < 0 && errno == EINTR)
		;
	if (c->cancelled) {
		/* a cancelled request gets no response (MCP: cancellation) */
	} else if (c->result != NULL) {
		res = mcp_tool_result(c->result, c->ch.out_dirfd);
		c->result = NULL;
		send_result(c->id, res);
	} else {
		if (WIFSIGNALED(status))
			snprintf(msg, sizeof(msg), "sbx run was killed by signal %d without a result", WTERMSIG(status));
		else
			snprintf(msg, sizeof(msg), "sbx run exited with status %d without a result", WEXITSTATUS(status));
		send_result(c->id, mcp_tool_error(msg));
	}
	mcp_child_cleanup(&c->ch);
	unlink_call(c);
	call_free(c);
}

/* At most 16 reads (1 MiB) per wake-up, so that a program writing
 * without pause cannot keep stdin and the other runs waiting. */
static void read_child(struct call *c)
{
	char buf[65536];
	int i;

	for (i = 0; i < 16; i++) {
		ssize_t n = read(c->ch.out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			finish_call(c);
			return;
		}
		feed_lines(&c->lb, buf, (size_t)n, EVENT_MAX_BYTES, event_line, c);
	}
}

/* Stop a run nobody waits for: SIGTERM to sbx run (passed on to the
 * program), SIGKILL after a grace period (its helper then kills the
 * sandbox when the control pipe closes). */
static void kill_call(struct call *c)
{
	c->cancelled = true;
	if (!c->running || c->ch.pid <= 0 || c->killed)
		return;
	kill(c->ch.pid, SIGTERM);
	c->killed = true;
	c->kill_at = now_ms() + KILL_GRACE_MS;
}

/* ---- requests ---- */

static json_t *initialize_result(void)
{
	return json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", srv.version,
			 "capabilities", "tools", "listChanged", 0, "serverInfo", "name", "sbx", "title",
			 "sbx sandbox", "version", SBX_VERSION, "instructions",
			 "Use execute_code to run code in an isolated, audited sandbox. Write files "
			 "to /out to return them (images come back as images); pass inputs with "
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
		send_error(id, RPC_PARAMS, "tools/call: params.name: missing or not a string");
		return;
	}
	if (strcmp(json_string_value(name), "execute_code") != 0) {
		snprintf(err, sizeof(err), "Unknown tool: %.200s", json_string_value(name));
		send_error(id, RPC_PARAMS, err);
		return;
	}
	if (args != NULL && !json_is_object(args)) {
		send_error(id, RPC_PARAMS, "tools/call: params.arguments: not an object");
		return;
	}
	if (tok != NULL && !json_is_string(tok) && !json_is_integer(tok)) {
		send_error(id, RPC_PARAMS, "tools/call: params._meta.progressToken: not a string or integer");
		return;
	}
	if (count_calls(false) >= MCP_MAX_WAITING) {
		send_result(id, mcp_tool_error("sbx mcp: too many calls waiting (64); try again when some are answered"));
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		send_error(id, -32603, "out of memory");
		return;
	}
	c->ch.pid = -1;
	c->ch.out_fd = c->ch.out_dirfd = -1;
	none = json_object();
	if (mcp_args_parse(args ? args : none, &c->a, err, sizeof(err)) < 0) {
		/* 2025-11-25 (SEP-1303): bad arguments are a tool error the model
		 * can read and correct; 2025-06-18 calls them a protocol error. */
		if (strcmp(srv.version, MCP_VERSION_OLDEST) == 0)
			send_error(id, RPC_PARAMS, err);
		else
			send_result(id, mcp_tool_error(err));
		json_decref(none);
		free(c);
		return;
	}
	json_decref(none); /* a call without arguments failed above: code is required */
	c->req = json_incref(req);
	c->id = json_incref(id);
	c->token = tok;
	for (pp = &srv.calls; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = c;
	start_waiting();
}

static void cancel_request(json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct call *c;

	for (c = srv.calls; c != NULL; c = c->next)
		if (rid != NULL && json_equal(c->id, rid))
			kill_call(c);
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
		send_error(NULL, RPC_INVALID, json_is_array(req) ? "batches are not supported" : "not a JSON-RPC object");
		return;
	}
	if (method == NULL && id != NULL && (json_object_get(req, "result") || json_object_get(req, "error")))
		return; /* a response: this server sends no requests, so nothing to match */
	if (v == NULL || strcmp(v, "2.0") != 0 || method == NULL || (id != NULL && !valid_id(id))) {
		send_error(valid_id(id) ? id : NULL, RPC_INVALID,
			   "invalid request: needs \"jsonrpc\": \"2.0\", a string \"method\" and a string or integer \"id\"");
		return;
	}
	if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			send_error(id, RPC_PARAMS, "params: not an object");
		return;
	}
	if (id == NULL) { /* a notification: never answered */
		if (strcmp(method, "notifications/initialized") == 0)
			srv.initialized = true;
		else if (strcmp(method, "notifications/cancelled") == 0)
			cancel_request(params);
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
		if (asked == NULL) {
			send_error(id, RPC_PARAMS, "initialize: params.protocolVersion: missing or not a string");
			return;
		}
		srv.version = mcp_negotiate(asked);
		send_result(id, initialize_result());
	} else if (strcmp(method, "ping") == 0) {
		send_result(id, json_object());
	} else if (strcmp(method, "tools/list") == 0) {
		send_result(id, json_pack("{s:[o]}", "tools", mcp_tool_def()));
	} else if (strcmp(method, "tools/call") == 0) {
		tools_call(req, id, params);
	} else {
		char msg[256];
		snprintf(msg, sizeof(msg), "Method not found: %.200s", method);
		send_error(id, RPC_METHOD, msg);
	}
}

static void request_line(void *arg, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req;
	char msg[300];

	(void)arg;
	if (line == NULL) {
		send_error(NULL, RPC_PARSE, "Parse error: message longer than 64 MiB");
		return;
	}
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return; /* blank lines between messages are harmless */
	req = json_loadb(line, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (req == NULL) {
		snprintf(msg, sizeof(msg), "Parse error: %s (column %d)", jerr.text, jerr.column);
		send_error(NULL, RPC_PARSE, msg);
		return;
	}
	on_request(req);
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
			srv.in_failed = true;
		}
		srv.stdin_eof = true;
		if (srv.in.len > 0 && !srv.in.skipping)
			feed_lines(&srv.in, "\n", 1, LINE_MAX_BYTES, request_line, NULL); /* a last line without newline */
		return;
	}
	feed_lines(&srv.in, buf, (size_t)n, LINE_MAX_BYTES, request_line, NULL);
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int poll_timeout(void)
{
	long long now = now_ms(), t = -1;
	struct call *c;

	for (c = srv.calls; c != NULL; c = c->next) {
		long long due = -1;
		if (!c->running)
			continue;
		if (c->killed)
			due = c->kill_at;
		else if (c->token != NULL && !c->cancelled)
			due = c->last_note + (c->note_due ? NOTE_MIN_MS : NOTE_EVERY_MS);
		if (due >= 0 && (t < 0 || due < t))
			t = due;
	}
	if (t < 0)
		return -1;
	return t <= now ? 0 : (int)(t - now);
}

static void timers(void)
{
	long long now = now_ms();
	struct call *c;

	for (c = srv.calls; c != NULL; c = c->next) {
		if (!c->running)
			continue;
		if (c->killed && now >= c->kill_at) {
			kill(c->ch.pid, SIGKILL);
			c->kill_at = now + 3600000;
		} else if (!c->killed && c->token != NULL &&
			   now - c->last_note >= (c->note_due ? NOTE_MIN_MS : NOTE_EVERY_MS)) {
			send_note(c);
		}
	}
}

static void drop_finished(void)
{
	struct call *c = srv.calls, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		if (!c->running && c->cancelled) {
			unlink_call(c);
			call_free(c);
		}
	}
}

int mcp_serve(void)
{
	struct sigaction sa;
	sigset_t block, old;

	memset(&srv, 0, sizeof(srv));
	srv.version = MCP_VERSION_NEWEST;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL); /* inherited SIG_IGN would reap the children for us */
	/* Signals are only taken inside ppoll(), so none is lost between a
	 * check of stop_signal and the wait. */
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

		if (stop_signal || srv.out_broken) {
			for (c = srv.calls; c != NULL; c = c->next)
				kill_call(c);
			srv.stdin_eof = true;
		}
		drop_finished();
		if (srv.stdin_eof && srv.calls == NULL)
			break;
		if (!srv.stdin_eof) {
			owner[np] = NULL;
			p[np++] = (struct pollfd){.fd = 0, .events = POLLIN};
		}
		for (c = srv.calls; c != NULL && np < 1 + MCP_MAX_RUNNING; c = c->next)
			if (c->running) {
				owner[np] = c;
				p[np++] = (struct pollfd){.fd = c->ch.out_fd, .events = POLLIN};
			}
		ms = poll_timeout();
		if (ms >= 0) {
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000;
			tsp = &ts;
		}
		r = ppoll(p, (nfds_t)np, tsp, &old);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "sbx: mcp: poll: %s\n", strerror(errno));
			return SBX_EXIT_FAILURE;
		}
		if (r > 0) {
			for (i = 0; i < np; i++) {
				if (!p[i].revents)
					continue;
				if (owner[i] == NULL)
					read_stdin();
				else
					read_child(owner[i]); /* may free the call */
			}
		}
		timers();
		start_waiting();
	}
	free(srv.in.buf);
	return srv.out_broken || srv.in_failed ? SBX_EXIT_FAILURE : 0;
}
