/* SPDX-License-Identifier: ISC */
/* sbx-audit show --json: every decoded field, strings made valid UTF-8. */
#include "show.h"

#include <stdbool.h>
#include <string.h>

#include "auditdb.h"
#include "limitjson.h"

static void set(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, out_need(v));
}

static json_t *str(const char *s)
{
	return out_json_str(s, strlen(s));
}

static json_t *opt_str(const char *s)
{
	return s[0] ? str(s) : json_null();
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *argv_json(const struct sbx_record *r)
{
	json_t *a = out_need(json_array());
	size_t i = 0;

	while (i < r->argv_len) {
		size_t n = strnlen(r->argv + i, r->argv_len - i);
		json_array_append_new(a, out_json_str(r->argv + i, n));
		i += n + 1;
	}
	return a;
}

/* The limits under the result's keys (one vocabulary, limitjson.h);
 * input_size is an extension field of version 2 records (older ones do
 * not say it: 0). */
static json_t *limits_json(const struct sbx_record *r)
{
	struct sbx_limits l = r->limits;
	struct sbx_fval v;

	if (sbx_rec_get(r, SBX_F_INPUT_LIMIT, &v) == 1)
		l.input_bytes = v.u;
	if (sbx_rec_get(r, SBX_F_WS_LIMIT, &v) == 1)
		l.workspace_bytes = v.u;
	return out_need(sbx_limits_json(&l));
}

static json_t *artifacts_json(const struct sbx_record *r)
{
	json_t *arr = out_need(json_array());
	size_t i;

	for (i = 0; i < r->n_artifacts; i++) {
		const struct sbx_artifact *a = &r->artifacts[i];
		json_t *o = out_need(json_object());
		set(o, "name", str(a->name));
		set(o, "size", u64(a->size));
		set(o, "media_type", str(a->media_type));
		set(o, "sha256", out_json_hex(a->sha256, 32));
		json_array_append_new(arr, o);
	}
	return arr;
}

static void end_json(json_t *o, const struct sbx_record *r)
{
	set(o, "outcome", str(r->outcome));
	set(o, "exit_code", json_integer(r->exit_code));
	set(o, "signal", json_integer(r->signal));
	set(o, "limit", opt_str(r->limit));
	set(o, "wall_ms", u64(r->wall_ms));
	set(o, "cpu_ms", u64(r->cpu_ms));
	set(o, "memory_peak_bytes", u64(r->memory_peak_bytes));
	set(o, "stdout_bytes", u64(r->stdout_bytes));
	set(o, "stdout_sha256", out_json_hex(r->stdout_sha256, 32));
	set(o, "stderr_bytes", u64(r->stderr_bytes));
	set(o, "stderr_sha256", out_json_hex(r->stderr_sha256, 32));
	set(o, "stderr_excerpt", str(r->stderr_excerpt));
	set(o, "error", opt_str(r->error));
	set(o, "artifacts", artifacts_json(r));
}

static json_t *record_json(const struct shown *s)
{
	const struct sbx_record *r = &s->rec;
	json_t *o = out_need(json_object());
	char t[48];

	set(o, "seq", json_integer(s->seq));
	if (!s->ok) {
		set(o, "undecodable", str(s->why));
		return o;
	}
	set(o, "kind", json_string(sbx_record_kind_name(r->kind)));
	set(o, "run_id", str(r->run_id));
	set(o, "time", sbx_iso_time(r->realtime_ns, t, sizeof(t)) == 0 ? json_string(t) : json_null());
	set(o, "realtime_ns", json_integer(r->realtime_ns));
	set(o, "boottime_ns", json_integer(r->boottime_ns));
	set(o, "boot_id", str(r->boot_id));
	set(o, "host", str(r->host));
	set(o, "uid", json_integer(r->uid));
	set(o, "gid", json_integer(r->gid));
	set(o, "user", str(r->user));
	set(o, "policy", str(r->policy));
	set(o, "policy_sha256", out_json_hex(r->policy_sha256, 32));
	set(o, "limits", limits_json(r));
	set(o, "language", str(r->language));
	set(o, "argv", argv_json(r));
	set(o, "code_sha256", out_json_hex(r->code_sha256, 32));
	set(o, "session", opt_str(r->session));
	set(o, "attempt", json_integer(r->attempt));
	set(o, "parent_id", opt_str(r->parent_id));
	if (r->kind == SBX_REC_END)
		end_json(o, r);
	set(o, "origin", str(s->origin));
	set(o, "chain", s->has_chain ? out_json_hex(s->chain, 32) : json_null());
	/* version 2: every extension field, by the record-field table */
	if (sbx_rext_json(r, o) < 0)
		out_need(NULL);
	json_object_del(o, sbx_field_def(SBX_F_INPUT_LIMIT)->key); /* it is in limits */
	json_object_del(o, sbx_field_def(SBX_F_WS_LIMIT)->key);
	return o;
}

json_t *show_json(const char *run_id, const struct shown *r, size_t n)
{
	json_t *o = out_need(json_object()), *recs = out_need(json_array());
	json_t *start = NULL, *end = NULL, *refused = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *j = record_json(&r[i]);
		json_array_append_new(recs, j);
		/* The first of each kind; a second one is visible in "records".
		 * A live session's calls (cell) are in "records" only: start
		 * and end are the session's own. */
		struct sbx_fval cv;
		bool call = r[i].ok && sbx_rec_get(&r[i].rec, SBX_F_CELL, &cv) == 1;
		if (r[i].ok && !call && r[i].rec.kind == SBX_REC_START && start == NULL)
			start = j;
		if (r[i].ok && !call && r[i].rec.kind == SBX_REC_END && end == NULL)
			end = j;
		if (r[i].ok && r[i].rec.kind == SBX_REC_REFUSED && refused == NULL)
			refused = j;
	}
	set(o, "id", str(run_id));
	set(o, "start", start ? json_incref(start) : json_null());
	set(o, "end", end ? json_incref(end) : json_null());
	/* a request refused before a policy loaded has this one record */
	if (refused != NULL)
		set(o, "refused", json_incref(refused));
	set(o, "records", recs);
	return o;
}
