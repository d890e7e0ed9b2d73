/* SPDX-License-Identifier: ISC */
/* The end of a run: the result JSON (artifact paths added) or the error,
 * artifact notices, and the exit status. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <jansson.h>

#include "errobj.h"
#include "events.h"
#include "errcode.h"
#include "fail.h"
#include "proto.h"
#include "run.h"
#include "units.h"
#include "workspace.h"

static json_t *find_artifact(json_t *arts, const char *name)
{
	size_t i;
	json_t *a;

	json_array_foreach(arts, i, a) {
		const char *n = json_string_value(json_object_get(a, "name"));
		if (n != NULL && strcmp(n, name) == 0)
			return a;
	}
	return NULL;
}

static void annotate_artifacts(struct run_state *rs, json_t *root)
{
	json_t *arts = json_object_get(root, "artifacts");
	size_t i;

	for (i = 0; i < rs->narts; i++) {
		const struct artifact_rec *r = &rs->arts[i];
		json_t *a = find_artifact(arts, r->name);
		json_t *size = json_object_get(a, "size");
		const char *type = json_string_value(json_object_get(a, "media_type"));
		char *shown;

		if (r->path != NULL) {
			/* json_string() refuses a path that is not UTF-8; then the
			 * helper could not have named it in the result either. */
			if (a != NULL)
				json_object_set_new(a, "path", json_string(r->path));
			continue;
		}
		if (rs->o->json || rs->have_dir)
			continue; /* --json: no "path" says it; a save error was reported */
		shown = artifact_printable(r->name);
		fprintf(stderr, "sbx: artifact %s (%" PRIu64 " bytes, %s) not saved; use --artifacts DIR\n",
			shown ? shown : "?",
			json_is_integer(size) ? (uint64_t)json_integer_value(size) : r->size,
			type ? type : "application/octet-stream");
		free(shown);
	}
	if (rs->arts_dropped)
		cli_warn("artifact", "more than %d artifacts; the rest were dropped", MAX_ARTIFACTS);
}

/* A byte count as people read it: "512 bytes", "3.5K", "4.0M". */
static void human(uint64_t n, char *buf, size_t len)
{
	if (n >= (1ULL << 30))
		snprintf(buf, len, "%.1fG", (double)n / (1 << 30));
	else if (n >= (1ULL << 20))
		snprintf(buf, len, "%.1fM", (double)n / (1 << 20));
	else if (n >= 1024)
		snprintf(buf, len, "%.1fK", (double)n / 1024);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
}

static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* "sbx: 38 artifacts not saved (over the artifact count cap 1024 (policy
 * default): 38); ...": the result's skipped_reasons (proto.h). */
static void skipped_note(json_t *root, const struct run_opts *o)
{
	static const struct { const char *name, *words; } why[] = {
#define SBX_ART_SKIP_ROW(sym, name, words) {name, words},
		SBX_ART_SKIPS(SBX_ART_SKIP_ROW)
#undef SBX_ART_SKIP_ROW
	};
	json_t *counts = json_object_get(root, "skipped_reasons");
	uint64_t total = u64_of(root, "artifacts_skipped");
	char val[128];
	const char *sep = "";

	if (total == 0)
		return;
	fprintf(stderr, "sbx: %llu artifacts not saved (", (unsigned long long)total);
	for (size_t k = 0; k < sizeof(why) / sizeof(why[0]); k++) {
		uint64_t n = u64_of(counts, why[k].name);

		if (n == 0)
			continue;
		val[0] = '\0';
		if (k == SBX_ART_SKIP_COUNT_CAP)
			result_limit_value(root, o, "artifacts", val, sizeof(val));
		else if (k == SBX_ART_SKIP_OUT_SIZE)
			result_limit_value(root, o, "out_bytes", val, sizeof(val));
		fprintf(stderr, "%s%s%s%s: %llu", sep, why[k].words, val[0] ? " " : "", val, (unsigned long long)n);
		sep = "; ";
	}
	fputs("); the result's \"skipped\" lists them\n", stderr);
}

/*
 * [network] limits the run reached (the result's network.limits, their
 * values in network.max): a limit ends a connection, never the run. Past
 * connections, the relay refuses the next ones; past bytes_out or bytes_in
 * it resets the connection that crossed it (docs/egress.md, "Limits").
 */
static void network_notes(json_t *root)
{
	json_t *net = json_object_get(root, "network"), *m;
	const char *policy = json_string_value(json_object_get(root, "policy"));
	size_t i;

	json_array_foreach(json_object_get(net, "limits"), i, m) {
		const char *k = json_string_value(m);
		bool conns = k != NULL && strcmp(k, "connections") == 0;
		char val[32];

		if (k == NULL || !json_is_integer(json_object_get(json_object_get(net, "max"), k)))
			continue;
		if (conns)
			snprintf(val, sizeof(val), "%" PRIu64, u64_of(json_object_get(net, "max"), k));
		else
			sbx_format_size(u64_of(json_object_get(net, "max"), k), val, sizeof(val));
		fprintf(stderr, "sbx: network: the %s limit of %s (policy %s) was reached: %s; the program went on\n",
			k, val, policy ? policy : "?",
			conns ? "the connections after it were refused" : "the connection that crossed it was reset");
	}
}

/*
 * Plain mode: one stderr line for everything sbx stopped, cut or did not
 * keep, after the program's own output (--json carries the same in the
 * result: outcome, error, stdout_truncated, artifacts_skipped, disk_full,
 * limit). sbx(1) DIAGNOSTICS lists them.
 */
static void plain_notes(const struct run_state *rs, json_t *root)
{
	const struct run_opts *o = rs->o;
	const char *outcome = json_string_value(json_object_get(root, "outcome"));
	const char *limit = json_string_value(json_object_get(root, "limit"));
	json_t *err = json_object_get(root, "error"), *full = json_object_get(root, "disk_full"), *m;
	const char *hint = json_string_value(json_object_get(err, "hint"));
	char msg[256], val[128], n1[32];
	size_t i;

	if (outcome == NULL)
		return;
	{
		json_t *cs = json_object_get(root, "changeset");
		const char *id = json_string_value(json_object_get(cs, "id"));
		const char *miss = json_string_value(json_object_get(cs, "missing"));
		if (id != NULL)
			fprintf(stderr, "sbx: changeset %s: %" JSON_INTEGER_FORMAT " change(s) (sbx changes %s; sbx apply %s)\n",
				id, json_integer_value(json_object_get(cs, "entries")), id, id);
		if (miss != NULL)
			fprintf(stderr, "sbx: changeset %s\n", miss);
	}
	if (result_limit_message(root, o, msg, sizeof(msg)))
		fprintf(stderr, "sbx: stopped: %s\n", msg);
	else if (strcmp(outcome, "signal") == 0 && json_is_string(json_object_get(root, "signal_name")))
		fprintf(stderr, "sbx: the program was killed by signal SIG%s\n",
			json_string_value(json_object_get(root, "signal_name")));
	if (json_is_true(json_object_get(root, "stdout_truncated")) ||
	    json_is_true(json_object_get(root, "stderr_truncated"))) {
		human(u64_of(root, "stdout_omitted_bytes") + u64_of(root, "stderr_omitted_bytes"), n1, sizeof(n1));
		if (result_limit_value(root, o, "output_bytes", val, sizeof(val)))
			fprintf(stderr, "sbx: output cut at %s; %s not shown\n", val, n1);
	}
	json_array_foreach(full, i, m) {
		static const struct { const char *mount, *key; } caps[] = {
			{"/tmp", "tmp_bytes"}, {"/dev/shm", "shm_bytes"}, {"/out", "out_bytes"}};
		for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++)
			if (json_is_string(m) && strcmp(json_string_value(m), caps[k].mount) == 0 &&
			    result_limit_value(root, o, caps[k].key, val, sizeof(val)))
				fprintf(stderr, "sbx: %s filled up at %s: the program got \"No space left on device\"\n",
					caps[k].mount, val);
	}
	if (limit != NULL && strcmp(limit, "pids") == 0 && strcmp(outcome, "pids_limit") != 0 &&
	    result_limit_value(root, o, "pids", val, sizeof(val)))
		fprintf(stderr, "sbx: the process limit of %s refused to start a process or thread; "
			"the program went on\n", val);
	skipped_note(root, o);
	json_array_foreach(json_object_get(root, "artifacts"), i, m)
		if (json_is_true(json_object_get(m, "truncated")) && result_limit_value(root, o, "out_bytes", val, sizeof(val))) {
			char *shown = artifact_printable(json_string_value(json_object_get(m, "name")));
			fprintf(stderr, "sbx: artifact %s is incomplete: /out filled up at %s while it was written\n",
				shown ? shown : "?", val);
			free(shown);
		}
	network_notes(root);
	if (hint != NULL)
		fprintf(stderr, "sbx: hint: %s\n", hint);
}

static void print_json(json_t *root)
{
	char *text = json_dumps(root, JSON_INDENT(2));

	if (text == NULL)
		cli_die("result", "cannot format the result JSON");
	puts(text);
	free(text);
}

/* Why there is no result, best source first: the helper's own words. */
static void no_result_reason(const struct run_state *rs, char *buf, size_t len)
{
	if (rs->message[0])
		snprintf(buf, len, "%s", rs->message);
	else if (rs->proto_err[0])
		snprintf(buf, len, "sbx-helper: %s", rs->proto_err);
	else if (WIFSIGNALED(rs->status))
		snprintf(buf, len, "sbx-helper: killed by signal %d without a result", WTERMSIG(rs->status));
	else
		snprintf(buf, len, "sbx-helper: exited with status %d without a result", WEXITSTATUS(rs->status));
}

int run_finish(struct run_state *rs)
{
	json_t *root = NULL;
	json_error_t jerr;
	char why[1200];

	if (rs->fr.stray_fds)
		cli_warn("sbx-helper", "%u unexpected file descriptors received and closed", rs->fr.stray_fds);
	if (rs->result != NULL) {
		root = json_loadb(rs->result, rs->result_len, JSON_ALLOW_NUL, &jerr);
		if (root != NULL && !json_is_object(root)) {
			json_decref(root);
			root = NULL;
			snprintf(jerr.text, sizeof(jerr.text), "not an object");
		}
		if (root == NULL && rs->proto_err[0] == '\0')
			snprintf(rs->proto_err, sizeof(rs->proto_err), "invalid result JSON: %s", jerr.text);
	}
	if (root == NULL) {
		/* the audit log failed (the helper's 74) or sbx could not set up */
		bool audit = WIFEXITED(rs->status) && WEXITSTATUS(rs->status) == SBX_EXIT_AUDIT;
		/* a policy that does not exist: refused before any record, with
		 * the status of one that does not allow the caller (escape 05) */
		bool refused = WIFEXITED(rs->status) && WEXITSTATUS(rs->status) == SBX_EXIT_REFUSED;
		/* a live session's recorder refused the call (recorder/live.c
		 * refuse): "sbx-helper: refused: CODE: why", audited */
		const struct sbx_errcode *lc = NULL;
		if (strncmp(rs->message, "sbx-helper: refused: ", 21) == 0) {
			char code[32];
			size_t n = strcspn(rs->message + 21, ":");
			if (n < sizeof(code)) {
				memcpy(code, rs->message + 21, n);
				code[n] = '\0';
				lc = sbx_errcode_find(code);
			}
		}

		no_result_reason(rs, why, sizeof(why));
		if (lc != NULL) {
			if (rs->o->json)
				cli_print_json_error(lc->code, why);
			return lc->exit_status >= 0 ? lc->exit_status : SBX_EXIT_FAILURE;
		}
		if (rs->o->json)
			cli_print_json_error(audit ? "audit_unavailable" : refused ? "policy_denied" : "setup", why);
		/* In plain mode the helper's own message is already on our
		 * stderr; add ours when it sent none, or ours says more. A
		 * usage error (before the helper checked the socket) went to
		 * our stderr from the helper directly, with exit status 125. */
		else if (rs->proto_err[0] || (rs->message[0] == '\0' && (!WIFEXITED(rs->status) ||
									 WEXITSTATUS(rs->status) != SBX_EXIT_FAILURE)))
			fprintf(stderr, "sbx: %s\n", why);
		return audit ? SBX_EXIT_AUDIT : refused ? SBX_EXIT_REFUSED : SBX_EXIT_FAILURE;
	}
	if (rs->proto_err[0])
		cli_warn("sbx-helper", "%s", rs->proto_err);
	annotate_artifacts(rs, root);
	if (rs->o->workspace)
		ws_finish(rs->o, root);
	if (result_set_error(root, rs->o) < 0)
		cli_die("result", "out of memory");
	if (rs->keep != NULL)
		*rs->keep = json_incref(root);
	else if (rs->o->jsonl)
		event_emit("result", json_pack("{s:O}", "result", root));
	else if (rs->o->json)
		print_json(root);
	else
		plain_notes(rs, root);
	json_decref(root);
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die("stdout", "%s", strerror(errno));
	if (WIFSIGNALED(rs->status)) {
		cli_warn("sbx-helper", "killed by signal %d after its result", WTERMSIG(rs->status));
		return SBX_EXIT_FAILURE;
	}
	return WEXITSTATUS(rs->status);
}
