/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the policy and sbx.conf parsers (common/policy.c).
 * They run as root in the helper on root-owned files, so a crash here is a
 * crash of the setuid program on an administrator's typo. Every input goes
 * through both parsers; on success the structures must hold what the
 * header promises (bounded counts, NUL-terminated strings, absolute
 * interpreter paths).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static void check_string(const char *s, size_t size)
{
	REQUIRE(memchr(s, '\0', size) != NULL);
}

static void check_policy(const struct sbx_policy *p)
{
	size_t i;

	REQUIRE(p->n_ro <= SBX_MAX_PATHS && p->n_rw <= SBX_MAX_PATHS && p->n_env <= SBX_MAX_ENV);
	check_string(p->description, sizeof(p->description));
	check_string(p->users, sizeof(p->users));
	check_string(p->groups, sizeof(p->groups));
	for (i = 0; i < p->n_ro; i++)
		check_string(p->ro[i], sizeof(p->ro[i]));
	for (i = 0; i < p->n_rw; i++)
		check_string(p->rw[i], sizeof(p->rw[i]));
	for (i = 0; i < p->n_env; i++) {
		check_string(p->env[i], sizeof(p->env[i]));
		REQUIRE(strchr(p->env[i], '=') != NULL && p->env[i][0] != '=');
	}
	REQUIRE(p->net == SBX_NET_NONE || p->net == SBX_NET_LOOPBACK || p->net == SBX_NET_ALLOW);
	/* [network]: a list exactly with mode = allow, each entry one that
	 * parses back to itself (what sbx-relay and --allow compare) */
	REQUIRE((p->net == SBX_NET_ALLOW) == (p->egress.n_allow > 0) && p->egress.n_allow <= SBX_EGRESS_MAX);
	REQUIRE(p->egress.connections >= 1 && p->egress.connections <= SBX_EGRESS_CONNECTIONS_MAX);
	REQUIRE(p->egress.bytes_out > 0 && p->egress.bytes_in > 0);
	for (i = 0; i < p->egress.n_allow; i++) {
		const struct sbx_egress_rule *r = &p->egress.allow[i];
		char hp[SBX_HOSTPORT_LEN], host[SBX_HOST_MAX + 1];
		const char *why;
		uint16_t port;
		check_string(r->host, sizeof(r->host));
		REQUIRE(r->port >= 1);
		sbx_hostport_format(r->host, r->port, hp, sizeof(hp));
		REQUIRE(sbx_hostport_parse(hp, host, &port, &why) == 0 && port == r->port && strcmp(host, r->host) == 0);
	}
	REQUIRE(p->seccomp == SBX_SECCOMP_DEFAULT || p->seccomp == SBX_SECCOMP_STRICT);
	REQUIRE(p->image[0] == '\0' || sbx_valid_name(p->image));
}

static void check_config(const struct sbx_config *c)
{
	size_t i;

	REQUIRE(c->n_langs <= SBX_MAX_LANGS);
	REQUIRE(sbx_valid_name(c->default_policy));
	check_string(c->cgroup_root, sizeof(c->cgroup_root));
	check_string(c->audit_origin, sizeof(c->audit_origin));
	for (i = 0; i < c->n_langs; i++) {
		const struct sbx_language *l = &c->langs[i];
		REQUIRE(sbx_valid_name(l->name));
		REQUIRE(l->argc >= 1 && l->argc <= SBX_MAX_ARGV && l->argv[0][0] == '/');
		REQUIRE(sbx_config_language(c, l->name) != NULL);
		REQUIRE(l->n_env <= SBX_MAX_LANG_ENV);
		for (size_t k = 0; k < l->n_env; k++) {
			check_string(l->env[k], sizeof(l->env[k]));
			REQUIRE(strchr(l->env[k], '=') != NULL && l->env[k][0] != '=');
		}
		check_string(l->search_path, sizeof(l->search_path));
		REQUIRE(l->search_path[0] == '\0' || strstr(l->search_path, "=/") != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbx_policy p;
	static struct sbx_config c;
	char err[SBX_ERR_LEN];
	/* The helper reads the file into a buffer of exactly its size: a
	 * copy lets ASan catch a read one past the end. */
	char *text = malloc(size ? size : 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	memset(&p, 0, sizeof(p));
	strcpy(p.name, "fuzz");
	err[0] = '\0';
	if (sbx_policy_parse("fuzz.policy", text, size, &p, err, sizeof(err)) == 0)
		check_policy(&p);
	else
		REQUIRE(strncmp(err, "fuzz.policy", 11) == 0);
	err[0] = '\0';
	if (sbx_config_parse("sbx.conf", text, size, &c, err, sizeof(err)) == 0)
		check_config(&c);
	else
		REQUIRE(strncmp(err, "sbx.conf", 8) == 0);
	free(text);
	return 0;
}
