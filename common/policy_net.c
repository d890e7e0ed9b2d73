/* SPDX-License-Identifier: ISC */
/*
 * A policy's [network] section (sbx.policy(5)): mode, and for mode = allow
 * the services (allow = HOST:PORT ...) and the per-run limits on them.
 * Root parses this in the setuid helper, from a root-owned file only; it
 * resolves nothing (names are resolved by sbx-relay as _sbxnet, per run).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <bsd/string.h>

#include "policy.h"
#include "units.h"

static const char *const mode_names[] = {
	[SBX_NET_NONE] = "none",
	[SBX_NET_LOOPBACK] = "loopback",
	[SBX_NET_ALLOW] = "allow",
};

const char *sbx_net_mode_name(int mode)
{
	if (mode < 0 || (size_t)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return NULL;
	return mode_names[mode];
}

static int allow_list(struct sbx_egress *e, const char *value, int line, char *why, size_t whylen)
{
	char buf[1024], *tok, *save = NULL;

	if (strlcpy(buf, value, sizeof(buf)) >= sizeof(buf)) {
		snprintf(why, whylen, "allow: too long");
		return -1;
	}
	e->n_allow = 0;
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		struct sbx_egress_rule *r = &e->allow[e->n_allow];
		const char *bad;

		if (e->n_allow == SBX_EGRESS_MAX) {
			snprintf(why, whylen, "allow: more than %d entries", SBX_EGRESS_MAX);
			return -1;
		}
		if (sbx_hostport_parse(tok, r->host, &r->port, &bad) < 0) {
			snprintf(why, whylen, "allow: '%.300s': %s", tok, bad);
			return -1;
		}
		for (size_t i = 0; i < e->n_allow; i++)
			if (e->allow[i].port == r->port && strcmp(e->allow[i].host, r->host) == 0) {
				snprintf(why, whylen, "allow: '%.300s' given twice", tok);
				return -1;
			}
		r->line = line;
		e->n_allow++;
	}
	return 0;
}

int sbx_network_key(struct sbx_policy *p, const char *name, const char *value, int line, char *why,
		    size_t whylen)
{
	struct sbx_egress *e = &p->egress;
	uint64_t *size = NULL;

	if (strcmp(name, "mode") == 0) {
		for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++)
			if (strcmp(value, mode_names[m]) == 0) {
				p->net = (enum sbx_net_mode)m;
				e->mode_line = line;
				return 0;
			}
		snprintf(why, whylen, "mode: '%.300s' is not one of none, loopback, allow", value);
		return -1;
	}
	if (strcmp(name, "allow") == 0)
		return allow_list(e, value, line, why, whylen);
	if (e->limit_line == 0)
		e->limit_line = line;
	if (strcmp(name, "connections") == 0) {
		if (sbx_parse_uint(value, SBX_EGRESS_CONNECTIONS_MAX, &e->connections) < 0 || e->connections == 0) {
			snprintf(why, whylen, "connections: '%.300s' is not a whole number from 1 to %d", value,
				 SBX_EGRESS_CONNECTIONS_MAX);
			return -1;
		}
		return 0;
	}
	if (strcmp(name, "bytes_out") == 0)
		size = &e->bytes_out;
	else if (strcmp(name, "bytes_in") == 0)
		size = &e->bytes_in;
	if (size == NULL) {
		snprintf(why, whylen, "unknown key '%.300s' in [network]", name);
		return -1;
	}
	if (sbx_parse_size(value, size) < 0 || *size == 0) {
		snprintf(why, whylen, "%s: '%.300s' is not a size (examples: 64M, 1G)", name, value);
		return -1;
	}
	return 0;
}

int sbx_network_finish(const struct sbx_policy *p, int *line, char *why, size_t whylen)
{
	const struct sbx_egress *e = &p->egress;

	if (p->net == SBX_NET_ALLOW && e->n_allow == 0) {
		*line = e->mode_line;
		snprintf(why, whylen, "mode = allow needs at least one service: allow = HOST:PORT ...");
		return -1;
	}
	if (p->net != SBX_NET_ALLOW && e->n_allow > 0) {
		*line = e->allow[0].line;
		snprintf(why, whylen, "allow: only with mode = allow (the mode is %s)", sbx_net_mode_name(p->net));
		return -1;
	}
	if (p->net != SBX_NET_ALLOW && e->limit_line != 0) {
		*line = e->limit_line;
		snprintf(why, whylen, "connections, bytes_out and bytes_in: only with mode = allow");
		return -1;
	}
	return 0;
}
