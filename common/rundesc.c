/* SPDX-License-Identifier: ISC */
/* Run descriptions and run ends: filling and checking (rundesc.h). */
#include "rundesc.h"

#include "errcode.h"

#include <stdio.h>
#include <sys/socket.h>
#include <string.h>

void sbx_msg_hdr_init(struct sbx_msg_hdr *h, enum sbx_rec_msg type, size_t size)
{
	h->magic = SBX_MSG_MAGIC;
	h->version = SBX_MSG_VERSION;
	h->type = (uint16_t)type;
	h->size = (uint32_t)size;
}

static int hdr_ok(const struct sbx_msg_hdr *h, size_t n, enum sbx_rec_msg type, size_t want,
		  char *err, size_t errlen)
{
	if (n < sizeof(*h) || h->magic != SBX_MSG_MAGIC) {
		snprintf(err, errlen, "not a supervisor message (%zu bytes)", n);
		return -1;
	}
	if (h->version != SBX_MSG_VERSION || h->type != type) {
		snprintf(err, errlen, "message version %u type %u, expected version %u type %u",
			 (unsigned)h->version, (unsigned)h->type, SBX_MSG_VERSION, (unsigned)type);
		return -1;
	}
	if (h->size != want || n != want) {
		snprintf(err, errlen, "message of %zu bytes (header says %u), expected %zu", n,
			 (unsigned)h->size, want);
		return -1;
	}
	return 0;
}

/* Strings must end inside their arrays. */
#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

/* The egress facts: counts within their arrays, names terminated, every
 * pair one of a listed entry's, an address family the recorder prints;
 * the mode and the net field agree (egress_record.c trusts no more). */
static bool egress_facts_ok(const struct sbx_run_desc *d)
{
	const struct sbx_egress_facts *f = &d->egress;

	if (f->mode != d->net || f->n_rules > SBX_EGRESS_MAX || f->n_pairs > SBX_EGRESS_PAIRS_MAX ||
	    (f->mode != SBX_NET_ALLOW && (f->n_rules != 0 || f->n_pairs != 0)))
		return false;
	for (uint32_t i = 0; i < f->n_rules; i++)
		if (!TERMINATED(f->rules[i].host))
			return false;
	for (uint32_t i = 0; i < f->n_pairs; i++)
		if (f->pairs[i].rule >= f->n_rules || (f->pairs[i].family != AF_INET && f->pairs[i].family != AF_INET6))
			return false;
	return true;
}

int sbx_run_desc_check(const void *buf, size_t n, bool dry, char *err, size_t errlen)
{
	const struct sbx_run_desc *d = buf;
	size_t want = dry ? sizeof(struct sbx_dry_run) : sizeof(struct sbx_run_desc);

	if (hdr_ok(&d->hdr, n, SBX_REC_MSG_RUN, want, err, errlen) < 0)
		return -1;
	if (!TERMINATED(d->run_id) || !TERMINATED(d->user) || !TERMINATED(d->group) ||
	    !TERMINATED(d->policy) || !TERMINATED(d->language) || !TERMINATED(d->code_path) ||
	    !TERMINATED(d->session) || !TERMINATED(d->parent_id) || !TERMINATED(d->audit_origin) ||
	    !TERMINATED(d->witness_dir) || !TERMINATED(d->witness_command) ||
	    !TERMINATED(d->error) || !TERMINATED(d->alloc_nested) || d->n_inputs > SBX_MAX_INPUTS || d->argv_len == 0 ||
	    d->argv_len > sizeof(d->argv) || d->argv[d->argv_len - 1] != '\0' ||
	    ((d->flags & SBX_DESC_REFUSED) && d->error[0] == '\0') ||
	    ((d->flags & SBX_DESC_NO_POLICY) && !(d->flags & SBX_DESC_REFUSED)) ||
	    d->policy_bytes > SBX_POLICY_TEXT_MAX) {
		snprintf(err, errlen, "malformed run description");
		return -1;
	}
	for (uint32_t i = 0; i < d->n_inputs; i++)
		if (!TERMINATED(d->inputs[i].name)) {
			snprintf(err, errlen, "malformed run description (input %u)", (unsigned)i);
			return -1;
		}
	if (!egress_facts_ok(d)) {
		snprintf(err, errlen, "malformed run description (network)");
		return -1;
	}
	if (dry) {
		const struct sbx_dry_run *r = buf;

		if (r->n_binds > sizeof(r->binds) / sizeof(r->binds[0]) || r->n_env > SBX_RUNENV_MAX ||
		    r->n_allow > SBX_EGRESS_MAX) {
			snprintf(err, errlen, "malformed dry-run description");
			return -1;
		}
		for (uint32_t i = 0; i < r->n_binds; i++)
			if (!TERMINATED(r->binds[i].path)) {
				snprintf(err, errlen, "malformed dry-run description (bind %u)", (unsigned)i);
				return -1;
			}
		for (uint32_t i = 0; i < r->n_allow; i++)
			if (!TERMINATED(r->allow[i].host)) {
				snprintf(err, errlen, "malformed dry-run description (allow %u)", (unsigned)i);
				return -1;
			}
		if (!TERMINATED(r->cpu_list)) {
			snprintf(err, errlen, "malformed dry-run description (cpu list)");
			return -1;
		}
		for (uint32_t i = 0; i < r->n_env; i++)
			if (!TERMINATED(r->env[i])) {
				snprintf(err, errlen, "malformed dry-run description (env %u)", (unsigned)i);
				return -1;
			}
	}
	return 0;
}

int sbx_run_end_check(const void *buf, size_t n, char *err, size_t errlen)
{
	const struct sbx_run_end *e = buf;

	if (hdr_ok(&e->hdr, n, SBX_REC_MSG_END, sizeof(*e), err, errlen) < 0)
		return -1;
	if (e->outcome >= SBX_OUTCOME_N || !sbx_outcome_of_run(&sbx_outcome_defs[e->outcome]) ||
	    e->limit < SBX_LIMIT_NONE || e->limit >= SBX_LIMIT_N || !TERMINATED(e->error) || !TERMINATED(e->error_code) ||
	    (e->error_code[0] != '\0' && sbx_errcode_find(e->error_code) == NULL)) {
		snprintf(err, errlen, "malformed run end");
		return -1;
	}
	return 0;
}

int sbx_live_cgroup_check(const void *buf, size_t n, char *err, size_t errlen)
{
	const struct sbx_live_cgroup *g = buf;

	if (hdr_ok(&g->hdr, n, SBX_REC_MSG_CGROUP, sizeof(*g), err, errlen) < 0)
		return -1;
	if (g->v2 > 1) {
		snprintf(err, errlen, "malformed live cgroup message");
		return -1;
	}
	return 0;
}

int sbx_run_desc_add_arg(struct sbx_run_desc *d, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > sizeof(d->argv) - d->argv_len)
		return -1;
	memcpy(d->argv + d->argv_len, s, n);
	d->argv_len += (uint32_t)n;
	return 0;
}
