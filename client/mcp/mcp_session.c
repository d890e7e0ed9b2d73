/* SPDX-License-Identifier: ISC */
/*
 * The MCP server's live-session tools (sbx(1) SESSIONS, MCP SERVER):
 * sbx_session_list, sbx_session_stop and sbx_session_restart, answered at
 * once (they talk to the session's recorder, briefly; a stop does not wait
 * for the session's running call: it interrupts it); and execute_code's
 * first use of a session name, which starts the live session when none of
 * that name is live (a first call with files is a session-directory run).
 * The sessions the server started end with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "live.h"
#include "mcp.h"
#include "mcp_int.h"
#include "name.h"
#include "session.h"

/* the names of the live sessions this server started (at most 64 kept) */
static char started[64][65];
static size_t n_started;

static void remember(const char *name)
{
	for (size_t i = 0; i < n_started; i++)
		if (strcmp(started[i], name) == 0)
			return;
	if (n_started < sizeof(started) / sizeof(started[0]))
		snprintf(started[n_started++], sizeof(started[0]), "%s", name);
}

/*
 * live_begin (live.c) in a child process: it shares code with the
 * command line, which ends the process with one line on a bad language,
 * an unusable home or sbx.conf (cli_die); in the server that would end
 * every call of every client. The child's stdout is its stderr, so that
 * nothing it or the session it starts writes can reach the protocol.
 * Returns live_begin's status (sid set when 0), or -1.
 */
static int begin_in_child(const char *name, const char *policy, const char *lang, char *sid, size_t sidlen)
{
	int p[2], st = 0;
	ssize_t n = 0, k;
	pid_t pid;

	sid[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (dup2(2, 1) < 0)
			_exit(125);
		int rc = live_begin(name, policy, lang, 0, 0, sid, sidlen);
		if (rc == 0)
			(void)!write(p[1], sid, strlen(sid));
		_exit(rc);
	}
	close(p[1]);
	/* the child first: the session it started holds a copy of the pipe,
	 * so there is no end of file to wait for; the id (under 80 bytes) is
	 * in the pipe's buffer by the time the child has exited */
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	while (pid > 0 && (size_t)n < sidlen - 1 &&
	       ((k = read(p[0], sid + n, sidlen - 1 - (size_t)n)) > 0 || (k < 0 && errno == EINTR)))
		n += k > 0 ? k : 0;
	sid[n] = '\0';
	close(p[0]);
	return pid < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_t *name_schema(void)
{
	return json_pack("{s:s,s:{s:{s:s,s:s,s:s}},s:[s],s:b}", "type", "object", "properties", "name", "type",
			 "string", "pattern", "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$", "description",
			 "The session's name (execute_code's session).", "required", "name", "additionalProperties", 0);
}

void mcp_session_tool_defs(json_t *tools)
{
	json_array_append_new(tools, json_pack("{s:s,s:s,s:{s:s,s:{},s:b}}", "name", "sbx_session_list", "description",
					       "List your sessions: name, /work size, last use, and for a live "
					       "interpreter its state, calls, idle time (or how it ended).",
					       "inputSchema", "type", "object", "properties", "additionalProperties", 0));
	json_array_append_new(tools, json_pack("{s:s,s:s,s:o}", "name", "sbx_session_stop", "description",
					       "Stop the live interpreter of a session (recorded); its /work files stay.",
					       "inputSchema", name_schema()));
	json_array_append_new(tools, json_pack("{s:s,s:s,s:o}", "name", "sbx_session_restart", "description",
					       "Restart a session's live interpreter: a fresh one under the same name, "
					       "every variable gone; its /work files stay.",
					       "inputSchema", name_schema()));
}

static json_t *text_result(json_t *v, bool error)
{
	char *t = json_dumps(v, JSON_COMPACT);
	json_t *r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", t ? t : "null", "isError",
			      error);
	if (json_is_object(v) && mcp_srv.rev->structured)
		json_object_set(r, "structuredContent", v);
	free(t);
	json_decref(v);
	return r;
}

const char *mcp_session_tool(const char *tool, json_t *args, const char **name)
{
	*name = NULL;
	if (tool == NULL || (strcmp(tool, "sbx_session_list") != 0 && strcmp(tool, "sbx_session_stop") != 0 &&
			     strcmp(tool, "sbx_session_restart") != 0))
		return NULL;
	if (tool[12] != 'l')
		*name = json_string_value(json_object_get(args, "name"));
	return tool;
}

bool mcp_session_call(json_t *id, const char *tool, json_t *args)
{
	const char *name = json_string_value(json_object_get(args, "name"));
	char sid[80];

	if (strcmp(tool, "sbx_session_list") == 0) {
		mcp_send_result(id, text_result(json_pack("{s:o}", "sessions", session_list_json()), false));
		return true;
	}
	if (strcmp(tool, "sbx_session_stop") != 0 && strcmp(tool, "sbx_session_restart") != 0)
		return false;
	if (name == NULL || !code_name_valid(name)) {
		mcp_send_result(id, mcp_tool_error("name: not a session name ([A-Za-z0-9._-], 1-64 characters)"));
		return true;
	}
	if (live_stop(name, false, true) != 0 && tool[12] == 's') {
		mcp_send_result(id, mcp_tool_error("no live session of that name"));
		return true;
	}
	if (tool[12] == 's') {
		mcp_send_result(id, text_result(json_pack("{s:s,s:s}", "session", name, "session_state", "stopped"), false));
		return true;
	}
	remember(name);
	if (begin_in_child(name, NULL, "python", sid, sizeof(sid)) != 0) {
		mcp_send_result(id, mcp_tool_error("the session did not start (see the server's standard error)"));
		return true;
	}
	live_mark_restarted(name);
	mcp_send_result(id, text_result(json_pack("{s:s,s:s,s:s}", "session", name, "id", sid, "session_state",
						  "restarted"), false));
	return true;
}

void mcp_session_end_all(void)
{
	for (size_t i = 0; i < n_started; i++)
		(void)live_stop(started[i], false, true);
	n_started = 0;
}

void mcp_session_first_use(const struct mcp_args *a)
{
	char sid[80];
	int fd;

	if (a->session == NULL)
		return;
	fd = live_connect(a->session);
	if (fd >= 0) {
		close(fd);
		return;
	}
	/* refused (the policy's sessions = no): the call goes on as a run with
	 * the session directory, and fails as such runs do */
	if (begin_in_child(a->session, a->policy, a->lang ? a->lang : "python", sid, sizeof(sid)) == 0)
		remember(a->session);
}
