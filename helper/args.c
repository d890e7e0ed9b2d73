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

	r->code_fd = r->result_fd = r->control_fd = -1;
	r->attempt = 1;
	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		snprintf(err, errlen, "usage: sbx-helper run --lang NAME --code-fd N --result-fd N "
			 "--control-fd N [--policy NAME] [...] (it is started by sbx(1)), or sbx-helper --check");
		return -1;
	}
	for (i = 2; i < argc; i++) {
		static const char *const opts[] = {"--policy", "--lang", "--name", "--code-fd",
						   "--result-fd", "--control-fd", "--timeout", "--memory",
						   "--pids", "--session", "--attempt", "--parent"};
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
		if (seen & (1u << k)) {
			snprintf(err, errlen, "%s given twice", opts[k]);
			return -1;
		}
		seen |= 1u << k;
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
	if (r->code_fd == r->result_fd || r->code_fd == r->control_fd || r->result_fd == r->control_fd) {
		snprintf(err, errlen, "--code-fd, --result-fd and --control-fd must differ");
		return -1;
	}
	return 0;
}
