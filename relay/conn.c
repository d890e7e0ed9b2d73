/* SPDX-License-Identifier: ISC */
/*
 * One relayed connection: the payload's side (accepted from a listener in
 * the sandbox's network namespace) and the service's side (connected from
 * the host's), bytes moved both ways through a pipe with splice(2), so
 * they are never copied to user space and never parsed: any TCP protocol,
 * TLS end to end. A half-close (shutdown) is passed on once the pipe is
 * drained; a reset or error on one side resets the other (SO_LINGER 0).
 * The run's byte limits are checked before bytes are taken from a
 * source: a connection never carries more than the limit, and the one
 * that would is closed: nothing more is read from either side, what was
 * read within the limit is delivered (until the kernel has sent it, so
 * that the reset does not discard it: SIOCOUTQ, tcp(7)), then both sides
 * are reset, so that neither end mistakes it for a complete exchange.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "relay.h"

#define SPLICE_MAX (1u << 20) /* bytes per splice call */
#define CLOSING_MS 1000       /* how long a connection past a limit may take to drain */
#define FILL_ROUNDS 8         /* splices from one source before poll(2) again */
#define PIPE_SIZE (1 << 20)   /* asked for; the kernel may give less (pipe-max-size, per-user pages) */

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void close_fd(int *fd, bool reset)
{
	if (*fd < 0)
		return;
	if (reset) {
		struct linger l = {.l_onoff = 1, .l_linger = 0};
		setsockopt(*fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(*fd);
	*fd = -1;
}

void conn_end(struct relay *r, struct conn *c, int how)
{
	bool reset = how != SBX_END_CLOSED;

	report_conn(r, c, how);
	close_fd(&c->fd[0], reset);
	close_fd(&c->fd[1], reset);
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++)
			if (c->pipe[d][k] >= 0) {
				close(c->pipe[d][k]);
				c->pipe[d][k] = -1;
			}
	c->used = false;
}

static struct conn *conn_slot(struct relay *r)
{
	for (size_t i = 0; i < r->conns_cap; i++)
		if (!r->conns[i].used)
			return &r->conns[i];
	return NULL;
}

static void nodelay(int fd)
{
	int one = 1;

	/* the relay adds no Nagle delay of its own: each write of the
	 * payload or the service goes on as it came */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void conn_start(struct relay *r, const struct pair *p, int accepted)
{
	struct sockaddr_storage ss;
	struct conn *c = conn_slot(r);
	socklen_t len;

	if (c == NULL) {
		close_fd(&accepted, true);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->pair = p;
	c->start_ms = now_ms();
	c->fd[0] = accepted;
	c->fd[1] = -1;
	for (int d = 0; d < 2; d++)
		c->pipe[d][0] = c->pipe[d][1] = -1;
	r->n_conns++;
	for (int d = 0; d < 2; d++) {
		if (pipe2(c->pipe[d], O_CLOEXEC | O_NONBLOCK) < 0) {
			conn_end(r, c, SBX_END_RELAY_ERROR);
			return;
		}
		fcntl(c->pipe[d][1], F_SETPIPE_SZ, PIPE_SIZE);
	}
	nodelay(accepted);
	len = sbx_egress_sockaddr(p->family, p->addr, p->port, &ss);
	c->fd[1] = socket(p->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (c->fd[1] < 0) {
		conn_end(r, c, SBX_END_RELAY_ERROR);
		return;
	}
	nodelay(c->fd[1]);
	if (connect(c->fd[1], (struct sockaddr *)&ss, len) == 0) {
		conn_connected(r, c);
		return;
	}
	if (errno == EINPROGRESS) {
		c->connecting = true;
		return;
	}
	conn_end(r, c, errno == ECONNREFUSED ? SBX_END_REFUSED : SBX_END_UNREACHABLE);
}

void conn_connected(struct relay *r, struct conn *c)
{
	int e = 0;
	socklen_t len = sizeof(e);

	(void)r;
	if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	if (e != 0) {
		conn_end(r, c, e == ECONNREFUSED ? SBX_END_REFUSED : SBX_END_UNREACHABLE);
		return;
	}
	c->connecting = false;
}

/* The direction's source has more to give although the budget is spent? */
static int over_limit(int src)
{
	char b;
	ssize_t n = recv(src, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n > 0)
		return 1;
	if (n == 0)
		return 0;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -2 : -1;
}

static bool drained(const struct conn *c)
{
	return c->eof[0] && c->eof[1] && c->pending[0] == 0 && c->pending[1] == 0;
}

/* Move what the pipe of direction d holds to its destination. false if
 * the connection was ended. */
static bool flush(struct relay *r, struct conn *c, int d)
{
	int dst = c->fd[1 - d];

	while (c->pending[d] > 0) {
		ssize_t n = splice(c->pipe[d][0], NULL, dst, NULL, c->pending[d], SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			c->pending[d] -= (size_t)n;
			c->bytes[d] += (uint64_t)n;
			r->total[d] += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		conn_end(r, c, SBX_END_RESET);
		return false;
	}
	if (c->eof[d] && !c->shut[d]) {
		shutdown(dst, SHUT_WR);
		c->shut[d] = true;
	}
	if (c->closing)
		return !conn_closing_check(r, c, now_ms());
	if (drained(c)) {
		conn_end(r, c, SBX_END_CLOSED);
		return false;
	}
	return true;
}

/* Take what the source of direction d has into its pipe, within the
 * run's budget. false if the connection was ended. */
static int fill_once(struct relay *r, struct conn *c, int d);

static bool fill(struct relay *r, struct conn *c, int d)
{
	/* a bulk transfer goes on without a poll(2) between chunks while the
	 * destination takes each whole; a busy machine then wakes the relay
	 * less often */
	for (int round = 0; round < FILL_ROUNDS; round++) {
		int rc = fill_once(r, c, d);
		if (rc <= 0)
			return rc == 0;
		if (c->pending[d] > 0 || c->eof[d])
			return true;
	}
	return true;
}

/* One splice from the source: 1 took bytes (all delivered or not), 0 no
 * more for now, -1 the connection was ended. */
static int fill_once(struct relay *r, struct conn *c, int d)
{
	int src = c->fd[d];
	uint64_t room = r->limit[d] - r->reserved[d];
	ssize_t n;

	if (room == 0) {
		int o = over_limit(src);
		if (o == -2)
			return 0;
		if (o == 1) {
			r->limits_hit |= d == 0 ? SBX_EGRESS_LIMIT_BYTES_OUT : SBX_EGRESS_LIMIT_BYTES_IN;
			c->closing = d == 0 ? SBX_END_BYTES_OUT : SBX_END_BYTES_IN;
			c->closing_by = now_ms() + CLOSING_MS;
			return conn_closing_check(r, c, now_ms()) ? -1 : 0;
		}
		if (o < 0) {
			conn_end(r, c, SBX_END_RESET);
			return -1;
		}
		c->eof[d] = true;
		return flush(r, c, d) ? 0 : -1;
	}
	n = splice(src, NULL, c->pipe[d][1], NULL, room < SPLICE_MAX ? (size_t)room : SPLICE_MAX,
		   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (n > 0) {
		c->pending[d] += (size_t)n;
		r->reserved[d] += (uint64_t)n;
		return flush(r, c, d) ? 1 : -1;
	}
	if (n == 0) {
		c->eof[d] = true;
		return flush(r, c, d) ? 0 : -1;
	}
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	conn_end(r, c, SBX_END_RESET);
	return -1;
}

static int outq(int fd)
{
	int n = 0;

	return ioctl(fd, SIOCOUTQ, &n) < 0 ? 0 : n;
}

bool conn_closing_check(struct relay *r, struct conn *c, uint64_t now)
{
	if (now < c->closing_by &&
	    (c->pending[0] > 0 || c->pending[1] > 0 || outq(c->fd[0]) > 0 || outq(c->fd[1]) > 0))
		return false;
	conn_end(r, c, c->closing);
	return true;
}

/*
 * revents of fd[which]. Direction d reads fd[d] and writes fd[1 - d]: a
 * readable fd[which] feeds direction `which`, a writable one drains
 * direction 1 - which.
 */
void conn_events(struct relay *r, struct conn *c, int which, short revents)
{
	if (c->connecting) {
		/* only the service's side is polled until it is connected */
		conn_connected(r, c);
		return;
	}
	if ((revents & POLLOUT) && !flush(r, c, 1 - which))
		return;
	if (c->closing) {
		if (revents & POLLERR)
			conn_end(r, c, c->closing);
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		if (c->eof[which] || c->pending[which] > 0) {
			/* nothing to take now; an error with nothing left to read */
			if ((revents & POLLERR) && c->used)
				conn_end(r, c, SBX_END_RESET);
			return;
		}
		fill(r, c, which);
	}
}
