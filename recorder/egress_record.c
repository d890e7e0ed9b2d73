/* SPDX-License-Identifier: ISC */
/*
 * Egress facts into the audit record and the result (egress_record.h).
 * The recorder runs as _sbx and reads sbx-relay's report (_sbxnet): fixed-
 * size records, each field checked against what the run allowed, so a
 * relay that misbehaves yields "report: ..." in the END record, never a
 * field that claims what did not happen.
 */
#include "egress_record.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>

#include "recfield.h"

static void addr_text(int family, const uint8_t *a, char *out, size_t len)
{
	if (inet_ntop(family, a, out, (socklen_t)len) == NULL)
		strlcpy(out, "?", len);
}

/* "addr:port", "[v6]:port" */
static void dest_text(int family, const uint8_t *a, uint16_t port, char *out, size_t len)
{
	char t[INET6_ADDRSTRLEN];

	addr_text(family, a, t, sizeof(t));
	sbx_hostport_format(t, port, out, len);
}

static void service_text(const struct sbx_egress_facts *f, unsigned rule, char *out, size_t len)
{
	const struct sbx_egress_rule *ru = &f->rules[rule < SBX_EGRESS_MAX ? rule : 0];

	sbx_hostport_format(ru->host, ru->port, out, len);
}

static struct sbx_fval s_val(const char *s)
{
	return (struct sbx_fval){.type = SBX_FT_STR, .p = (const unsigned char *)s, .n = strlen(s)};
}

static struct sbx_fval u_val(uint64_t u)
{
	return (struct sbx_fval){.type = SBX_FT_U64, .u = u};
}

int egress_start_fields(struct sbx_record *start, const struct sbx_egress_facts *f, char *err, size_t errlen)
{
	if (f->mode != SBX_NET_ALLOW)
		return 0;
	for (size_t i = 0; i < f->n_pairs && i < SBX_EGRESS_PAIRS_MAX; i++) {
		char svc[SBX_HOSTPORT_LEN], a[INET6_ADDRSTRLEN];
		struct sbx_fval v[3];

		service_text(f, f->pairs[i].rule, svc, sizeof(svc));
		addr_text(f->pairs[i].family, f->pairs[i].addr, a, sizeof(a));
		v[0] = s_val(svc);
		v[1] = s_val(a);
		v[2] = u_val(f->pairs[i].port);
		if (sbx_rec_add_item(start, SBX_F_NET_ALLOW, v, 3, err, errlen) < 0)
			return -1;
	}
	{
		struct sbx_fval v[3] = {u_val(f->connections), u_val(f->bytes_out), u_val(f->bytes_in)};
		return sbx_rec_add_item(start, SBX_F_NET_LIMITS, v, 3, err, errlen);
	}
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool pinned(const struct sbx_egress_facts *f, const struct sbx_egress_report *m)
{
	for (size_t i = 0; i < f->n_pairs && i < SBX_EGRESS_PAIRS_MAX; i++) {
		const struct sbx_egress_pair *p = &f->pairs[i];
		if (p->family == m->family && p->port == m->port && p->rule == m->rule &&
		    memcmp(p->addr, m->addr, 16) == 0)
			return true;
	}
	return false;
}

/* One record, checked; false (status set) when it is not what it must be. */
static bool take(const struct sbx_egress_facts *f, struct egress_report *rep, const struct sbx_egress_report *m)
{
	const char *bad = NULL;

	if (m->magic != SBX_EGRESS_MAGIC)
		bad = "a record without the magic number";
	else if (m->kind == SBX_EGRESS_REPORT_CONN) {
		if (sbx_egress_end_name(m->end) == NULL || m->end == SBX_END_CONNECTIONS)
			bad = "a connection that ended in no known way";
		else if (!pinned(f, m))
			bad = "a connection to no pair of this run";
		else if (rep->n_conns == SBX_EGRESS_CONNECTIONS_MAX || rep->n_conns >= f->connections)
			bad = "more connections than the limit";
		else
			rep->conns[rep->n_conns++] = *m;
	} else if (m->kind == SBX_EGRESS_REPORT_REFUSED) {
		bool reason = m->end == SBX_END_CONNECTIONS ||
			      (m->end != SBX_ATTEMPT_PAIR && sbx_attempt_verdict_name(m->end) != NULL);
		if (!reason || (m->family != 0 && m->family != AF_INET && m->family != AF_INET6))
			bad = "a refused destination it cannot be";
		else if (rep->n_refused == SBX_EGRESS_ATTEMPTS_MAX)
			bad = "more refused destinations than it may list";
		else
			rep->refused[rep->n_refused++] = *m;
	} else if (m->kind == SBX_EGRESS_REPORT_END) {
		rep->totals = *m;
		rep->complete = true;
		strlcpy(rep->status, "complete", sizeof(rep->status));
		return false;
	} else {
		bad = "a record of an unknown kind";
	}
	if (bad != NULL) {
		snprintf(rep->status, sizeof(rep->status), "malformed: sbx-relay sent %s", bad);
		return false;
	}
	return true;
}

void egress_report_read(int fd, const struct sbx_egress_facts *f, struct egress_report *rep)
{
	int64_t deadline = mono_ms() + SBX_EGRESS_REPORT_MS;
	struct sbx_egress_report m;
	size_t have = 0;

	memset(rep, 0, sizeof(*rep));
	if (f->mode != SBX_NET_ALLOW || !f->started || fd < 0)
		return;
	strlcpy(rep->status, "incomplete: sbx-relay ended without its totals", sizeof(rep->status));
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			snprintf(rep->status, sizeof(rep->status), "incomplete: no report from sbx-relay within %d s",
				 SBX_EGRESS_REPORT_MS / 1000);
			break;
		}
		n = recv(fd, (char *)&m + have, sizeof(m) - have, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have < sizeof(m))
			continue;
		have = 0;
		if (!take(f, rep, &m))
			break;
	}
	close(fd);
}

/* s once into the JSON array a */
static void add_dest(json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return;
	json_array_append_new(a, json_string(s));
}

static int put_json(struct sbx_record *end, unsigned tag, json_t *a, char *err, size_t errlen)
{
	char *text = json_array_size(a) ? json_dumps(a, JSON_COMPACT) : NULL;
	int rc = 0;

	if (json_array_size(a) && text == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	} else if (text != NULL) {
		rc = sbx_rec_put_str(end, tag, text, err, errlen);
	}
	free(text);
	json_decref(a);
	return rc;
}

static void limits_text(unsigned bits, char *out, size_t len)
{
	static const struct { unsigned bit; const char *name; } t[] = {
		{SBX_EGRESS_LIMIT_CONNECTIONS, "connections"},
		{SBX_EGRESS_LIMIT_BYTES_OUT, "bytes_out"},
		{SBX_EGRESS_LIMIT_BYTES_IN, "bytes_in"},
	};

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (bits & t[i].bit) {
			if (out[0])
				strlcat(out, " ", len);
			strlcat(out, t[i].name, len);
		}
}

static const char *refused_reason(unsigned v)
{
	return v == SBX_END_CONNECTIONS ? "connections" : sbx_attempt_verdict_name(v);
}

int egress_end_fields(struct sbx_record *end, const struct sbx_egress_facts *f, const struct egress_report *rep,
		      char *err, size_t errlen)
{
	json_t *reached = json_array(), *refused_at = json_array();
	uint64_t refused = 0;
	char lim[64];

	if (f->mode != SBX_NET_ALLOW || !f->started) {
		json_decref(reached);
		json_decref(refused_at);
		return 0;
	}
	for (size_t i = 0; i < rep->n_conns; i++) {
		const struct sbx_egress_report *m = &rep->conns[i];
		char svc[SBX_HOSTPORT_LEN], a[INET6_ADDRSTRLEN], d[SBX_HOSTPORT_LEN];
		struct sbx_fval v[8];

		service_text(f, m->rule, svc, sizeof(svc));
		addr_text(m->family, m->addr, a, sizeof(a));
		v[0] = s_val(svc);
		v[1] = s_val(a);
		v[2] = u_val(m->port);
		v[3] = u_val(m->start_ms);
		v[4] = u_val(m->duration_ms);
		v[5] = u_val(m->bytes_out);
		v[6] = u_val(m->bytes_in);
		v[7] = s_val(sbx_egress_end_name(m->end));
		if (sbx_rec_add_item(end, SBX_F_NET_CONNS, v, 8, err, errlen) < 0)
			goto fail;
		dest_text(m->family, m->addr, m->port, d, sizeof(d));
		add_dest(reached, svc);
		add_dest(reached, d);
	}
	for (size_t i = 0; i < rep->n_refused; i++) {
		const struct sbx_egress_report *m = &rep->refused[i];
		char a[INET6_ADDRSTRLEN] = "?", d[SBX_HOSTPORT_LEN];
		struct sbx_fval v[4];

		if (m->family != 0) {
			addr_text(m->family, m->addr, a, sizeof(a));
			dest_text(m->family, m->addr, m->port, d, sizeof(d));
			add_dest(refused_at, d);
		}
		v[0] = s_val(a);
		v[1] = u_val(m->port);
		v[2] = s_val(refused_reason(m->end));
		v[3] = u_val(m->count);
		refused += m->count;
		if (sbx_rec_add_item(end, SBX_F_NET_REFUSED, v, 4, err, errlen) < 0)
			goto fail;
	}
	limits_text(rep->totals.rule, lim, sizeof(lim));
	if (sbx_rec_put_u64(end, SBX_F_NET_CONN_COUNT, rep->totals.count, err, errlen) < 0 ||
	    sbx_rec_put_u64(end, SBX_F_NET_BYTES_OUT, rep->totals.bytes_out, err, errlen) < 0 ||
	    sbx_rec_put_u64(end, SBX_F_NET_BYTES_IN, rep->totals.bytes_in, err, errlen) < 0 ||
	    sbx_rec_put_u64(end, SBX_F_NET_REFUSED_COUNT, refused + rep->totals.more, err, errlen) < 0 ||
	    (rep->totals.more && sbx_rec_put_u64(end, SBX_F_NET_UNLISTED, rep->totals.more, err, errlen) < 0) ||
	    (lim[0] && sbx_rec_put_str(end, SBX_F_NET_LIMITS_HIT, lim, err, errlen) < 0) ||
	    sbx_rec_put_str(end, SBX_F_NET_REPORT, rep->status[0] ? rep->status : "incomplete: no report", err,
			    errlen) < 0)
		goto fail;
	if (put_json(end, SBX_F_NET_REACHED, reached, err, errlen) < 0) {
		json_decref(refused_at);
		return -1;
	}
	return put_json(end, SBX_F_NET_REFUSED_DESTS, refused_at, err, errlen);
fail:
	json_decref(reached);
	json_decref(refused_at);
	return -1;
}

json_t *egress_result_json(const struct sbx_egress_facts *f, const struct egress_report *rep)
{
	json_t *o, *allowed = json_array(), *conns = json_array(), *refused = json_array(), *lims = json_array();
	uint64_t n_refused = 0;

	if (f->mode != SBX_NET_ALLOW) {
		json_decref(allowed);
		json_decref(conns);
		json_decref(refused);
		json_decref(lims);
		return NULL;
	}
	for (size_t i = 0; i < f->n_pairs && i < SBX_EGRESS_PAIRS_MAX; i++) {
		const struct sbx_egress_pair *p = &f->pairs[i];
		char svc[SBX_HOSTPORT_LEN], a[INET6_ADDRSTRLEN];
		service_text(f, p->rule, svc, sizeof(svc));
		addr_text(p->family, p->addr, a, sizeof(a));
		json_array_append_new(allowed, json_pack("{s:s,s:s,s:i}", "service", svc, "address", a, "port", p->port));
	}
	for (size_t i = 0; i < rep->n_conns; i++) {
		const struct sbx_egress_report *m = &rep->conns[i];
		char svc[SBX_HOSTPORT_LEN], a[INET6_ADDRSTRLEN];
		service_text(f, m->rule, svc, sizeof(svc));
		addr_text(m->family, m->addr, a, sizeof(a));
		json_array_append_new(conns, json_pack("{s:s,s:s,s:i,s:I,s:I,s:I,s:I,s:s}", "service", svc, "address", a,
						       "port", m->port, "start_ms", (json_int_t)m->start_ms,
						       "duration_ms", (json_int_t)m->duration_ms, "bytes_out",
						       (json_int_t)m->bytes_out, "bytes_in", (json_int_t)m->bytes_in,
						       "end", sbx_egress_end_name(m->end)));
	}
	for (size_t i = 0; i < rep->n_refused; i++) {
		const struct sbx_egress_report *m = &rep->refused[i];
		char a[INET6_ADDRSTRLEN] = "?";
		if (m->family != 0)
			addr_text(m->family, m->addr, a, sizeof(a));
		n_refused += m->count;
		json_array_append_new(refused, json_pack("{s:s,s:i,s:s,s:I}", "address", a, "port", m->port, "reason",
							 refused_reason(m->end), "count", (json_int_t)m->count));
	}
	{
		char lim[64], *save = NULL;
		limits_text(rep->totals.rule, lim, sizeof(lim));
		for (char *t = strtok_r(lim, " ", &save); t; t = strtok_r(NULL, " ", &save))
			json_array_append_new(lims, json_string(t));
	}
	n_refused += rep->totals.more;
	o = json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:o,s:{s:I,s:I,s:I},s:s}", "allowed", allowed, "connections", conns,
		      "refused", refused, "refused_total", (json_int_t)n_refused,
		      "refused_unlisted", (json_int_t)rep->totals.more, "bytes_out", (json_int_t)rep->totals.bytes_out,
		      "bytes_in", (json_int_t)rep->totals.bytes_in, "limits", lims, "max", "connections",
		      (json_int_t)f->connections, "bytes_out", (json_int_t)f->bytes_out, "bytes_in",
		      (json_int_t)f->bytes_in,
		      "report", !f->started ? "none: the run did not start" : rep->status);
	return o;
}
