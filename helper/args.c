/* SPDX-License-Identifier: ISC */
/* The helper's command line: the only caller input root code parses.
 * Grammar in common/proto.h. Strict: unknown, repeated or malformed options
 * are errors, values are validated against fixed character sets. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <bsd/string.h>

#include "helper.h"
#include "proto.h"
#include "units.h"

static int valid_token(const char *s, size_t max, bool allow_dot_first)
{
	size_t i;

	if (s[0] == '\0' || (!allow_dot_first && s[0] == '.'))
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

	if (sbx_parse_uint(v, 1023, &n) < 0 || n < 3)
		return -1;
	*fd = (int)n;
	return 0;
}

int parse_args(int argc, char **argv, struct run *r, char *err, size_t errlen)
{
	unsigned seen = 0;
	int i;

	r->code_fd = r->result_fd = r->control_fd = r->work_fd = r->work_tree = r->stdin_fd = -1;
	r->image_tree = -1;
	r->attempt = 1;
	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		snprintf(err, errlen, "usage: sbx-helper run --lang NAME --code-fd N --result-fd N "
			 "--control-fd N [--policy NAME] [...] (it is started by sbx(1)), or sbx-helper --check");
		return -1;
	}
	for (i = 2; i < argc; i++) {
		static const char *const opts[] = {"--policy", "--lang", "--name", "--code-fd",
						   "--result-fd", "--control-fd", "--timeout", "--memory",
						   "--pids", "--session", "--attempt", "--parent",
						   "--input-fd", "--input-name", "--work-fd", "--dry-run",
						   "--allow", "--stdin-fd"};
		/* --input-fd and --input-name repeat, in pairs; --allow repeats */
		const unsigned repeatable = (1u << 12) | (1u << 13) | (1u << 16);
		const char *a = argv[i], *v;
		size_t k, n = sizeof(opts) / sizeof(opts[0]);
		uint64_t u;

		for (k = 0; k < n; k++)
			if (strcmp(a, opts[k]) == 0)
				break;
		if (k == n) {
			snprintf(err, errlen, "unknown argument '%.64s'", a);
			return -1;
		}
		if ((seen & (1u << k)) && !(repeatable & (1u << k))) {
			snprintf(err, errlen, "%s given twice", opts[k]);
			return -1;
		}
		seen |= 1u << k;
		if (k == 15) {
			r->dry_run = true;
			continue;
		}
		if (i + 1 >= argc) {
			snprintf(err, errlen, "%s needs a value", opts[k]);
			return -1;
		}
		v = argv[++i];
		switch (k) {
		case 0: case 1:
			if (!sbx_valid_name(v))
				goto bad;
			strlcpy(k == 0 ? r->policy_name : r->lang_name, v, SBX_NAME_MAX + 1);
			break;
		case 2:
			if (!valid_token(v, 64, false))
				goto bad;
			strlcpy(r->code_name, v, sizeof(r->code_name));
			break;
		case 3: if (parse_fd(v, &r->code_fd) < 0) goto bad; break;
		case 4: if (parse_fd(v, &r->result_fd) < 0) goto bad; break;
		case 5: if (parse_fd(v, &r->control_fd) < 0) goto bad; break;
		case 6:
			if (sbx_parse_uint(v, 1ULL << 40, &u) < 0 || u == 0)
				goto bad;
			r->request.wall_ms = u;
			break;
		case 7:
			if (sbx_parse_uint(v, 1ULL << 50, &u) < 0 || u < (1u << 20))
				goto bad;
			r->request.memory_bytes = u;
			break;
		case 8:
			if (sbx_parse_uint(v, 1u << 22, &u) < 0 || u == 0)
				goto bad;
			r->request.pids = u;
			break;
		case 9:
			if (!valid_token(v, 64, false))
				goto bad;
			strlcpy(r->session, v, sizeof(r->session));
			break;
		case 10:
			if (sbx_parse_uint(v, SBX_MAX_ATTEMPTS, &u) < 0 || u == 0)
				goto bad;
			r->attempt = (uint32_t)u;
			break;
		case 11:
			if (!valid_id(v))
				goto bad;
			strlcpy(r->parent_id, v, sizeof(r->parent_id));
			break;
		case 12:
			if (r->n_inputs > 0 && r->inputs[r->n_inputs - 1].name[0] == '\0') {
				snprintf(err, errlen, "--input-fd must be followed by --input-name");
				return -1;
			}
			if (r->n_inputs == SBX_MAX_INPUTS) {
				snprintf(err, errlen, "more than %d --input-fd", SBX_MAX_INPUTS);
				return -1;
			}
			if (parse_fd(v, &r->inputs[r->n_inputs].fd) < 0)
				goto bad;
			r->inputs[r->n_inputs++].name[0] = '\0';
			break;
		case 13:
			/* a file name in /in: no '/', no leading dot (so no "." or "..") */
			if (r->n_inputs == 0 || r->inputs[r->n_inputs - 1].name[0] != '\0') {
				snprintf(err, errlen, "--input-name must follow --input-fd");
				return -1;
			}
			if (!valid_token(v, 64, false))
				goto bad;
			for (size_t j = 0; j + 1 < r->n_inputs; j++)
				if (strcmp(r->inputs[j].name, v) == 0) {
					snprintf(err, errlen, "--input-name: '%s' given twice", v);
					return -1;
				}
			strlcpy(r->inputs[r->n_inputs - 1].name, v, sizeof(r->inputs[0].name));
			break;
		case 14: if (parse_fd(v, &r->work_fd) < 0) goto bad; break;
		case 16: {
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
			break;
		}
		case 17: if (parse_fd(v, &r->stdin_fd) < 0) goto bad; break;
		}
		continue;
bad:
		snprintf(err, errlen, "%s: invalid value '%.64s'", opts[k], v);
		return -1;
	}
	if (r->code_fd < 0 || r->result_fd < 0 || r->control_fd < 0 || r->lang_name[0] == '\0') {
		snprintf(err, errlen, "--lang, --code-fd, --result-fd and --control-fd are required");
		return -1;
	}
	if (r->n_inputs > 0 && r->inputs[r->n_inputs - 1].name[0] == '\0') {
		snprintf(err, errlen, "--input-fd must be followed by --input-name");
		return -1;
	}
	{
		/* every fd named once: one fd under two names would be closed twice */
		int fds[3 + SBX_MAX_INPUTS + 2];
		size_t n = 0;

		fds[n++] = r->code_fd;
		fds[n++] = r->result_fd;
		fds[n++] = r->control_fd;
		for (size_t j = 0; j < r->n_inputs; j++)
			fds[n++] = r->inputs[j].fd;
		if (r->work_fd >= 0)
			fds[n++] = r->work_fd;
		if (r->stdin_fd >= 0)
			fds[n++] = r->stdin_fd;
		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++)
				if (fds[a] == fds[b]) {
					snprintf(err, errlen, "fd %d named twice: every --*-fd must differ", fds[a]);
					return -1;
				}
	}
	return 0;
}
