/* SPDX-License-Identifier: ISC */
/* `sbx mcp`: execute_code and apply_changes calls, from waiting through
 * their child (`sbx run --jsonl`, then for a workspace run `sbx changes`;
 * `sbx apply`) and its progress to the answer. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp_int.h"

static void send_note(struct call *c)
{
	long long now = sbx_mono_ms();
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
	mcp_send(json_pack("{s:s,s:s,s:{s:O,s:f,s:s*}}", "jsonrpc", "2.0", "method", "notifications/progress",
			   "params", "progressToken", c->token, "progress", c->progress, "message",
			   mcp_srv.rev->annotations ? msg : NULL));
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

static void call_free(struct call *c)
{
	mcp_args_free(&c->a);
	json_decref(c->id);
	json_decref(c->req);
	json_decref(c->result);
	free(c->lb.buf);
	free(c->raw);
	free(c);
}

static void unlink_call(struct call *c)
{
	struct call **pp;

	for (pp = &mcp_srv.calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

static void start_call(struct call *c)
{
	char err[512];

	c->running = true;
	c->start = c->last_note = sbx_mono_ms();
	if (c->kind == CALL_RUN)
		mcp_session_first_use(&c->a);
	if ((c->kind == CALL_APPLY ? mcp_ws_apply_start(c, err, sizeof(err)) : mcp_child_start(&c->a, &c->ch, err, sizeof(err))) < 0) {
		c->ch.pid = -1;
		mcp_send_result(c->id, mcp_tool_error(err));
		c->running = false;
		c->cancelled = true; /* answered: just drop it */
	}
}

/* Children running (cancelled ones too: they still take a process), or
 * calls waiting to run. */
size_t mcp_calls_count(bool running)
{
	struct call *c;
	size_t n = 0;

	for (c = mcp_srv.calls; c != NULL; c = c->next)
		n += running ? c->running : !c->running && !c->cancelled;
	return n;
}

/* An earlier call of session name, running or waiting (before: the call
 * to look before, NULL for all): a session's calls and session tools run
 * one after the other, in the order they came (a live interpreter's state
 * depends on it). */
bool mcp_session_pending(const struct call *before, const char *name, bool any)
{
	for (const struct call *e = mcp_srv.calls; e != NULL && e != before; e = e->next)
		if (!e->cancelled && (any || (e->a.session != NULL && name != NULL && strcmp(e->a.session, name) == 0)))
			return true;
	return false;
}

/* Applies run one at a time, in the order they came (sbx apply also
 * locks the workspace: this keeps a second one from waiting in a slot). */
static bool apply_running(void)
{
	for (const struct call *e = mcp_srv.calls; e != NULL; e = e->next)
		if (e->running && e->kind == CALL_APPLY)
			return true;
	return false;
}

void mcp_calls_start(void)
{
	struct call *c, *next;

	for (c = mcp_srv.calls; c != NULL && mcp_calls_count(true) < MCP_MAX_RUNNING; c = next) {
		next = c->next;
		if (c->running || c->cancelled || mcp_srv.out_broken || mcp_stop_signal ||
		    mcp_session_pending(c, c->a.session, c->tool != NULL && c->a.session == NULL) ||
		    (c->kind == CALL_APPLY && apply_running()))
			continue;
		if (c->tool != NULL) {
			/* a session tool whose session's earlier calls are done */
			mcp_session_call(c->id, c->tool, json_object_get(json_object_get(c->req, "params"), "arguments"));
			unlink_call(c);
			call_free(c);
			continue;
		}
		start_call(c);
	}
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
		if (c->note_due && sbx_mono_ms() - c->last_note >= NOTE_MIN_MS)
			send_note(c);
	}
	json_decref(e);
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
	} else if (c->kind == CALL_APPLY) {
		mcp_send_result(c->id, mcp_ws_apply_result(c, status));
	} else if (c->kind == CALL_RUN && c->result != NULL && mcp_ws_changes_start(c)) {
		return; /* the call goes on with its changeset's review */
	} else if (c->result != NULL) {
		if (c->kind == CALL_CHANGES)
			mcp_ws_changes_merge(c, status);
		res = mcp_tool_result(c->result, c->ch.out_dirfd);
		c->result = NULL;
		mcp_send_result(c->id, res);
	} else {
		if (WIFSIGNALED(status))
			snprintf(msg, sizeof(msg), "sbx run was killed by signal %d without a result", WTERMSIG(status));
		else
			snprintf(msg, sizeof(msg), "sbx run exited with status %d without a result", WEXITSTATUS(status));
		mcp_send_result(c->id, mcp_tool_error(msg));
	}
	mcp_child_cleanup(&c->ch);
	unlink_call(c);
	call_free(c);
}

/* A tool child's stdout: one JSON document, kept whole up to RAW_MAX
 * bytes (past it the rest is read and dropped, and the document is
 * then unreadable: the answer says the child gave no result). */
static void keep_raw(struct call *c, const char *buf, size_t n)
{
	char *nb;

	if (c->raw_len + n > RAW_MAX) {
		free(c->raw);
		c->raw = NULL;
		c->raw_len = RAW_MAX + 1;
		return;
	}
	if (c->raw_len > RAW_MAX)
		return;
	nb = realloc(c->raw, c->raw_len + n + 1);
	if (nb == NULL) {
		free(c->raw);
		c->raw = NULL;
		c->raw_len = RAW_MAX + 1;
		return;
	}
	c->raw = nb;
	memcpy(c->raw + c->raw_len, buf, n);
	c->raw_len += n;
	c->raw[c->raw_len] = '\0';
}

/* At most 16 reads (1 MiB) per wake-up, so that a program writing
 * without pause cannot keep stdin and the other runs waiting. */
void mcp_call_read(struct call *c)
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
		if (c->kind == CALL_RUN)
			mcp_feed_lines(&c->lb, buf, (size_t)n, EVENT_MAX_BYTES, event_line, c);
		else
			keep_raw(c, buf, (size_t)n);
	}
}

/* Stop a run nobody waits for: SIGTERM to sbx run (passed on to the
 * program), SIGKILL after a grace period (its helper then kills the
 * sandbox when the result socket closes); an apply is not stopped. */
void mcp_call_kill(struct call *c)
{
	c->cancelled = true;
	/* an apply that has begun is let finish (it ignores SIGTERM between
	 * its begin and end records anyway): stopped, it would leave the
	 * workspace half-applied; its answer is dropped */
	if (!c->running || c->ch.pid <= 0 || c->killed || c->kind == CALL_APPLY)
		return;
	kill(c->ch.pid, SIGTERM);
	c->killed = true;
	c->kill_at = sbx_mono_ms() + KILL_GRACE_MS;
}

int mcp_calls_timeout(void)
{
	long long now = sbx_mono_ms(), t = -1;
	struct call *c;

	for (c = mcp_srv.calls; c != NULL; c = c->next) {
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

void mcp_calls_timers(void)
{
	long long now = sbx_mono_ms();
	struct call *c;

	for (c = mcp_srv.calls; c != NULL; c = c->next) {
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

void mcp_calls_drop(void)
{
	struct call *c = mcp_srv.calls, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		if (!c->running && c->cancelled) {
			unlink_call(c);
			call_free(c);
		}
	}
}
