/* SPDX-License-Identifier: ISC */
/*
 * The result JSON of a recorded run (recorder.h; sbx(1) "The result",
 * docs/result.schema.json): one table, one row per key, in the order the
 * result shows them. Adding a key is a row and its function here, and its
 * entry in the schema.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "allocation.h"
#include "egress_record.h"
#include "environment.h"
#include "fdio.h"
#include "limitjson.h"
#include "proto.h"
#include "recorder.h"
#include "workspace.h"
#include "textutil.h"

/* What the value functions get: the run and the parsed traceback. */
struct rctx {
	const struct rec *c;
	json_t *traceback; /* the caller's reference: result_json releases it */
};

static json_t *text_json(const char *data, size_t len)
{
	char *s = sbx_utf8_sanitize(data ? data : "", data ? len : 0);
	json_t *j = json_string(s ? s : "");
	free(s);
	return j;
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *digest(const unsigned char d[32])
{
	char hex[65];

	sbx_hex(d, 32, hex);
	return json_string(hex);
}

static json_t *k_id(const struct rctx *x) { return json_string(x->c->d->run_id); }
static json_t *k_outcome(const struct rctx *x) { return json_string(sbx_outcome_defs[x->c->end.outcome].name); }
static json_t *k_exit_code(const struct rctx *x)
{
	return x->c->end.exit_code >= 0 ? json_integer(x->c->end.exit_code) : json_null();
}
static json_t *k_signal(const struct rctx *x) { return x->c->end.signal ? json_integer(x->c->end.signal) : json_null(); }
static json_t *k_signal_name(const struct rctx *x)
{
	const char *n = x->c->end.signal ? sigabbrev_np(x->c->end.signal) : NULL;

	return x->c->end.signal ? json_string(n ? n : "?") : json_null();
}
static json_t *k_wall_ms(const struct rctx *x) { return u64(x->c->end.wall_ms); }
static json_t *k_cpu_ms(const struct rctx *x) { return u64(x->c->end.cpu_ms); }
static json_t *k_memory_peak(const struct rctx *x) { return u64(x->c->end.memory_peak_bytes); }
static json_t *k_pids_peak(const struct rctx *x) { return u64(x->c->end.pids_peak); }
static json_t *k_stdout(const struct rctx *x) { return text_json(x->c->s[0].cap.buf, x->c->s[0].cap.len); }
static json_t *k_stderr(const struct rctx *x) { return text_json(x->c->s[1].cap.buf, x->c->s[1].cap.len); }
/* cut by the cap, or the payload wrote more than was captured */
static json_t *truncated(const struct stream *st) { return json_boolean(st->truncated || st->total > st->cap.len); }
static json_t *k_stdout_truncated(const struct rctx *x) { return truncated(&x->c->s[0]); }
static json_t *k_stderr_truncated(const struct rctx *x) { return truncated(&x->c->s[1]); }
static json_t *k_stdout_omitted(const struct rctx *x) { return u64(x->c->s[0].omitted); }
static json_t *k_stderr_omitted(const struct rctx *x) { return u64(x->c->s[1].omitted); }
static json_t *k_stdout_bytes(const struct rctx *x) { return u64(x->c->s[0].total); }
static json_t *k_stderr_bytes(const struct rctx *x) { return u64(x->c->s[1].total); }
/* a reference of the result's own, so that the caller's is released on
 * every path of result_json, the rows before this one failing included */
static json_t *k_traceback(const struct rctx *x) { return x->traceback ? json_incref(x->traceback) : json_null(); }

static json_t *k_artifacts(const struct rctx *x)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < x->c->n_arts; i++) {
		const struct sbx_artifact *r = &x->c->arts[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(r->name));
		json_object_set_new(o, "size", u64(r->size));
		json_object_set_new(o, "media_type", json_string(r->media_type));
		json_object_set_new(o, "sha256", digest(r->sha256));
		json_object_set_new(o, "truncated", json_boolean(x->c->art_truncated[i]));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *k_artifacts_skipped(const struct rctx *x) { return u64(x->c->skipped_arts); }

/* [{path, reason}] of the files of /out not returned (the first
 * MAX_SKIPPED_LISTED; artifacts_skipped counts them all). */
static const char *const reason[SBX_ART_SKIP_N] = {
#define SBX_ART_SKIP_NAME(sym, name, words) [SBX_ART_SKIP_##sym] = (name),
	SBX_ART_SKIPS(SBX_ART_SKIP_NAME)
#undef SBX_ART_SKIP_NAME
};

static json_t *k_skipped(const struct rctx *x)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < x->c->n_skipped; i++)
		json_array_append_new(a, json_pack("{s:s,s:s}", "path", x->c->skipped[i].path, "reason",
						   reason[x->c->skipped[i].why]));
	return a;
}
/* {reason: count} of every file not returned, listed or not */
static json_t *k_skipped_reasons(const struct rctx *x)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i < SBX_ART_SKIP_N; i++)
		if (x->c->skipped_why[i] > 0)
			json_object_set_new(o, reason[i], u64(x->c->skipped_why[i]));
	return o;
}

static json_t *k_policy(const struct rctx *x) { return json_string(x->c->d->policy); }
/* none applied to a request refused before its policy loaded */
static json_t *k_limits(const struct rctx *x)
{
	return x->c->d->flags & SBX_DESC_NO_POLICY ? json_null() : sbx_limits_json(&x->c->d->limits);
}
/* what the caller's cgroups did to the limits (allocation.c); absent when nothing */
static json_t *k_allocation(const struct rctx *x) { return allocation_json(x->c->d); }
static json_t *k_attempt(const struct rctx *x) { return u64(x->c->d->attempt); }
static json_t *k_session(const struct rctx *x) { return json_string(x->c->d->session); }
/* a live session's call (live.c): absent from other results */
static json_t *k_cell(const struct rctx *x) { return x->c->cell ? json_integer((json_int_t)x->c->cell) : NULL; }
static json_t *k_session_state(const struct rctx *x)
{
	return x->c->session_state[0] ? json_string(x->c->session_state) : NULL;
}
static json_t *k_changeset(const struct rctx *x) { return ws_result_json(x->c); }
static json_t *k_language(const struct rctx *x) { return json_string(x->c->d->language); }
static json_t *k_code_sha256(const struct rctx *x) { return digest(x->c->code_sha256); }

/* [{name, size, sha256}] of the input files, as START recorded them. */
static json_t *k_inputs(const struct rctx *x)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a != NULL && i < x->c->d->n_inputs; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(x->c->d->inputs[i].name));
		json_object_set_new(o, "size", u64(x->c->d->inputs[i].size));
		json_object_set_new(o, "sha256", digest(x->c->input_sha256[i]));
		json_array_append_new(a, o);
	}
	return a;
}

/* {size, sha256} of the standard input passed to the program, as START
 * recorded it, or null (/dev/null). */
static json_t *k_stdin(const struct rctx *x)
{
	json_t *o;

	if (!x->c->stdin_hashed)
		return json_null();
	o = json_object();
	json_object_set_new(o, "size", u64(x->c->d->stdin_bytes));
	json_object_set_new(o, "sha256", digest(x->c->stdin_sha256));
	return o;
}

/* Only under [network] mode = allow (egress_record.c); absent otherwise. */
static json_t *k_network(const struct rctx *x)
{
	return egress_result_json(&x->c->d->egress, &x->c->net);
}

static json_t *k_limit(const struct rctx *x)
{
	const char *n = rec_limit_name(&x->c->end);

	return n[0] ? json_string(n) : json_null();
}

/* the size-capped tmpfs mounts the payload left full */
static json_t *k_disk_full(const struct rctx *x)
{
	json_t *a = json_array();

	if (x->c->end.disk_full & SBX_DISK_FULL_TMP)
		json_array_append_new(a, json_string("/tmp"));
	if (x->c->end.disk_full & SBX_DISK_FULL_SHM)
		json_array_append_new(a, json_string("/dev/shm"));
	if (x->c->end.disk_full & SBX_DISK_FULL_OUT)
		json_array_append_new(a, json_string("/out"));
	return a;
}

/* The supervisor's reason; with a code (a refusal, errcode.h) the object
 * {code, message}, which the client completes (client/errobj.c). */
static json_t *k_error(const struct rctx *x)
{
	const char *e = x->c->end.error, *code = x->c->end.error_code;

	if (e[0] == '\0')
		return json_null();
	if (code[0] == '\0')
		return text_json(e, strlen(e));
	return json_pack("{s:s,s:o}", "code", code, "message",
			 text_json(e, strlen(e)));
}

static json_t *k_audit(const struct rctx *x)
{
	json_t *o = json_object();

	json_object_set_new(o, "start_seq", u64(x->c->start_seq));
	json_object_set_new(o, "end_seq", u64(x->c->end_seq));
	json_object_set_new(o, "chain", digest(x->c->chain));
	return o;
}

/* image or host, digest, interpreter (environment.h) */
static json_t *k_environment(const struct rctx *x)
{
	return run_env_json(&x->c->env);
}

static const struct {
	const char *key;
	json_t *(*value)(const struct rctx *x);
	bool optional; /* a NULL value leaves the key out (else it fails the result) */
} keys[] = {
	{"id", k_id, false},
	{"outcome", k_outcome, false},
	{"exit_code", k_exit_code, false},
	{"signal", k_signal, false},
	{"signal_name", k_signal_name, false},
	{"wall_ms", k_wall_ms, false},
	{"cpu_ms", k_cpu_ms, false},
	{"memory_peak_bytes", k_memory_peak, false},
	{"pids_peak", k_pids_peak, false},
	{"stdout", k_stdout, false},
	{"stderr", k_stderr, false},
	{"stdout_truncated", k_stdout_truncated, false},
	{"stderr_truncated", k_stderr_truncated, false},
	{"stdout_bytes", k_stdout_bytes, false},
	{"stderr_bytes", k_stderr_bytes, false},
	{"stdout_omitted_bytes", k_stdout_omitted, false},
	{"stderr_omitted_bytes", k_stderr_omitted, false},
	{"traceback", k_traceback, false},
	{"artifacts", k_artifacts, false},
	{"artifacts_skipped", k_artifacts_skipped, false},
	{"skipped", k_skipped, false},
	{"skipped_reasons", k_skipped_reasons, false},
	{"policy", k_policy, false},
	{"limits", k_limits, false},
	{"allocation", k_allocation, true},
	{"attempt", k_attempt, false},
	{"session", k_session, false},
	{"cell", k_cell, true},
	{"session_state", k_session_state, true},
	{"changeset", k_changeset, true},
	{"language", k_language, false},
	{"code_sha256", k_code_sha256, false},
	{"inputs", k_inputs, false},
	{"stdin", k_stdin, false},
	{"network", k_network, true},
	{"limit", k_limit, false},
	{"disk_full", k_disk_full, false},
	{"error", k_error, false},
	{"environment", k_environment, false},
	{"audit", k_audit, false},
};

json_t *result_json(const struct rec *c, json_t *traceback)
{
	struct rctx x = {.c = c, .traceback = traceback};
	json_t *j = json_object();

	for (size_t i = 0; j != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = keys[i].value(&x);

		if (v == NULL && keys[i].optional)
			continue;
		if (v == NULL || json_object_set_new(j, keys[i].key, v) < 0) {
			json_decref(j);
			j = NULL;
		}
	}
	json_decref(traceback);
	return j;
}
