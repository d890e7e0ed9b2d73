/* SPDX-License-Identifier: ISC */
/*
 * Resolve the allow list, once per run, with the host's own resolver
 * (getaddrinfo(3): /etc/hosts, DNS, whatever nsswitch.conf says). This is
 * the only place sbx reads a DNS answer, and it runs as _sbxnet: the
 * supervisor only gets fixed-size records of addresses and checks them.
 * Up to SBX_EGRESS_ADDRS_PER_NAME addresses per name, in the resolver's
 * order; an address this host has no route to is left out (a connected
 * UDP socket asks the kernel for the route and sends nothing), so the
 * payload is not offered an address only to have the relay fail on it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "relay.h"

static bool usable(int family, const uint8_t *a)
{
	static const uint8_t zero[16];

	if (family == AF_INET)
		return a[0] != 0 && a[0] < 224; /* not 0/8, multicast, 240/4 or broadcast */
	return memcmp(a, zero, 16) != 0 && a[0] != 0xff;
}

/* 0 if the host has a route to addr:port, else the errno connect(2) gave. */
static int route_to(int family, const uint8_t *a, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int s, e = 0;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a, 16);
		len = sizeof(*in6);
	}
	s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	if (connect(s, (struct sockaddr *)&ss, len) < 0)
		e = errno;
	close(s);
	return e;
}

static void send_rec(const struct sbx_egress_resolved *rec)
{
	if (send(SBX_RELAY_FD_CTL, rec, sizeof(*rec), MSG_NOSIGNAL) != (ssize_t)sizeof(*rec))
		relay_die("supervisor gone while resolving");
}

static void resolve_rule(struct relay *r, uint8_t idx)
{
	const struct rule *ru = &r->rules[idx];
	struct addrinfo hints, *res = NULL;
	struct sbx_egress_resolved rec;
	size_t found = 0;
	int rc, noroute = 0, seen = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = sbx_host_is_literal(ru->host) ? AI_NUMERICHOST : 0;
	memset(&rec, 0, sizeof(rec));
	rec.magic = SBX_EGRESS_MAGIC;
	rec.rule = idx;
	rc = getaddrinfo(ru->host, NULL, &hints, &res);
	if (rc != 0) {
		rec.status = SBX_RESOLVE_GAI;
		rec.gai = rc;
		rec.err = rc == EAI_SYSTEM ? errno : 0;
		send_rec(&rec);
		return;
	}
	for (const struct addrinfo *ai = res; ai && found < SBX_EGRESS_ADDRS_PER_NAME; ai = ai->ai_next) {
		uint8_t a[16] = {0};
		int fam = ai->ai_family, e;
		bool dup = false;

		if (fam == AF_INET)
			memcpy(a, &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		else if (fam == AF_INET6) {
			const uint8_t *a6 = (const uint8_t *)&((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
			/* ::ffff:a.b.c.d is IPv4 on the wire: pin it as IPv4 */
			if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a6)) {
				fam = AF_INET;
				memcpy(a, a6 + 12, 4);
			} else {
				memcpy(a, a6, 16);
			}
		} else {
			continue;
		}
		seen++;
		for (size_t k = 0; k < r->n_pairs; k++)
			if (r->pairs[k].rule == idx && r->pairs[k].family == fam && memcmp(r->pairs[k].addr, a, 16) == 0)
				dup = true;
		if (dup || !usable(fam, a))
			continue;
		e = route_to(fam, a, ru->port);
		if (e != 0) {
			noroute = e;
			continue;
		}
		struct pair *p = &r->pairs[r->n_pairs++];
		p->family = (uint8_t)fam;
		memcpy(p->addr, a, 16);
		p->port = ru->port;
		p->rule = idx;
		p->listen_fd = -1;
		rec.status = SBX_RESOLVE_OK;
		rec.family = (uint8_t)fam;
		memcpy(rec.addr, a, 16);
		send_rec(&rec);
		found++;
	}
	freeaddrinfo(res);
	if (found == 0) {
		memset(rec.addr, 0, sizeof(rec.addr));
		rec.family = 0;
		rec.status = noroute ? SBX_RESOLVE_NOROUTE : SBX_RESOLVE_UNUSABLE;
		rec.err = noroute;
		rec.gai = seen;
		send_rec(&rec);
	}
}

int relay_resolve(struct relay *r)
{
	struct sbx_egress_resolved end;

	for (size_t i = 0; i < r->n_rules; i++)
		resolve_rule(r, (uint8_t)i);
	memset(&end, 0, sizeof(end));
	end.magic = SBX_EGRESS_MAGIC;
	end.rule = SBX_EGRESS_RULE_END;
	send_rec(&end);
	return 0;
}
