/* SPDX-License-Identifier: ISC */
/*
 * Egress inside the sandbox, done by the sandbox init while it holds
 * capabilities over its own user namespace (so CAP_NET_ADMIN over the
 * sandbox's network namespace and nothing outside), before it drops them:
 *
 *  - every pinned address goes on lo (a /32 or /128, no duplicate address
 *    detection), so the sandbox's kernel routes exactly those addresses
 *    and nothing else: there is no other interface and no default route,
 *    so any other destination fails at once with ENETUNREACH;
 *  - a listening TCP socket on each address:port pair, passed to sbx-relay
 *    (SCM_RIGHTS) and closed here: another port of a pinned address is
 *    refused by the kernel at once (ECONNREFUSED);
 *  - /etc/hosts names each pinned address (egress_hosts()).
 * Addresses are added with one RTM_NEWADDR netlink request each (rtnetlink(7)).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "helper.h"

static bool same_addr(const struct sbx_egress_pair *a, const struct sbx_egress_pair *b)
{
	return a->family == b->family && memcmp(a->addr, b->addr, 16) == 0;
}

size_t egress_hosts(const struct run *r, char *buf, size_t len)
{
	const struct egress_run *e = &r->egress;
	size_t n = 0;

	if (r->policy.net != SBX_NET_ALLOW)
		return 0;
	for (size_t i = 0; i < e->n_pairs; i++) {
		const char *host = r->policy.egress.allow[e->pairs[i].rule].host;
		char a[INET6_ADDRSTRLEN];
		int k;

		if (sbx_host_is_literal(host))
			continue;
		/* a name given twice (two ports) is one line per address */
		bool dup = false;
		for (size_t j = 0; j < i; j++)
			dup |= same_addr(&e->pairs[j], &e->pairs[i]) &&
			       strcmp(r->policy.egress.allow[e->pairs[j].rule].host, host) == 0;
		if (dup)
			continue;
		inet_ntop(e->pairs[i].family, e->pairs[i].addr, a, sizeof(a));
		k = snprintf(buf + n, len - n, "%s\t%s\n", a, host);
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	return n;
}

size_t egress_keep_fd(const struct run *r, int *fds)
{
	if (r->egress.sandbox < 0)
		return 0;
	fds[0] = r->egress.sandbox;
	return 1;
}

static int add_address(int nl, unsigned lo, const struct sbx_egress_pair *p, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr n;
		struct ifaddrmsg i;
		char attrs[2 * RTA_SPACE(16)];
	} req;
	/* aligned for struct nlmsghdr, with room for the echoed request */
	uint32_t ack[(NLMSG_SPACE(sizeof(struct nlmsgerr)) + 256) / sizeof(uint32_t)];
	const struct nlmsghdr *an = (const struct nlmsghdr *)ack;
	const struct nlmsgerr *ne = NLMSG_DATA(an);
	size_t alen = p->family == AF_INET ? 4 : 16;
	struct rtattr *rta;
	char a[INET6_ADDRSTRLEN];
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(req.i));
	req.n.nlmsg_type = RTM_NEWADDR;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	req.n.nlmsg_seq = 1;
	req.i.ifa_family = p->family;
	req.i.ifa_prefixlen = (unsigned char)(alen * 8);
	req.i.ifa_flags = IFA_F_PERMANENT | (p->family == AF_INET6 ? IFA_F_NODAD : 0);
	req.i.ifa_scope = RT_SCOPE_HOST;
	req.i.ifa_index = lo;
	for (int t = 0; t < 2; t++) {
		rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
		rta->rta_type = t == 0 ? IFA_LOCAL : IFA_ADDRESS;
		rta->rta_len = (unsigned short)RTA_LENGTH(alen);
		memcpy(RTA_DATA(rta), p->addr, alen);
		req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	}
	inet_ntop(p->family, p->addr, a, sizeof(a));
	if (send(nl, &req, req.n.nlmsg_len, 0) < 0) {
		snprintf(err, errlen, "network: adding %s to lo: %s", a, strerror(errno));
		return -1;
	}
	n = recv(nl, &ack, sizeof(ack), 0);
	if (n < (ssize_t)(NLMSG_HDRLEN + sizeof(struct nlmsgerr)) || an->nlmsg_type != NLMSG_ERROR) {
		snprintf(err, errlen, "network: adding %s to lo: no answer from the kernel", a);
		return -1;
	}
	/* 127.0.0.1 and ::1 are there already */
	if (ne->error != 0 && ne->error != -EEXIST) {
		snprintf(err, errlen, "network: adding %s to lo: %s%s", a, strerror(-ne->error),
			 p->family == AF_INET6 ? " (is IPv6 disabled on this host?)" : "");
		return -1;
	}
	return 0;
}

static int listen_on(const struct sbx_egress_pair *p, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char a[INET6_ADDRSTRLEN];
	int s, one = 1;

	len = sbx_egress_sockaddr(p->family, p->addr, p->port, &ss);
	/* no SO_REUSEPORT: nothing the payload makes can share the pair */
	s = socket(p->family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (s >= 0 && p->family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&ss, len) < 0 || listen(s, SOMAXCONN) < 0) {
		inet_ntop(p->family, p->addr, a, sizeof(a));
		snprintf(err, errlen, "network: listening on %s%s%s:%u: %s", p->family == AF_INET6 ? "[" : "", a,
			 p->family == AF_INET6 ? "]" : "", (unsigned)p->port, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

int egress_sandbox_setup(const struct run *r, char *err, size_t errlen)
{
	const struct egress_run *e = &r->egress;
	struct sbx_egress_listener msg = {.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_LISTENER};
	unsigned lo = if_nametoindex("lo");
	int nl;

	if (lo == 0) {
		snprintf(err, errlen, "network: no lo in the sandbox: %s", strerror(errno));
		return -1;
	}
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl < 0) {
		snprintf(err, errlen, "network: netlink: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < e->n_pairs; i++) {
		bool done = false;
		for (size_t j = 0; j < i; j++)
			done |= same_addr(&e->pairs[j], &e->pairs[i]);
		if (!done && add_address(nl, lo, &e->pairs[i], err, errlen) < 0) {
			close(nl);
			return -1;
		}
	}
	close(nl);
	for (size_t i = 0; i < e->n_pairs; i++) {
		bool done = false;
		int s;

		for (size_t j = 0; j < i; j++)
			done |= same_addr(&e->pairs[j], &e->pairs[i]) && e->pairs[j].port == e->pairs[i].port;
		if (done)
			continue;
		s = listen_on(&e->pairs[i], err, errlen);
		if (s < 0)
			return -1;
		if (sbx_send_fd(e->sandbox, &msg, sizeof(msg), s, 0) < 0) {
			snprintf(err, errlen, "network: passing a listening socket to sbx-relay: %s", strerror(errno));
			close(s);
			return -1;
		}
		close(s);
	}
	msg.kind = SBX_EGRESS_READY;
	if (sbx_send_fd(e->sandbox, &msg, sizeof(msg), -1, 0) < 0) {
		snprintf(err, errlen, "network: sbx-relay: %s", strerror(errno));
		return -1;
	}
	egress_notify_prepare(r);
	return 0;
}
