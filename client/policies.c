/* SPDX-License-Identifier: ISC */
#include "policies.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <bsd/string.h>

#include "version.h"
#include "access.h"
#include "cli.h"
#include "fail.h"
#include "limit.h"
#include "limitjson.h"
#include "paths.h"
#include "policy.h"
#include "proto.h"

#define FILE_MAX (256u << 10) /* as the helper's CONF_MAX */

static int read_text(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char *buf;
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return -1;
	buf = malloc(FILE_MAX + 1);
	if (buf == NULL)
		cli_die("policies", "out of memory");
	while ((n = read(fd, buf + got, FILE_MAX + 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (n < 0 || got > FILE_MAX) {
		free(buf);
		errno = n < 0 ? errno : EFBIG;
		return -1;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

static int group_cb(const char *name, void *ctx)
{
	struct group *gr = getgrnam(name);

	(void)ctx;
	return gr != NULL && caller_in_gid(gr->gr_gid);
}

/* The name the helper uses for the caller (helper/load.c lookup_caller). */
static void user_name(char *out, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	bool ok = pw != NULL && pw->pw_name[0] != '\0' && strlen(pw->pw_name) <= 32;

	for (const char *s = ok ? pw->pw_name : ""; ok && *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-' || *s == '.'))
			ok = false;
	if (ok)
		strlcpy(out, pw->pw_name, len);
	else
		snprintf(out, len, "uid%u", (unsigned)getuid());
}

#define CONF_PATH SBX_SYSCONFDIR "/sbx/sbx.conf"

/* sbx.conf parsed with the helper's parser, or NULL (unreadable, invalid:
 * then the helper reports it). Free with free(). */
static struct sbx_config *read_config(void)
{
	struct sbx_config *c = calloc(1, sizeof(*c));
	char err[SBX_ERR_LEN], *text;
	size_t n;

	if (c == NULL || read_text(CONF_PATH, &text, &n) < 0) {
		free(c);
		return NULL;
	}
	if (sbx_config_parse(CONF_PATH, text, n, c, err, sizeof(err)) < 0) {
		free(c);
		c = NULL;
	}
	free(text);
	return c;
}

static void default_policy(char *out, size_t len)
{
	struct sbx_config *c = read_config();

	strlcpy(out, c != NULL ? c->default_policy : "default", len);
	free(c);
}

void policies_check_language(const char *lang)
{
	struct sbx_config *c = read_config();
	char names[SBX_MAX_LANGS * (SBX_NAME_MAX + 2) + 1] = "";

	if (c == NULL || sbx_config_language(c, lang) != NULL) {
		free(c);
		return;
	}
	for (size_t i = 0; i < c->n_langs; i++) {
		if (i > 0)
			strlcat(names, ", ", sizeof(names));
		strlcat(names, c->langs[i].name, sizeof(names));
	}
	free(c);
	cli_die_code("unknown_language", "--lang", "no language '%s' in %s; there are: %s", lang, CONF_PATH,
		     names[0] ? names : "none");
}

int policies_live_driver(const char *lang, char *out, size_t len)
{
	struct sbx_config *c = read_config();
	const struct sbx_language *l = c != NULL ? sbx_config_language(c, lang) : NULL;
	int rc = c == NULL ? -1 : l == NULL ? -2 : l->live_driver[0] == '\0' ? -3 : 0;

	/* /sbx/X in the sandbox is SBX_DATADIR/sbx/sandbox/X here */
	if (rc == 0 && snprintf(out, len, "%s/sbx/sandbox/%s", SBX_DATADIR, l->live_driver + 5) >= (int)len)
		rc = -1;
	free(c);
	return rc;
}

void policy_limits(const char *name, struct sbx_limits *out, char *resolved, size_t len)
{
	struct sbx_policy *p = calloc(1, sizeof(*p));
	char dflt[SBX_NAME_MAX + 1], path[PATH_MAX], err[SBX_ERR_LEN], *text;
	size_t n;

	if (p == NULL)
		cli_die("policy", "out of memory");
	sbx_policy_defaults(p);
	*out = p->limits;
	if (name == NULL) {
		default_policy(dflt, sizeof(dflt));
		name = dflt;
	}
	strlcpy(resolved, name, len);
	snprintf(path, sizeof(path), "%s/sbx/policies.d/%s.policy", SBX_SYSCONFDIR, name);
	if (sbx_valid_name(name) && read_text(path, &text, &n) == 0) {
		if (sbx_policy_parse(path, text, n, p, err, sizeof(err)) == 0)
			*out = p->limits;
		free(text);
	}
	free(p);
}

/* The limits `sbx policies` shows, as columns: header and width. */
static const struct {
	const char *head;
	enum sbx_limit id;
	int width;
} columns[] = {
	{"WALL", SBX_LIMIT_WALL_TIME, 7}, {"CPU", SBX_LIMIT_CPU_TIME, 7}, {"MEMORY", SBX_LIMIT_MEMORY, 7},
	{"PIDS", SBX_LIMIT_PIDS, 6}, {"CPUS", SBX_LIMIT_CPUS, 5}, {"TMP", SBX_LIMIT_TMP_SIZE, 6},
	{"OUT", SBX_LIMIT_OUT_SIZE, 6}, {"INPUT", SBX_LIMIT_INPUT_SIZE, 6}, {"OUTPUT", SBX_LIMIT_OUTPUT, 6},
};

static void print_header(void)
{
	printf(" %-15s", "NAME");
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		printf(" %*s", columns[i].width, columns[i].head);
	printf(" %-8s %-7s %-8s %s\n", "NETWORK", "SECCOMP", "SESSIONS", "DESCRIPTION");
}

/* Each limit as the policy would write it (limit.h). */
static void print_row(const struct sbx_policy *p, bool dflt)
{
	char v[32];

	printf("%s%-15s", dflt ? "*" : " ", p->name);
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[columns[i].id];

		sbx_limit_format(d, sbx_limit_get(&p->limits, d->id), v, sizeof(v));
		printf(" %*s", columns[i].width, v);
	}
	printf(" %-8s %-7s %-8s %s\n", sbx_net_mode_name(p->net),
	       p->seccomp == SBX_SECCOMP_STRICT ? "strict" : "default", p->sessions ? "yes" : "no", p->description);
	/* the services of [network] mode = allow, on a line of their own */
	if (p->net == SBX_NET_ALLOW) {
		printf("%-16s allow:", "");
		for (size_t i = 0; i < p->egress.n_allow; i++) {
			char hp[SBX_HOSTPORT_LEN];
			sbx_hostport_format(p->egress.allow[i].host, p->egress.allow[i].port, hp, sizeof(hp));
			printf(" %s", hp);
		}
		putchar('\n');
	}
	/* a curated image instead of the host's /usr (sbx-image(8)) */
	if (p->image[0])
		printf("%-16s image: %s (sbx-image show %s lists its packages)\n", "", p->image, p->image);
}

static json_t *allow_json(const struct sbx_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->egress.n_allow; i++) {
		char hp[SBX_HOSTPORT_LEN];
		sbx_hostport_format(p->egress.allow[i].host, p->egress.allow[i].port, hp, sizeof(hp));
		json_array_append_new(a, json_string(hp));
	}
	return a;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int policies_main(int argc, char **argv)
{
	const char *dir = SBX_SYSCONFDIR "/sbx/policies.d";
	struct sbx_policy *p = malloc(sizeof(*p));
	char user[65], dflt[SBX_NAME_MAX + 1], path[PATH_MAX + 300], err[SBX_ERR_LEN];
	struct dirent **ents;
	struct group *sbx;
	json_t *arr = json_array();
	bool json = false;
	int n;

	cli_std_opts(argc, argv, cli_usage_policies, NULL);
	if (argc == 2 && strcmp(argv[1], "--json") == 0)
		json = cli_json_errors = true;
	else if (argc != 1)
		cli_die_usage("policies", "unexpected argument '%s' (see sbx policies --help)", argv[1]);
	if (p == NULL)
		cli_die("policies", "out of memory");
	user_name(user, sizeof(user));
	default_policy(dflt, sizeof(dflt));
	sbx = getgrnam("sbx");
	if (sbx == NULL || !caller_in_gid(sbx->gr_gid))
		cli_warn("policies", "user %s is not in group sbx: no policy is usable", user);
	n = scandir(dir, &ents, NULL, by_name);
	if (n < 0)
		cli_die("policies", "%s: %s", dir, strerror(errno));
	if (!json)
		print_header();
	for (int i = 0; i < n; i++) {
		char name[SBX_NAME_MAX + 1], *text;
		size_t len = strlen(ents[i]->d_name);

		if (len <= 7 || strcmp(ents[i]->d_name + len - 7, ".policy") != 0 || len - 7 > SBX_NAME_MAX)
			goto next;
		memcpy(name, ents[i]->d_name, len - 7);
		name[len - 7] = '\0';
		if (!sbx_valid_name(name) || sbx == NULL || !caller_in_gid(sbx->gr_gid))
			goto next;
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (read_text(path, &text, &len) < 0) {
			snprintf(err, sizeof(err), "unreadable: %s", strerror(errno));
			goto bad;
		}
		memset(p, 0, sizeof(*p));
		strlcpy(p->name, name, sizeof(p->name));
		if (sbx_policy_parse(path, text, len, p, err, sizeof(err)) < 0) {
			free(text);
			goto bad;
		}
		free(text);
		if (!sbx_policy_allows(p, user, group_cb, NULL))
			goto next;
		if (json) {
			json_t *o = json_pack("{s:s,s:b,s:s,s:o,s:s,s:s,s:b}", "name", name, "default",
					      strcmp(name, dflt) == 0, "description", p->description, "limits",
					      sbx_limits_json(&p->limits), "network",
					      sbx_net_mode_name(p->net), "seccomp",
					      p->seccomp == SBX_SECCOMP_STRICT ? "strict" : "default", "sessions",
					      p->sessions != 0);
			if (p->net == SBX_NET_ALLOW)
				json_object_set_new(o, "allow", allow_json(p));
			/* null: the host's /usr */
			json_object_set_new(o, "image", p->image[0] ? json_string(p->image) : json_null());
			json_array_append_new(arr, o);
		} else {
			print_row(p, strcmp(name, dflt) == 0);
		}
		goto next;
bad:
		if (json)
			json_array_append_new(arr, json_pack("{s:s,s:b,s:s}", "name", name, "default",
							     strcmp(name, dflt) == 0, "error", err));
		else
			printf("%s%-15s (%s)\n", strcmp(name, dflt) == 0 ? "*" : " ", name, err);
next:
		free(ents[i]);
	}
	free(ents);
	free(p);
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s ? s : "[]");
		free(s);
	}
	json_decref(arr);
	return 0;
}
