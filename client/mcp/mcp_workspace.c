/* SPDX-License-Identifier: ISC */
/*
 * `sbx mcp --workspace DIR` (sbx(1) MCP SERVER and WORKSPACES,
 * docs/workspace.md): execute_code's runs see DIR at /work copy-on-write;
 * after a run that left a changeset its call goes on with `sbx changes ID
 * --json --diff`, whose entries and diff (bounded) the result carries; the
 * tool apply_changes runs `sbx apply ID --json [--only PATH]...` for a
 * changeset that one of this server's calls proposed. Every step is the
 * command-line program, as the caller: the server itself never writes the
 * workspace, and an apply is checked and recorded exactly as on the
 * command line. A client puts apply_changes behind its human approval
 * (its annotations say it is destructive).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fail.h"
#include "textutil.h"
#include "../workspace.h" /* not recorder/workspace.h */
#include "mcp_int.h"
#include "unconst.h"

#define PROPOSED_MAX 1024   /* changeset ids remembered, the oldest forgotten first */
#define FILES_SHOWN 100     /* entries of a changeset in a result; the rest counted */
#define ONLY_MAX 256        /* what sbx apply --only takes */
#define ERR_SHOWN 2048      /* bytes of a child's stderr in a tool error */

static char workspace[PATH_MAX];
/* the changesets this server's calls proposed and showed; whole: every
 * entry and all of its diff were in the result */
static struct {
	char id[65];
	bool whole;
} proposed[PROPOSED_MAX];
static size_t n_proposed, next_proposed;

void mcp_set_workspace(const char *dir)
{
	struct stat st;

	if (dir[0] == '\0')
		cli_die_usage("mcp --workspace", "the directory name is empty");
	/* absolute, so that the runs and the changesets' meta name the same
	 * directory whatever the server's working directory becomes */
	if (realpath(dir, workspace) == NULL || stat(workspace, &st) < 0)
		cli_die("mcp --workspace", "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		cli_die("mcp --workspace", "%s: not a directory", dir);
}

const char *mcp_workspace(void)
{
	return workspace[0] != '\0' ? workspace : NULL;
}


static void remember(const char *id, bool whole)
{
	snprintf(proposed[next_proposed].id, sizeof(proposed[0].id), "%s", id);
	proposed[next_proposed].whole = whole;
	next_proposed = (next_proposed + 1) % PROPOSED_MAX;
	if (n_proposed < PROPOSED_MAX)
		n_proposed++;
}

/* 1 proposed and shown whole, 0 proposed but not shown whole, -1 not
 * proposed by this server */
static int was_proposed(const char *id)
{
	for (size_t i = 0; i < n_proposed; i++)
		if (strcmp(proposed[i].id, id) == 0)
			return proposed[i].whole;
	return -1;
}

/* A child's stderr (its memfd), at most ERR_SHOWN bytes, trailing
 * newlines dropped, into buf; "" when it said nothing. */
static void child_stderr(const struct mcp_child *ch, char *buf, size_t len)
{
	ssize_t n = ch->err_fd >= 0 ? pread(ch->err_fd, buf, len - 1, 0) : -1;

	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
}

/* ---- execute_code: the changeset's review ------------------------------ */

bool mcp_ws_changes_start(struct call *c)
{
	json_t *cs = json_object_get(c->result, "changeset");
	const char *id = json_string_value(json_object_get(cs, "id"));
	char max[32], err[512];
	char *argv[] = {"sbx", "changes", c->cs_id, "--json", "--diff", "--max-bytes", max, NULL};

	if (!ws_id_valid(id))
		return false;
	snprintf(c->cs_id, sizeof(c->cs_id), "%s", id);
	snprintf(max, sizeof(max), "%zu", mcp_max_text());
	close(c->ch.out_fd);
	c->ch.out_fd = -1;
	c->ch.pid = -1;
	if (mcp_child_spawn(argv, &c->ch, err, sizeof(err)) < 0) {
		json_object_set_new(cs, "review_error", json_string(err));
		return false;
	}
	c->kind = CALL_CHANGES;
	return true;
}

void mcp_ws_changes_merge(struct call *c, int status)
{
	json_t *cs = json_object_get(c->result, "changeset");
	json_t *j = c->raw ? json_loadb(c->raw, c->raw_len, 0, NULL) : NULL;
	json_t *files = json_object_get(j, "files"), *shown = json_array(), *e;
	char why[ERR_SHOWN];
	size_t i;

	if (!json_is_array(files) || !json_is_string(json_object_get(j, "diff"))) {
		child_stderr(&c->ch, why, sizeof(why));
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "sbx changes %s ended with status %d and no changeset", c->cs_id,
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		char *clean = sbx_utf8_sanitize(why, strlen(why));
		json_object_set_new(cs, "review_error", json_string(clean ? clean : "?"));
		free(clean);
		json_decref(shown);
		json_decref(j);
		return; /* not remembered: what was not shown cannot be applied here */
	}
	json_array_foreach(files, i, e) {
		if (i == FILES_SHOWN)
			break;
		json_array_append_new(shown, json_pack("{s:O, s:O, s:O, s:O}", "path", json_object_get(e, "path"),
						       "action", json_object_get(e, "action"), "type",
						       json_object_get(e, "type"), "mode", json_object_get(e, "mode")));
	}
	json_object_set_new(cs, "files", shown);
	json_object_set_new(cs, "files_omitted", json_integer((json_int_t)(json_array_size(files) - json_array_size(shown))));
	json_object_set(cs, "diff", json_object_get(j, "diff"));
	json_object_set(cs, "diff_omitted_bytes", json_object_get(j, "diff_omitted_bytes"));
	json_object_set(cs, "diff_omitted_files", json_object_get(j, "diff_omitted_files"));
	/* what apply_changes may apply: only what the result showed whole */
	bool whole = json_array_size(shown) == json_array_size(files) &&
		     json_integer_value(json_object_get(j, "diff_omitted_bytes")) == 0 &&
		     json_integer_value(json_object_get(j, "diff_omitted_files")) == 0 &&
		     json_is_true(json_object_get(j, "complete"));
	json_object_set_new(cs, "shown_whole", json_boolean(whole));
	remember(c->cs_id, whole);
	json_decref(j);
}

/* ---- apply_changes ------------------------------------------------------ */

void mcp_ws_tool_defs(json_t *tools, const struct mcp_revision *rev)
{
	json_t *t;

	if (mcp_workspace() == NULL)
		return;
	t = json_pack(
		"{s:s, s:s, s:{s:s, s:{s:{s:s,s:s,s:s}, s:{s:s,s:i,s:i,s:{s:s,s:i,s:i},s:s}}, s:[s], s:b}}", "name",
		"apply_changes", "description",
		"Apply to the workspace (sbx mcp --workspace) a changeset that an execute_code call of "
		"this server proposed and showed whole (result.changeset.shown_whole: every entry and "
		"all of its diff in the result): all of its entries, or only those at or under the paths "
		"given. Refused, with nothing written, when a file changed on disk since the run. "
		"Recorded in the signed audit log (who applied which changeset of which run). It writes "
		"the user's files: ask the user before calling it.",
		"inputSchema", "type", "object", "properties", "changeset", "type", "string", "pattern",
		"^[0-9a-f]{1,63}$", "description", "The changeset's id (the run's id: result.changeset.id).", "only",
		"type", "array", "minItems", 1, "maxItems", ONLY_MAX, "items", "type", "string", "minLength", 1, "maxLength", 4095,
		"description",
		"Apply only the entries at or under these paths (relative to the workspace); default: all.",
		"required", "changeset", "additionalProperties", 0);
	if (t != NULL && rev->structured)
		json_object_set_new(t, "title", json_string("Apply a proposed changeset to the workspace"));
	if (t != NULL && rev->annotations)
		json_object_set_new(t, "annotations",
				    json_pack("{s:b,s:b,s:b,s:b}", "readOnlyHint", 0, "destructiveHint", 1,
					      "idempotentHint", 0, "openWorldHint", 0));
	json_array_append_new(tools, t);
}

int mcp_ws_apply_check(struct call *c, json_t *args, char *err, size_t errlen)
{
	const char *k, *id = NULL;
	json_t *v;
	size_t i;

	if (mcp_workspace() == NULL) {
		snprintf(err, errlen, "apply_changes: this server has no workspace (sbx mcp --workspace DIR)");
		return -1;
	}
	json_object_foreach(args, k, v) {
		if (strcmp(k, "changeset") == 0)
			id = json_string_value(v);
		else if (strcmp(k, "only") == 0)
			c->only = v;
		else {
			snprintf(err, errlen, "unknown argument '%.100s' (apply_changes takes changeset, only)", k);
			return -1;
		}
	}
	if (id == NULL || !ws_id_valid(id) || strlen(id) != json_string_length(json_object_get(args, "changeset"))) {
		snprintf(err, errlen, "changeset: missing or not a changeset id (lower-case hex, result.changeset.id)");
		return -1;
	}
	switch (was_proposed(id)) {
	case -1:
		snprintf(err, errlen,
			 "changeset %s: not one that an execute_code call of this server proposed and showed "
			 "(apply others with sbx apply on the command line)", id);
		return -1;
	case 0:
		snprintf(err, errlen,
			 "changeset %s: its result did not show it whole (entries or diff left out): review it "
			 "with sbx changes %s and apply it with sbx apply %s on the command line", id, id, id);
		return -1;
	default:
		break;
	}
	/* an empty list would read as "nothing" in an approval prompt and
	 * apply everything: refused */
	if (c->only != NULL && (!json_is_array(c->only) || json_array_size(c->only) == 0 ||
				json_array_size(c->only) > ONLY_MAX)) {
		snprintf(err, errlen, "only: not an array of 1 to %d paths", ONLY_MAX);
		return -1;
	}
	json_array_foreach(c->only, i, v) {
		const char *p = json_string_value(v);
		if (p == NULL || p[0] == '\0' || strlen(p) != json_string_length(v) || strlen(p) >= 4096) {
			snprintf(err, errlen, "only[%zu]: not a path (a non-empty string without NUL, under 4 KiB)", i);
			return -1;
		}
	}
	snprintf(c->cs_id, sizeof(c->cs_id), "%s", id);
	c->kind = CALL_APPLY;
	return 0;
}

int mcp_ws_apply_start(struct call *c, char *err, size_t errlen)
{
	char *argv[5 + 2 * ONLY_MAX + 1];
	size_t i, n = 0;
	json_t *v;

	argv[n++] = "sbx";
	argv[n++] = "apply";
	argv[n++] = c->cs_id;
	argv[n++] = "--json";
	json_array_foreach(c->only, i, v) {
		argv[n++] = "--only";
		argv[n++] = sbx_unconst(json_string_value(v));
	}
	argv[n] = NULL;
	return mcp_child_spawn(argv, &c->ch, err, errlen);
}

json_t *mcp_ws_apply_result(struct call *c, int status)
{
	json_t *j = c->raw ? json_loadb(c->raw, c->raw_len, 0, NULL) : NULL;
	const char *result = json_string_value(json_object_get(j, "result"));
	json_t *content = json_array(), *conf = json_object_get(j, "conflicts"), *e;
	char line[ERR_SHOWN + 4096 + 512];
	size_t i;

	if (result == NULL) {
		char why[ERR_SHOWN];
		child_stderr(&c->ch, why, sizeof(why));
		snprintf(line, sizeof(line), "changeset %s was not applied: %s", c->cs_id,
			 why[0] ? why : "sbx apply gave no result");
		(void)status;
		json_decref(j);
		json_decref(content);
		return mcp_tool_error(line);
	}
	if (strcmp(result, "conflict") == 0) {
		snprintf(line, sizeof(line),
			 "changeset %s: nothing written: %zu file(s) changed on disk since the run", c->cs_id,
			 json_array_size(conf));
		json_array_append_new(content, json_pack("{s:s,s:s}", "type", "text", "text", line));
		json_array_foreach(conf, i, e) {
			snprintf(line, sizeof(line), "conflict: %s: %s", json_string_value(json_object_get(e, "path")),
				 json_string_value(json_object_get(e, "why")));
			json_array_append_new(content, json_pack("{s:s,s:s}", "type", "text", "text", line));
		}
	} else {
		const char *failed = json_string_value(json_object_get(j, "failed"));
		snprintf(line, sizeof(line), "changeset %s: %s: %" JSON_INTEGER_FORMAT " entr%s written to %s%s%s",
			 c->cs_id, result, json_integer_value(json_object_get(j, "applied")),
			 json_integer_value(json_object_get(j, "applied")) == 1 ? "y" : "ies", mcp_workspace(),
			 failed ? "; stopped at: " : "", failed ? failed : "");
		json_array_append_new(content, json_pack("{s:s,s:s}", "type", "text", "text", line));
	}
	json_t *r = json_pack("{s:o, s:b}", "content", content, "isError", strcmp(result, "applied") != 0);
	if (mcp_srv.rev->structured)
		json_object_set(r, "structuredContent", j);
	else {
		char *t = json_dumps(j, JSON_COMPACT);
		if (t != NULL)
			json_array_append_new(content, json_pack("{s:s,s:s}", "type", "text", "text", t));
		free(t);
	}
	json_decref(j);
	return r;
}
