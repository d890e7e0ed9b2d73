/* SPDX-License-Identifier: ISC */
/*
 * The relay's event loop (poll(2): a run has a handful of connections).
 * The listening sockets live in the sandbox's network namespace, on the
 * pinned address:port pairs; the sockets the relay connects live in the
 * host's. A connection accepted on pair P is connected to P and nothing
 * else, so the payload reaches exactly the pairs the policy resolved to.
 * Once the run's connections limit is reached the listeners are closed:
 * every later connect(2) to a pair is refused by the sandbox's kernel at
 * once (ECONNREFUSED), and the sandbox init's record of it is reported as
 * refused for the limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "relay.h"

/* The pair a listener passed by the sandbox init is bound to, or NULL. */
static struct pair *listener_pair(struct relay *r, int fd)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = sizeof(ss);
	int type = 0, acc = 0;
	socklen_t tl = sizeof(type), al = sizeof(acc);
	uint8_t a[16] = {0};
	uint16_t port;
	int fam;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 || acc != 1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return NULL;
	fam = ss.ss_family;
	if (fam == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		memcpy(a, &in->sin_addr, 4);
		port = ntohs(in->sin_port);
	} else if (fam == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		memcpy(a, &in6->sin6_addr, 16);
		port = ntohs(in6->sin6_port);
	} else {
		return NULL;
	}
	for (size_t i = 0; i < r->n_pairs; i++) {
		struct pair *p = &r->pairs[i];
		if (p->listen_fd < 0 && p->family == fam && p->port == port && memcmp(p->addr, a, 16) == 0)
			return p;
	}
	return NULL;
}

/* One message from the sandbox init; false when it is gone. */
static bool sandbox_msg(struct relay *r, bool *ready)
{
	union { struct sbx_egress_attempt a; struct sbx_egress_listener l; } m;
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	int fd = -1;
	ssize_t n;

	n = recvmsg(SBX_RELAY_FD_SANDBOX, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
		relay_warn("a message from the sandbox was too long or had more than one descriptor: ignored");
		if (fd >= 0)
			close(fd);
		return true;
	}
	if (n == (ssize_t)sizeof(m.l) && m.l.magic == SBX_EGRESS_MAGIC && m.l.kind == SBX_EGRESS_LISTENER && !*ready) {
		struct pair *p = fd >= 0 ? listener_pair(r, fd) : NULL;
		if (p == NULL) {
			relay_warn("a listening socket from the sandbox is not on a resolved pair: ignored");
			if (fd >= 0)
				close(fd);
			return true;
		}
		fcntl(fd, F_SETFL, O_NONBLOCK);
		p->listen_fd = fd;
		return true;
	}
	if (fd >= 0)
		close(fd);
	if (n == (ssize_t)sizeof(m.l) && m.l.magic == SBX_EGRESS_MAGIC && m.l.kind == SBX_EGRESS_READY) {
		*ready = true;
		return true;
	}
	if (n == (ssize_t)sizeof(m.a) && m.a.magic == SBX_EGRESS_MAGIC && m.a.kind == SBX_EGRESS_ATTEMPT &&
	    m.a.verdict >= SBX_ATTEMPT_PAIR && m.a.verdict <= SBX_ATTEMPT_UNREAD) {
		if (m.a.verdict != SBX_ATTEMPT_PAIR || r->listeners_closed)
			report_attempt(r, &m.a, m.a.verdict == SBX_ATTEMPT_PAIR);
		return true;
	}
	relay_warn("a message from the sandbox was not understood: ignored");
	return true;
}

static void close_listeners(struct relay *r)
{
	for (size_t i = 0; i < r->n_pairs; i++)
		if (r->pairs[i].listen_fd >= 0) {
			close(r->pairs[i].listen_fd);
			r->pairs[i].listen_fd = -1;
		}
	r->listeners_closed = true;
}

static void accept_on(struct relay *r, struct pair *p)
{
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	conn_start(r, p, fd);
	if (r->n_conns >= r->max_conns) {
		r->limits_hit |= SBX_EGRESS_LIMIT_CONNECTIONS;
		close_listeners(r);
	}
}

enum { SLOT_CTL, SLOT_SANDBOX, SLOT_LISTENER, SLOT_CONN };
struct slot {
	int kind;
	size_t idx;
	int which;
};

void relay_loop(struct relay *r)
{
	size_t cap = 2 + SBX_EGRESS_PAIRS_MAX + 2 * (size_t)r->max_conns;
	struct pollfd *p = calloc(cap, sizeof(*p));
	struct slot *s = calloc(cap, sizeof(*s));
	bool ready = false, sandbox_open = true;

	r->conns_cap = (size_t)r->max_conns;
	r->conns = calloc(r->conns_cap, sizeof(*r->conns));
	if (p == NULL || s == NULL || r->conns == NULL)
		relay_die("out of memory");
	for (;;) {
		size_t n = 0;
		int timeout = -1;
		uint64_t now = now_ms();

		p[n] = (struct pollfd){.fd = SBX_RELAY_FD_CTL, .events = POLLIN};
		s[n++] = (struct slot){SLOT_CTL, 0, 0};
		p[n] = (struct pollfd){.fd = sandbox_open ? SBX_RELAY_FD_SANDBOX : -1, .events = POLLIN};
		s[n++] = (struct slot){SLOT_SANDBOX, 0, 0};
		for (size_t i = 0; ready && i < r->n_pairs; i++)
			if (r->pairs[i].listen_fd >= 0) {
				p[n] = (struct pollfd){.fd = r->pairs[i].listen_fd, .events = POLLIN};
				s[n++] = (struct slot){SLOT_LISTENER, i, 0};
			}
		for (size_t i = 0; i < r->conns_cap; i++) {
			struct conn *c = &r->conns[i];
			if (!c->used)
				continue;
			if (c->closing) {
				if (conn_closing_check(r, c, now))
					continue;
				/* the kernel's send queues drain without an event to wait for */
				if (timeout < 0 || timeout > 10)
					timeout = 10;
			}
			if (c->connecting) {
				uint64_t left = c->start_ms + SBX_EGRESS_CONNECT_MS > now
							? c->start_ms + SBX_EGRESS_CONNECT_MS - now : 0;
				if (left == 0) {
					conn_end(r, c, SBX_END_UNREACHABLE);
					continue;
				}
				if (timeout < 0 || left < (uint64_t)timeout)
					timeout = (int)left;
			}
			for (int w = 0; w < 2; w++) {
				short ev = 0;
				if (c->connecting) {
					ev = w == 1 ? POLLOUT : 0;
				} else {
					if (c->pending[w] == 0 && !c->eof[w] && !c->closing)
						ev |= POLLIN;
					if (c->pending[1 - w] > 0)
						ev |= POLLOUT;
				}
				p[n] = (struct pollfd){.fd = ev ? c->fd[w] : -1, .events = ev};
				s[n++] = (struct slot){SLOT_CONN, i, w};
			}
		}
		if (poll(p, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			relay_die("poll: %s", strerror(errno));
		}
		for (size_t k = 0; k < n; k++) {
			short rev = p[k].revents;
			if (rev == 0)
				continue;
			switch (s[k].kind) {
			case SLOT_CTL:
				/* the run is over (or the supervisor is gone) */
				free(p);
				free(s);
				return;
			case SLOT_SANDBOX:
				if (!sandbox_msg(r, &ready))
					sandbox_open = false;
				break;
			case SLOT_LISTENER:
				if (r->pairs[s[k].idx].listen_fd >= 0)
					accept_on(r, &r->pairs[s[k].idx]);
				break;
			default:
				if (r->conns[s[k].idx].used)
					conn_events(r, &r->conns[s[k].idx], s[k].which, rev);
				break;
			}
		}
	}
}
