/* SPDX-License-Identifier: ISC */
/* The result JSON of a recorded run (recorder.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "proto.h"
#include "recorder.h"
#include "textutil.h"

static json_t *text_json(const char *data, size_t len)
{
	char *s = sbx_utf8_sanitize(data ? data : "", data ? len : 0);
	json_t *j = json_string(s ? s : "");
	free(s);
	return j;
}

static json_t *limits_json(const struct sbx_limits *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "wall_time_ms", (json_int_t)l->wall_ms, "cpu_time_ms", (json_int_t)l->cpu_ms,
			 "memory_bytes", (json_int_t)l->memory_bytes, "pids", (json_int_t)l->pids,
			 "cpus", (double)l->cpus_milli / 1000.0, "tmp_bytes", (json_int_t)l->tmp_bytes,
			 "out_bytes", (json_int_t)l->out_bytes, "output_bytes", (json_int_t)l->output_bytes,
			 "file_size_bytes", (json_int_t)l->file_size_bytes, "open_files", (json_int_t)l->open_files,
			 "max_attempts", (json_int_t)l->max_attempts, "input_bytes", (json_int_t)l->input_bytes);
}

/* [{name, size, sha256}] of the input files, as START recorded them. */
static json_t *inputs_json(const struct rec *c)
{
	json_t *a = json_array();
	char sha[65];

	for (uint32_t i = 0; i < c->d->n_inputs; i++) {
		sbx_hex(c->input_sha256[i], 32, sha);
		json_array_append_new(a, json_pack("{s:s,s:I,s:s}", "name", c->d->inputs[i].name, "size",
						   (json_int_t)c->d->inputs[i].size, "sha256", sha));
	}
	return a;
}

json_t *result_json(const struct rec *c, json_t *traceback)
{
	const struct sbx_run_end *e = &c->end;
	const struct sbx_run_desc *d = c->d;
	char chain[65], sha[65];
	json_t *arts = json_array(), *j;

	for (size_t i = 0; i < c->n_arts; i++) {
		sbx_hex(c->arts[i].sha256, 32, sha);
		json_array_append_new(arts, json_pack("{s:s,s:I,s:s,s:s}", "name", c->arts[i].name,
						      "size", (json_int_t)c->arts[i].size, "media_type",
						      c->arts[i].media_type, "sha256", sha));
	}
	sbx_hex(c->chain, 32, chain);
	sbx_hex(c->code_sha256, 32, sha);
	j = json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:o,s:o,s:b,s:b,s:I,s:I,s:o,s:o,s:I,s:s,s:o,s:I,s:s,s:s,s:s}",
		      "id", d->run_id, "outcome", e->outcome,
		      "exit_code", e->exit_code >= 0 ? json_integer(e->exit_code) : json_null(),
		      "signal", e->signal ? json_integer(e->signal) : json_null(),
		      "signal_name", e->signal ? json_string(sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "?") : json_null(),
		      "wall_ms", (json_int_t)e->wall_ms, "cpu_ms", (json_int_t)e->cpu_ms,
		      "memory_peak_bytes", (json_int_t)e->memory_peak_bytes, "pids_peak", (json_int_t)e->pids_peak,
		      "stdout", text_json(c->s[0].cap.buf, c->s[0].cap.len), "stderr", text_json(c->s[1].cap.buf, c->s[1].cap.len),
		      "stdout_truncated", c->s[0].truncated || c->s[0].total > c->s[0].cap.len,
		      "stderr_truncated", c->s[1].truncated || c->s[1].total > c->s[1].cap.len,
		      "stdout_bytes", (json_int_t)c->s[0].total, "stderr_bytes", (json_int_t)c->s[1].total,
		      "traceback", traceback ? traceback : json_null(), "artifacts", arts,
		      "artifacts_skipped", (json_int_t)c->skipped_arts, "policy", d->policy,
		      "limits", limits_json(&d->limits), "attempt", (json_int_t)d->attempt,
		      "session", d->session, "language", d->language, "code_sha256", sha);
	if (j == NULL)
		return NULL;
	json_object_set_new(j, "inputs", inputs_json(c));
	json_object_set_new(j, "limit", e->limit[0] ? json_string(e->limit) : json_null());
	{
		json_t *full = json_array();
		if (e->disk_full & SBX_DISK_FULL_TMP)
			json_array_append_new(full, json_string("/tmp"));
		if (e->disk_full & SBX_DISK_FULL_OUT)
			json_array_append_new(full, json_string("/out"));
		json_object_set_new(j, "disk_full", full);
	}
	json_object_set_new(j, "error", e->error[0] ? text_json(e->error, strlen(e->error)) : json_null());
	json_object_set_new(j, "audit", json_pack("{s:I,s:I,s:s}", "start_seq", (json_int_t)c->start_seq,
						  "end_seq", (json_int_t)c->end_seq, "chain", chain));
	return j;
}
