/* SPDX-License-Identifier: ISC */
/*
 * Policy and sbx.conf parsing. This code runs as root in the setuid helper,
 * but only on files the helper has checked are root-owned and not writable
 * by anyone else; it still rejects anything it does not understand, so a
 * typo never silently loosens a policy.
 */
#include "policy.h"
#include "limit.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stddef.h>
#include <ini.h>
#include <sha2.h> /* libmd: the helper links no libsodium */
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/string.h>

#include "units.h"

#define LINE_MAX_LEN 1000

int sbx_valid_name(const char *name)
{
	size_t i;

	if (name == NULL || !(islower((unsigned char)name[0]) || isdigit((unsigned char)name[0])))
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		unsigned char c = (unsigned char)name[i];
		if (i >= SBX_NAME_MAX)
			return 0;
		if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

void sbx_policy_defaults(struct sbx_policy *p)
{
	static const char *const ro[] = {"/usr", "/lib", "/lib64", "/bin", "/sbin",
					 "/etc/alternatives", "/etc/ssl"};
	size_t i;

	memset(p, 0, sizeof(*p));
	strlcpy(p->groups, "sbx", sizeof(p->groups));
	sbx_limits_default(&p->limits);
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		strlcpy(p->ro[i], ro[i], SBX_PATH_LEN);
	p->n_ro = i;
	p->net = SBX_NET_NONE;
	/* [network] limits, used with mode = allow only */
	p->egress.connections = 32;
	p->egress.bytes_out = 64ULL << 20;
	p->egress.bytes_in = 1ULL << 30;
	p->seccomp = SBX_SECCOMP_DEFAULT;
	/* a writable host directory only where a policy says so (DESIGN.md:
	 * nothing writable but /tmp, /out and what the policy allows) */
	p->sessions = 0;
	/* a read-only view of the caller's own directory; changes stay in a
	 * tmpfs until the caller applies them (sbx(1) WORKSPACES) */
	p->workspaces = 1;
}

/* libinih reads through this so that errors can name the line. */
struct reader {
	const char *p, *end;
	int line;
	bool too_long;
};

static char *read_line(char *buf, int size, void *stream)
{
	struct reader *r = stream;
	size_t n = 0;

	if (r->p >= r->end)
		return NULL;
	while (r->p < r->end && n + 1 < (size_t)size) {
		char c = *r->p++;
		buf[n++] = c;
		if (c == '\n')
			break;
	}
	buf[n] = '\0';
	if (n + 1 >= (size_t)size && buf[n - 1] != '\n' && r->p < r->end)
		r->too_long = true;
	if (memchr(buf, '\0', n) != NULL)
		r->too_long = true;
	r->line++;
	return buf;
}

struct parse_ctx {
	struct reader rd;
	const char *file;
	char *err;
	size_t errlen;
	bool failed;
	struct sbx_policy *pol;
	struct sbx_config *conf;
	/* keys seen, to reject duplicates (a later line silently winning is a trap) */
	char seen[64][80];
	size_t n_seen;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct parse_ctx *c, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	if (!c->failed) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(c->err, c->errlen, "%s:%d: %s", c->file, c->rd.line, why);
	}
	c->failed = true;
	return 0;
}

static bool seen_key(const struct parse_ctx *c, const char *section, const char *name)
{
	char key[80];

	snprintf(key, sizeof(key), "%s.%s", section, name);
	for (size_t i = 0; i < c->n_seen; i++)
		if (strcmp(c->seen[i], key) == 0)
			return true;
	return false;
}

/* true if section.name was given before; otherwise remembers it */
static bool duplicate(struct parse_ctx *c, const char *section, const char *name)
{
	char key[80];

	if (seen_key(c, section, name))
		return true;
	snprintf(key, sizeof(key), "%s.%s", section, name);
	if (c->n_seen < sizeof(c->seen) / sizeof(c->seen[0]))
		strlcpy(c->seen[c->n_seen++], key, sizeof(c->seen[0]));
	return false;
}

/*
 * What the sandbox makes for itself (helper/mounts.c): fresh tmpfs and
 * mounts at these directories, generated files in /etc. A host path at or
 * below one of the directories would be hidden by the sandbox's own mount
 * (silently: the new root is built on /tmp, so a host path under /tmp is
 * not even reachable while it is built), and one at or above a generated
 * file would hide it; the host's /tmp is also everyone's to write. Such
 * ro/rw paths are refused by the parser, naming the file and line.
 */
static const char *const sandbox_dirs[] = {"/tmp", "/out", "/code", "/in", "/work", "/sbx", "/proc", "/dev"};
static const char *const sandbox_files[] = {"/etc/passwd", "/etc/group", "/etc/hosts",
					    "/etc/hostname", "/etc/nsswitch.conf", "/etc/resolv.conf"};

/* true if a is b or a directory above it ("/" is above everything) */
static bool path_covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* The sandbox path a policy path clashes with, or NULL. */
static const char *sandbox_clash(const char *path, bool *below)
{
	for (size_t i = 0; i < sizeof(sandbox_dirs) / sizeof(sandbox_dirs[0]); i++) {
		*below = path_covers(sandbox_dirs[i], path);
		if (*below || path_covers(path, sandbox_dirs[i]))
			return sandbox_dirs[i];
	}
	*below = false;
	for (size_t i = 0; i < sizeof(sandbox_files) / sizeof(sandbox_files[0]); i++)
		if (path_covers(path, sandbox_files[i]))
			return sandbox_files[i];
	return NULL;
}

/*
 * An absolute path in the one spelling the clash checks below compare:
 * "/etc/" and "//etc" name /etc to the kernel (path_resolution(7)) but not
 * to strcmp, so they are refused rather than rewritten (the policy says
 * what the administrator wrote, and the error says where).
 */
static bool normalised(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n >= SBX_PATH_LEN || strstr(p, "//") != NULL || (n > 1 && p[n - 1] == '/'))
		return false;
	for (const char *c = p; c != NULL; c = strchr(c + 1, '/'))
		if (strcmp(c, "/.") == 0 || strncmp(c, "/./", 3) == 0 || strcmp(c, "/..") == 0 ||
		    strncmp(c, "/../", 4) == 0)
			return false;
	return true;
}

/* Space-separated list into fixed slots. */
static int split_list(struct parse_ctx *c, const char *key, const char *value,
		      char (*slots)[SBX_PATH_LEN], size_t max, size_t *n, bool paths)
{
	char buf[LINE_MAX_LEN + 1];
	char *tok, *save = NULL;

	strlcpy(buf, value, sizeof(buf));
	*n = 0;
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (*n == max)
			return fail(c, "%s: more than %zu entries", key, max);
		if (paths && !normalised(tok))
			return fail(c, "%s: '%s' is not a normalised absolute path (no //, no trailing /, no . "
				    "or .. component)", key, tok);
		if (paths) {
			bool below;
			const char *clash = sandbox_clash(tok, &below);

			if (clash && below)
				return fail(c, "%s: '%s' is inside the sandbox's own %s (made fresh for every run): "
					    "a host path there cannot be granted", key, tok, clash);
			if (clash)
				return fail(c, "%s: '%s' would hide the sandbox's own %s: list the paths below it instead",
					    key, tok, clash);
		}
		if (strlcpy(slots[(*n)++], tok, SBX_PATH_LEN) >= SBX_PATH_LEN)
			return fail(c, "%s: '%s' too long", key, tok);
	}
	return 1;
}

/* A variable name as sh(1) takes it: [A-Za-z_][A-Za-z0-9_]*, n bytes. */
static bool env_name(const char *s, size_t n)
{
	if (n == 0 || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* Space-separated KEY=VALUE entries into fixed slots of 256 bytes. */
static int env_list(struct parse_ctx *c, const char *key, const char *value, char (*slots)[256], size_t max,
		    size_t *n)
{
	char buf[LINE_MAX_LEN + 1];
	char *tok, *save = NULL;

	strlcpy(buf, value, sizeof(buf));
	*n = 0;
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		if (eq == NULL || !env_name(tok, (size_t)(eq - tok)))
			return fail(c, "%s: '%s' is not KEY=VALUE", key, tok);
		if (*n == max || strlen(tok) >= 256)
			return fail(c, "%s: too many or too long entries at '%s'", key, tok);
		strlcpy(slots[(*n)++], tok, 256);
	}
	return 1;
}

static int limits_key(struct parse_ctx *c, const char *name, const char *v)
{
	const struct sbx_limit_def *d = sbx_limit_by_key(name);
	const char *why;
	char max[32];
	uint64_t val;
	int rc;

	if (d == NULL)
		return fail(c, "unknown key '%s' in [%s]", name, "limits");
	rc = sbx_limit_parse(d, v, &val, &why);
	if (rc == -2) {
		sbx_limit_format(d, d->max, max, sizeof(max));
		return fail(c, "%s: '%s' is %s (%s)", name, v, why, max);
	}
	if (rc < 0)
		return fail(c, "%s: '%s' is %s", name, v, why);
	sbx_limit_set(&c->pol->limits, d->id, val);
	return 1;
}

/* What every key of a policy and of sbx.conf is checked for first: 1, or
 * 0 (the ini handler's stop) with the first error kept. */
static int entry_ok(struct parse_ctx *c, const char *section, const char *name)
{
	if (c->failed)
		return 0;
	if (c->rd.too_long)
		return fail(c, "line longer than %d bytes or holds a NUL byte", LINE_MAX_LEN);
	if (duplicate(c, section, name))
		return fail(c, "key '%s' given twice in [%s]", name, section);
	return 1;
}

static int policy_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *c = user;
	struct sbx_policy *p = c->pol;

	if (!entry_ok(c, section, name))
		return 0;
	if (strcmp(section, "policy") == 0) {
		if (strcmp(name, "description") == 0) {
			strlcpy(p->description, value, sizeof(p->description));
			return 1;
		}
		if (strcmp(name, "users") == 0) {
			if (strlcpy(p->users, value, sizeof(p->users)) >= sizeof(p->users))
				return fail(c, "%s: too long", name);
			return 1;
		}
		if (strcmp(name, "groups") == 0) {
			if (strlcpy(p->groups, value, sizeof(p->groups)) >= sizeof(p->groups))
				return fail(c, "%s: too long", name);
			return 1;
		}
		return fail(c, "unknown key '%s' in [%s]", name, section);
	}
	if (strcmp(section, "limits") == 0)
		return limits_key(c, name, value);
	if (strcmp(section, "filesystem") == 0) {
		if (strcmp(name, "ro") == 0)
			return split_list(c, name, value, p->ro, SBX_MAX_PATHS, &p->n_ro, true);
		if (strcmp(name, "rw") == 0)
			return split_list(c, name, value, p->rw, SBX_MAX_PATHS, &p->n_rw, true);
		if (strcmp(name, "sessions") == 0) {
			if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
				return fail(c, "sessions: '%s' is not one of yes, no", value);
			p->sessions = value[0] == 'y';
			return 1;
		}
		if (strcmp(name, "workspaces") == 0) {
			if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
				return fail(c, "workspaces: '%s' is not one of yes, no", value);
			p->workspaces = value[0] == 'y';
			return 1;
		}
		if (strcmp(name, "image") == 0) {
			/* the name becomes a path under the images directory */
			if (!sbx_valid_name(value))
				return fail(c, "image: '%s' is not an image name ([a-z0-9][a-z0-9_-]*, "
					    "at most %d characters)", value, SBX_NAME_MAX);
			strlcpy(p->image, value, sizeof(p->image));
			return 1;
		}
		return fail(c, "unknown key '%s' in [%s]", name, section);
	}
	if (strcmp(section, "network") == 0) {
		char why[400];

		if (sbx_network_key(p, name, value, c->rd.line, why, sizeof(why)) < 0)
			return fail(c, "%s", why);
		return 1;
	}
	if (strcmp(section, "seccomp") == 0) {
		if (strcmp(name, "profile") != 0)
			return fail(c, "unknown key '%s' in [%s]", name, section);
		if (strcmp(value, "default") == 0)
			p->seccomp = SBX_SECCOMP_DEFAULT;
		else if (strcmp(value, "strict") == 0)
			p->seccomp = SBX_SECCOMP_STRICT;
		else
			return fail(c, "profile: '%s' is not one of default, strict", value);
		return 1;
	}
	if (strcmp(section, "env") == 0) {
		if (strcmp(name, "set") != 0)
			return fail(c, "unknown key '%s' in [%s]", name, section);
		return env_list(c, name, value, p->env, SBX_MAX_ENV, &p->n_env);
	}
	return fail(c, "unknown section [%s]", section);
}

static void ini_setup(void)
{
	/* libinih's defaults: 200-byte lines on the stack and only ';' inline
	 * comments. Policies document '#' comments after values. */
	ini_use_stack = false;
	ini_max_line = LINE_MAX_LEN + 3;
	ini_allow_realloc = false;
	ini_inline_comment_prefixes = (char *)";#";
	ini_allow_multiline = false;
	ini_stop_on_first_error = true;
}

static int run_parser(struct parse_ctx *c, const char *text, size_t len, ini_handler h)
{
	int rc;

	c->rd = (struct reader){.p = text, .end = text + len, .line = 0};
	ini_setup();
	rc = ini_parse_stream(read_line, &c->rd, h, c);
	if (c->failed)
		return -1;
	if (c->rd.too_long) {
		fail(c, "line longer than %d bytes or holds a NUL byte", LINE_MAX_LEN);
		return -1;
	}
	if (rc != 0) {
		snprintf(c->err, c->errlen, "%s:%d: %s", c->file, rc > 0 ? rc : c->rd.line,
			 rc > 0 ? "syntax error (expected [section] or key = value)" : "cannot parse");
		return -1;
	}
	return 0;
}

int sbx_policy_parse(const char *file, const char *text, size_t len,
		     struct sbx_policy *p, char *err, size_t errlen)
{
	struct parse_ctx c = {.file = file, .err = err, .errlen = errlen, .pol = p};
	char name[SBX_NAME_MAX + 1];

	strlcpy(name, p->name, sizeof(name));
	sbx_policy_defaults(p);
	strlcpy(p->name, name, sizeof(p->name));
	{
		SHA2_CTX h;

		SHA256Init(&h);
		SHA256Update(&h, (const uint8_t *)text, len);
		SHA256Final(p->sha256, &h);
	}
	if (run_parser(&c, text, len, policy_handler) < 0)
		return -1;
	{
		char why[256];
		int line = 0;

		if (sbx_network_finish(p, &line, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%d: %s", file, line, why);
			return -1;
		}
	}
	/* Naming users restricts the policy to them: the default "groups = sbx"
	 * must not silently add everyone back. */
	if (p->users[0] != '\0' && !seen_key(&c, "policy", "groups"))
		p->groups[0] = '\0';
	return 0;
}

/* The whole-number keys of [sbx]: name, field, range (sbx.conf(5)). */
struct config_count {
	const char *name;
	size_t offset;
	uint64_t min, max;
};
static const struct config_count config_counts[] = {
	{"checkpoint_records", offsetof(struct sbx_config, checkpoint_records), 0, 100000000},
	{"checkpoint_seconds", offsetof(struct sbx_config, checkpoint_seconds), 0, 100000000},
	{"max_runs_per_user", offsetof(struct sbx_config, max_runs_per_user), 1, 4096},
	{"max_requests_per_minute", offsetof(struct sbx_config, max_requests_per_minute), 1, 1000000},
};

/* cgroup_nest: "none", or absolute cgroup paths separated by spaces. */
static int config_nest(struct parse_ctx *c, struct sbx_config *conf, const char *value)
{
	if (strcmp(value, "none") == 0) {
		conf->cgroup_nest[0] = '\0';
		return 1;
	}
	if (strlcpy(conf->cgroup_nest, value, sizeof(conf->cgroup_nest)) >= sizeof(conf->cgroup_nest))
		return fail(c, "cgroup_nest: longer than %d bytes", SBX_PATH_LEN - 1);
	for (const char *p = value; *p != '\0'; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");
		if (p[0] != '/' || memmem(p, n, "..", 2) != NULL || memchr(p, '\t', n) != NULL)
			return fail(c, "cgroup_nest: '%.*s' is not an absolute cgroup path (or \"none\")", (int)n, p);
		p += n;
	}
	return 1;
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *c = user;
	struct sbx_config *conf = c->conf;

	if (!entry_ok(c, section, name))
		return 0;
	if (strcmp(section, "sbx") == 0) {
		if (strcmp(name, "cgroup_root") == 0) {
			if (value[0] != '/' || strstr(value, "..") != NULL ||
			    strlcpy(conf->cgroup_root, value, sizeof(conf->cgroup_root)) >= sizeof(conf->cgroup_root))
				return fail(c, "cgroup_root: '%s' is not an absolute path", value);
			return 1;
		}
		if (strcmp(name, "cgroup_nest") == 0)
			return config_nest(c, conf, value);
		if (strcmp(name, "default_policy") == 0) {
			if (!sbx_valid_name(value))
				return fail(c, "default_policy: '%s' is not a policy name", value);
			strlcpy(conf->default_policy, value, sizeof(conf->default_policy));
			return 1;
		}
		if (strcmp(name, "audit_code_per_day") == 0) {
			if (sbx_parse_size(value, &conf->audit_code_per_day) < 0 || conf->audit_code_per_day == 0)
				return fail(c, "audit_code_per_day: '%s' is not a size (examples: 1G, 256M)", value);
			return 1;
		}
		/* read by the recorder as _sbx, never by root (recorder/ckptwitness.c) */
		if (strcmp(name, "audit_witness_dir") == 0) {
			if (value[0] != '/' || strstr(value, "/..") != NULL ||
			    strlcpy(conf->audit_witness_dir, value, sizeof(conf->audit_witness_dir)) >=
				    sizeof(conf->audit_witness_dir))
				return fail(c, "audit_witness_dir: '%s' is not an absolute path of at most %d bytes",
					    value, SBX_PATH_LEN - 1);
			return 1;
		}
		if (strcmp(name, "audit_witness_command") == 0) {
			if (value[0] != '/' ||
			    strlcpy(conf->audit_witness_command, value, sizeof(conf->audit_witness_command)) >=
				    sizeof(conf->audit_witness_command))
				return fail(c, "audit_witness_command: '%s' must start with an absolute path (at most "
					    "%d bytes)", value, SBX_WITNESS_CMD_LEN - 1);
			return 1;
		}
		if (strcmp(name, "audit_origin") == 0) {
			if (strlcpy(conf->audit_origin, value, sizeof(conf->audit_origin)) >= sizeof(conf->audit_origin))
				return fail(c, "audit_origin: too long");
			return 1;
		}
		for (size_t i = 0; i < sizeof(config_counts) / sizeof(config_counts[0]); i++) {
			const struct config_count *k = &config_counts[i];
			uint64_t *dst = (uint64_t *)((char *)conf + k->offset), v;
			char *end;

			if (strcmp(name, k->name) != 0)
				continue;
			errno = 0;
			if (value[0] < '0' || value[0] > '9')
				return fail(c, "%s: '%s' is not a whole number", name, value);
			v = strtoull(value, &end, 10);
			if (errno != 0 || *end != '\0' || v < k->min || v > k->max)
				return fail(c, "%s: '%s' is not a whole number from %llu to %llu", name, value,
					    (unsigned long long)k->min, (unsigned long long)k->max);
			*dst = v;
			return 1;
		}
		return fail(c, "unknown key '%s' in [%s]", name, section);
	}
	if (strncmp(section, "language.", 9) == 0) {
		const char *lname = section + 9;
		struct sbx_language *l = NULL;
		size_t i;

		if (!sbx_valid_name(lname))
			return fail(c, "[%s]: '%s' is not a language name", section, lname);
		for (i = 0; i < conf->n_langs; i++)
			if (strcmp(conf->langs[i].name, lname) == 0)
				l = &conf->langs[i];
		if (l == NULL) {
			if (conf->n_langs == SBX_MAX_LANGS)
				return fail(c, "too many languages at [%s]", section);
			l = &conf->langs[conf->n_langs++];
			strlcpy(l->name, lname, sizeof(l->name));
		}
		if (strcmp(name, "command") == 0) {
			int ok = split_list(c, name, value, l->argv, SBX_MAX_ARGV, &l->argc, false);
			if (ok && (l->argc == 0 || l->argv[0][0] != '/'))
				return fail(c, "command: '%s' must start with an absolute path", value);
			return ok;
		}
		if (strcmp(name, "env") == 0)
			return env_list(c, name, value, l->env, SBX_MAX_LANG_ENV, &l->n_env);
		if (strcmp(name, "search_path") == 0) {
			const char *eq = strchr(value, '=');
			bool ok = eq != NULL && env_name(value, (size_t)(eq - value)) && eq[1] == '/' &&
				  strpbrk(value, " \t") == NULL && strstr(value, "::") == NULL &&
				  strstr(value, "/..") == NULL && value[strlen(value) - 1] != ':';
			for (const char *d = eq ? strchr(eq, ':') : NULL; ok && d != NULL; d = strchr(d + 1, ':'))
				ok = d[1] == '/';
			if (!ok || strlcpy(l->search_path, value, sizeof(l->search_path)) >= sizeof(l->search_path))
				return fail(c, "search_path: '%s' is not VAR=/DIR[:/DIR...]", value);
			return 1;
		}
		if (strcmp(name, "live_driver") == 0) {
			/* sbx's own tree the sandbox sees at /sbx: the client reads
			 * the same file (SBX_DATADIR/sbx/sandbox) and sends it as the
			 * session's code */
			if (strncmp(value, "/sbx/", 5) != 0 || strstr(value, "/..") != NULL ||
			    strpbrk(value, " \t") != NULL ||
			    strlcpy(l->live_driver, value, sizeof(l->live_driver)) >= sizeof(l->live_driver))
				return fail(c, "live_driver: '%s' is not a file under /sbx/", value);
			return 1;
		}
		if (strcmp(name, "extension") == 0) {
			if (value[0] != '.' || strlen(value) >= sizeof(l->extension) || strchr(value, '/'))
				return fail(c, "extension: '%s' is not a suffix like .py", value);
			strlcpy(l->extension, value, sizeof(l->extension));
			return 1;
		}
		return fail(c, "unknown key '%s' in [%s]", name, section);
	}
	return fail(c, "unknown section [%s]", section);
}

int sbx_config_parse(const char *file, const char *text, size_t len,
		     struct sbx_config *conf, char *err, size_t errlen)
{
	struct parse_ctx c = {.file = file, .err = err, .errlen = errlen, .conf = conf};
	size_t i;

	memset(conf, 0, sizeof(*conf));
	strlcpy(conf->default_policy, "default", sizeof(conf->default_policy));
	strlcpy(conf->cgroup_nest, SBX_CGROUP_NEST_DEFAULT, sizeof(conf->cgroup_nest));
	conf->checkpoint_records = 100;
	conf->checkpoint_seconds = 600;
	conf->max_runs_per_user = SBX_MAX_RUNS_PER_USER;
	conf->max_requests_per_minute = SBX_MAX_REQUESTS_PER_MINUTE;
	conf->audit_code_per_day = SBX_AUDIT_CODE_PER_DAY;
	if (run_parser(&c, text, len, config_handler) < 0)
		return -1;
	for (i = 0; i < conf->n_langs; i++)
		if (conf->langs[i].argc == 0) {
			snprintf(err, errlen, "%s: [language.%s] has no command", file, conf->langs[i].name);
			return -1;
		}
	return 0;
}

static int in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
			return 1;
		p += n;
	}
	return 0;
}

int sbx_policy_allows(const struct sbx_policy *p, const char *user,
		      int (*in_group)(const char *group, void *ctx), void *ctx)
{
	char buf[sizeof(p->groups)];
	char *tok, *save = NULL;

	if (p->users[0] != '\0' && in_list(p->users, user))
		return 1;
	if (p->groups[0] == '\0')
		return p->users[0] == '\0';
	strlcpy(buf, p->groups, sizeof(buf));
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		if (in_group(tok, ctx))
			return 1;
	return 0;
}

const struct sbx_language *sbx_config_language(const struct sbx_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_langs; i++)
		if (strcmp(c->langs[i].name, name) == 0)
			return &c->langs[i];
	return NULL;
}

int sbx_limits_tighten(struct sbx_limits *eff, const struct sbx_limits *req, const char *policy,
		       char *err, size_t errlen)
{
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];
		uint64_t e = sbx_limit_get(eff, d->id), r = sbx_limit_get(req, d->id);
		char want[32], cap[32];

		if (r == 0)
			continue;
		if (r > e) {
			/* in the caller's words and the policy's units (limit.h) */
			sbx_limit_format(d, r, want, sizeof(want));
			sbx_limit_format(d, e, cap, sizeof(cap));
			snprintf(err, errlen, "%s %s exceeds policy %s's %s %s", d->option ? d->option : d->key,
				 want, policy != NULL ? policy : "?", d->key, cap);
			return -1;
		}
		sbx_limit_set(eff, d->id, r);
	}
	return 0;
}

/* sbx.conf cgroup_nest (helper/cgcaller.c) */
bool sbx_cgroup_nest_matches(const char *list, const char *path)
{
	char pat[SBX_PATH_LEN], head[PATH_MAX];

	for (const char *p = list; *p != '\0';) {
		size_t n = strcspn(p, " "), k = 0, h = 0;

		if (n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			while (n > 1 && pat[n - 1] == '/')
				pat[--n] = '\0';
			for (size_t j = 0; pat[j]; j++)
				k += pat[j] == '/';
			/* the first k components of path */
			while (h < sizeof(head) - 1 && path[h] != '\0') {
				if (path[h] == '/' && k-- == 0)
					break;
				h++;
			}
			memcpy(head, path, h);
			head[h] = '\0';
			if (fnmatch(pat, head, FNM_PATHNAME) == 0)
				return true;
		}
		p += strcspn(p, " ");
		p += strspn(p, " ");
	}
	return false;
}
