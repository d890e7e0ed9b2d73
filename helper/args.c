/* SPDX-License-Identifier: ISC */
/* The helper's command line: the only caller input root code parses.
 * Grammar and bounds in common/proto.h. Strict: unknown, repeated or
 * malformed options are errors, values are validated against fixed
 * character sets and the named bounds the client checks too. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <bsd/string.h>

#include "helper.h"
#include "proto.h"
#include "units.h"

enum opt_id {
	OPT_POLICY, OPT_LANG, OPT_NAME, OPT_CODE_FD, OPT_RESULT_FD, OPT_TIMEOUT, OPT_MEMORY, OPT_PIDS,
	OPT_SESSION, OPT_ATTEMPT, OPT_PARENT, OPT_INPUT_FD, OPT_INPUT_NAME, OPT_WORK_FD, OPT_DRY_RUN,
	OPT_ALLOW, OPT_STDIN_FD, OPT_LIVE, OPT_IDLE, OPT_LIFETIME, OPT_WORKSPACE_FD, OPT_CHANGESET_FD, OPT_APPLY,
};

static const struct opt {
	const char *name;
	enum opt_id id;
	bool value;   /* takes a value */
	bool repeats; /* may be given more than once (--input-fd/--input-name pairs, --allow) */
} opts[] = {
	{"--policy", OPT_POLICY, true, false},
	{"--lang", OPT_LANG, true, false},
	{"--name", OPT_NAME, true, false},
	{"--code-fd", OPT_CODE_FD, true, false},
	{"--result-fd", OPT_RESULT_FD, true, false},
	{"--timeout", OPT_TIMEOUT, true, false},
	{"--memory", OPT_MEMORY, true, false},
	{"--pids", OPT_PIDS, true, false},
	{"--session", OPT_SESSION, true, false},
	{"--attempt", OPT_ATTEMPT, true, false},
	{"--parent", OPT_PARENT, true, false},
	{"--input-fd", OPT_INPUT_FD, true, true},
	{"--input-name", OPT_INPUT_NAME, true, true},
	{"--work-fd", OPT_WORK_FD, true, false},
	{"--dry-run", OPT_DRY_RUN, false, false},
	{"--allow", OPT_ALLOW, true, true},
	{"--stdin-fd", OPT_STDIN_FD, true, false},
	{"--live", OPT_LIVE, false, false},
	{"--idle", OPT_IDLE, true, false},
	{"--lifetime", OPT_LIFETIME, true, false},
	{"--workspace-fd", OPT_WORKSPACE_FD, true, false},
	{"--changeset-fd", OPT_CHANGESET_FD, true, false},
	{"--apply", OPT_APPLY, false, false},
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

/* [A-Za-z0-9._-]{1,max}, no leading '.' (so no "." or ".."), no '/'. */
static int valid_token(const char *s, size_t max)
{
	size_t i;

	if (s[0] == '\0' || s[0] == '.')
		return 0;
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i >= max || !(isalnum(c) || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int valid_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return i == SBX_ID_LEN;
}

static int parse_fd(const char *v, int *fd)
{
	uint64_t n;

	if (sbx_parse_uint(v, SBX_ARG_FD_MAX, &n) < 0 || n < 3)
		return -1;
	*fd = (int)n;
	return 0;
}

/* A number in [min, max]. */
static int parse_range(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	return sbx_parse_uint(v, max, out) < 0 || *out < min ? -1 : 0;
}

/* One option's value into r: 0, 1 for a malformed value, -1 with err set. */
static int take(struct run *r, enum opt_id id, const char *v, char *err, size_t errlen)
{
	uint64_t u;

	switch (id) {
	case OPT_POLICY:
	case OPT_LANG:
		if (!sbx_valid_name(v))
			return 1;
		strlcpy(id == OPT_POLICY ? r->policy_name : r->lang_name, v, SBX_NAME_MAX + 1);
		return 0;
	case OPT_NAME:
		if (!valid_token(v, SBX_TOKEN_MAX))
			return 1;
		strlcpy(r->code_name, v, sizeof(r->code_name));
		return 0;
	case OPT_CODE_FD:
		return parse_fd(v, &r->code_fd) < 0;
	case OPT_RESULT_FD:
		return parse_fd(v, &r->result_fd) < 0;
	case OPT_WORK_FD:
		return parse_fd(v, &r->work_fd) < 0;
	case OPT_STDIN_FD:
		return parse_fd(v, &r->stdin_fd) < 0;
	case OPT_WORKSPACE_FD:
		return parse_fd(v, &r->ws_fd) < 0;
	case OPT_CHANGESET_FD:
		return parse_fd(v, &r->cs_fd) < 0;
	case OPT_APPLY:
		r->apply = true;
		return 0;
	case OPT_TIMEOUT:
		if (parse_range(v, 1, SBX_ARG_TIMEOUT_MAX, &u) < 0)
			return 1;
		r->request.wall_ms = u;
		return 0;
	case OPT_MEMORY:
		if (parse_range(v, SBX_ARG_MEMORY_MIN, SBX_ARG_MEMORY_MAX, &u) < 0)
			return 1;
		r->request.memory_bytes = u;
		return 0;
	case OPT_PIDS:
		if (parse_range(v, 1, SBX_ARG_PIDS_MAX, &u) < 0)
			return 1;
		r->request.pids = u;
		return 0;
	case OPT_SESSION:
		if (!valid_token(v, SBX_TOKEN_MAX))
			return 1;
		strlcpy(r->session, v, sizeof(r->session));
		return 0;
	case OPT_ATTEMPT:
		if (parse_range(v, 1, SBX_MAX_ATTEMPTS, &u) < 0)
			return 1;
		r->attempt = (uint32_t)u;
		return 0;
	case OPT_PARENT:
		if (!valid_id(v))
			return 1;
		strlcpy(r->parent_id, v, sizeof(r->parent_id));
		return 0;
	case OPT_INPUT_FD:
		if (r->n_inputs > 0 && r->inputs[r->n_inputs - 1].name[0] == '\0') {
			snprintf(err, errlen, "--input-fd must be followed by --input-name");
			return -1;
		}
		if (r->n_inputs == SBX_MAX_INPUTS) {
			snprintf(err, errlen, "more than %d --input-fd", SBX_MAX_INPUTS);
			return -1;
		}
		if (parse_fd(v, &r->inputs[r->n_inputs].fd) < 0)
			return 1;
		r->inputs[r->n_inputs++].name[0] = '\0';
		return 0;
	case OPT_INPUT_NAME:
		/* a file name in /in */
		if (r->n_inputs == 0 || r->inputs[r->n_inputs - 1].name[0] != '\0') {
			snprintf(err, errlen, "--input-name must follow --input-fd");
			return -1;
		}
		if (!valid_token(v, SBX_TOKEN_MAX))
			return 1;
		for (size_t j = 0; j + 1 < r->n_inputs; j++)
			if (strcmp(r->inputs[j].name, v) == 0) {
				snprintf(err, errlen, "--input-name: '%s' given twice", v);
				return -1;
			}
		strlcpy(r->inputs[r->n_inputs - 1].name, v, sizeof(r->inputs[0].name));
		return 0;
	case OPT_DRY_RUN:
		r->dry_run = true;
		return 0;
	case OPT_LIVE:
		r->live = true;
		return 0;
	case OPT_IDLE:
	case OPT_LIFETIME:
		if (parse_range(v, 1, SBX_ARG_SESSION_MS_MAX, &u) < 0)
			return 1;
		*(id == OPT_IDLE ? &r->request.live_idle_ms : &r->request.live_lifetime_ms) = u;
		return 0;
	case OPT_ALLOW: {
		/* tighten-only: egress_narrow() checks each is the policy's */
		struct sbx_egress_rule *w = &r->egress.want[r->egress.n_want];
		const char *why;

		if (r->egress.n_want == SBX_EGRESS_MAX) {
			snprintf(err, errlen, "--allow: more than %d", SBX_EGRESS_MAX);
			return -1;
		}
		if (sbx_hostport_parse(v, w->host, &w->port, &why) < 0) {
			snprintf(err, errlen, "--allow: '%.64s': %s", v, why);
			return -1;
		}
		for (size_t j = 0; j < r->egress.n_want; j++)
			if (r->egress.want[j].port == w->port && strcmp(r->egress.want[j].host, w->host) == 0) {
				snprintf(err, errlen, "--allow: '%.64s' given twice", v);
				return -1;
			}
		r->egress.n_want++;
		return 0;
	}
	}
	return 1;
}

/* every fd named once: one fd under two names would be closed twice */
static int fds_distinct(const struct run *r, char *err, size_t errlen)
{
	int fds[2 + SBX_MAX_INPUTS + 4];
	size_t n = 0;

	fds[n++] = r->code_fd;
	fds[n++] = r->result_fd;
	for (size_t j = 0; j < r->n_inputs; j++)
		fds[n++] = r->inputs[j].fd;
	if (r->work_fd >= 0)
		fds[n++] = r->work_fd;
	if (r->stdin_fd >= 0)
		fds[n++] = r->stdin_fd;
	if (r->ws_fd >= 0)
		fds[n++] = r->ws_fd;
	if (r->cs_fd >= 0)
		fds[n++] = r->cs_fd;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (fds[a] == fds[b]) {
				snprintf(err, errlen, "fd %d named twice: every --*-fd must differ", fds[a]);
				return -1;
			}
	return 0;
}

int parse_args(int argc, char **argv, struct run *r, char *err, size_t errlen)
{
	bool seen[N_OPTS] = {false};

	r->code_fd = r->result_fd = r->work_fd = r->work_tree = r->stdin_fd = -1;
	r->image_tree = r->policy_fd = -1;
	r->ws_fd = r->ws_tree = r->cs_fd = -1;
	for (size_t i = 0; i < SBX_MAX_PATHS; i++)
		r->ro_fd[i] = r->rw_fd[i] = SRC_NONE;
	r->attempt = 1;
	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		snprintf(err, errlen, "usage: sbx-helper run --lang NAME --code-fd N --result-fd N "
			 "[--policy NAME] [...] (it is started by sbx(1)), or sbx-helper --check");
		return -1;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = ""; /* "" for --dry-run */
		size_t k;
		int rc;

		for (k = 0; k < N_OPTS; k++)
			if (strcmp(a, opts[k].name) == 0)
				break;
		if (k == N_OPTS) {
			snprintf(err, errlen, "unknown argument '%.64s'", a);
			return -1;
		}
		if (seen[k] && !opts[k].repeats) {
			snprintf(err, errlen, "%s given twice", opts[k].name);
			return -1;
		}
		seen[k] = true;
		if (opts[k].value) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value", opts[k].name);
				return -1;
			}
			v = argv[++i];
		}
		rc = take(r, opts[k].id, v, err, errlen);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			snprintf(err, errlen, "%s: invalid value '%.64s'", opts[k].name, v);
			return -1;
		}
	}
	if (r->apply && (r->lang_name[0] || r->ws_fd >= 0 || r->work_fd >= 0 || r->n_inputs > 0 || r->live ||
			 r->dry_run || r->stdin_fd >= 0)) {
		snprintf(err, errlen, "--apply takes only --code-fd (the report) and --result-fd");
		return -1;
	}
	if ((r->ws_fd >= 0) != (r->cs_fd >= 0) || (r->ws_fd >= 0 && (r->work_fd >= 0 || r->live))) {
		snprintf(err, errlen, "--workspace-fd needs --changeset-fd, and neither goes with --work-fd or --live");
		return -1;
	}
	if (r->code_fd < 0 || r->result_fd < 0 || (r->lang_name[0] == '\0' && !r->apply)) {
		snprintf(err, errlen, "--lang, --code-fd and --result-fd are required");
		return -1;
	}
	if (r->n_inputs > 0 && r->inputs[r->n_inputs - 1].name[0] == '\0') {
		snprintf(err, errlen, "--input-fd must be followed by --input-name");
		return -1;
	}
	if (r->live && r->stdin_fd >= 0) {
		snprintf(err, errlen, "--live: a live session's stdin is its call channel: no --stdin-fd");
		return -1;
	}
	return fds_distinct(r, err, errlen);
}
