/* SPDX-License-Identifier: ISC */
/*
 * What the relay saw, for the END record: every connection (kept in full:
 * there are at most [network] connections of them), every refused
 * destination with a count (the first SBX_EGRESS_ATTEMPTS_MAX distinct
 * ones; the rest counted in `more`, never dropped silently), totals and
 * the limits reached. Sent once, when the run is over, to the recorder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "relay.h"

static struct sbx_egress_report *conns, attempts[SBX_EGRESS_ATTEMPTS_MAX];
static size_t n_conns, cap_conns, n_attempts;
static uint64_t more;

void report_attempt(struct relay *r, const struct sbx_egress_attempt *a, bool connections_limit)
{
	uint8_t verdict = connections_limit ? SBX_END_CONNECTIONS : a->verdict;
	uint8_t fam = a->family == AF_INET || a->family == AF_INET6 ? a->family : 0;

	(void)r;
	more += a->lost;
	for (size_t i = 0; i < n_attempts; i++) {
		struct sbx_egress_report *e = &attempts[i];
		if (e->end == verdict && e->family == fam && e->port == a->port &&
		    memcmp(e->addr, a->addr, sizeof(e->addr)) == 0) {
			e->count++;
			return;
		}
	}
	if (n_attempts == SBX_EGRESS_ATTEMPTS_MAX) {
		more++;
		return;
	}
	struct sbx_egress_report *e = &attempts[n_attempts++];
	memset(e, 0, sizeof(*e));
	e->magic = SBX_EGRESS_MAGIC;
	e->kind = SBX_EGRESS_REPORT_REFUSED;
	e->end = verdict;
	e->family = fam;
	e->port = a->port;
	memcpy(e->addr, a->addr, sizeof(e->addr));
	e->count = 1;
}

void report_conn(struct relay *r, const struct conn *c, int how)
{
	struct sbx_egress_report *e;
	uint64_t now = now_ms();

	if (n_conns == cap_conns) {
		size_t cap = cap_conns ? 2 * cap_conns : 16;
		struct sbx_egress_report *n = realloc(conns, cap * sizeof(*n));
		if (n == NULL) {
			more++;
			return;
		}
		conns = n;
		cap_conns = cap;
	}
	e = &conns[n_conns++];
	memset(e, 0, sizeof(*e));
	e->magic = SBX_EGRESS_MAGIC;
	e->kind = SBX_EGRESS_REPORT_CONN;
	e->end = (uint8_t)how;
	e->family = c->pair->family;
	e->rule = c->pair->rule;
	e->port = c->pair->port;
	memcpy(e->addr, c->pair->addr, sizeof(e->addr));
	e->start_ms = c->start_ms > r->run_start_ms ? c->start_ms - r->run_start_ms : 0;
	e->duration_ms = now > c->start_ms ? now - c->start_ms : 0;
	e->bytes_out = c->bytes[0];
	e->bytes_in = c->bytes[1];
}

static void send_all(const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(SBX_RELAY_FD_REPORT, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			relay_die("the recorder is gone: the connection report is lost");
		p += n;
		len -= (size_t)n;
	}
}

void report_finish(struct relay *r)
{
	struct sbx_egress_report end;

	for (size_t i = 0; i < r->conns_cap; i++)
		if (r->conns[i].used)
			conn_end(r, &r->conns[i], SBX_END_RUN_ENDED);
	if (n_conns)
		send_all(conns, n_conns * sizeof(*conns));
	if (n_attempts)
		send_all(attempts, n_attempts * sizeof(attempts[0]));
	memset(&end, 0, sizeof(end));
	end.magic = SBX_EGRESS_MAGIC;
	end.kind = SBX_EGRESS_REPORT_END;
	end.rule = (uint8_t)r->limits_hit;
	end.bytes_out = r->total[0];
	end.bytes_in = r->total[1];
	end.count = r->n_conns;
	end.more = more;
	send_all(&end, sizeof(end));
	shutdown(SBX_RELAY_FD_REPORT, SHUT_WR);
}
