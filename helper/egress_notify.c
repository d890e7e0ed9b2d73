/* SPDX-License-Identifier: ISC */
/*
 * The seccomp listener of [network] mode = allow: the record of every
 * connect(2) the payload makes.
 *
 * Rules (in the sandbox's filter, seccomp/rules.c egress_rules(),
 * precompiled): AF_INET and AF_INET6 sockets only of type SOCK_STREAM
 * with protocol 0 or IPPROTO_TCP (UDP, ICMP, raw, SCTP and MPTCP fail
 * with EPROTONOSUPPORT; AF_PACKET and AF_NETLINK are denied with every
 * other family); no TCP Fast Open data on sendto/sendmsg/sendmmsg
 * (EOPNOTSUPP), so every connection starts with a connect(2); and
 * connect(2) is SCMP_ACT_NOTIFY. The listener speaks the kernel's ioctls
 * (seccomp_unotify(2)) directly: the setuid helper does not link
 * libseccomp.
 *
 * The notification goes to the sandbox init (the listener descriptor
 * stays there), which reads the destination from the caller's memory
 * (/proc/PID/mem, same uid, the payload is its descendant), tells the
 * relay about it, and answers SECCOMP_USER_NOTIF_FLAG_CONTINUE: the
 * kernel then performs the call as if there were no filter. The answer
 * never depends on what was read, because what was read can change
 * before the kernel reads it again (seccomp_unotify(2), "Caveats"): the
 * network namespace is what allows or refuses the destination. The
 * record is therefore what the payload asked for, not a proof; the
 * relay's own record of each connection it carried is exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "helper.h"

static int notify_fd = -1;
static const struct run *nrun;
static struct seccomp_notif *req;
static struct seccomp_notif_resp *resp;
static uint32_t lost;

void egress_notify_prepare(const struct run *r)
{
	nrun = r;
}

int egress_notify_fd(void)
{
	return notify_fd;
}

/* The sizes of the kernel's notification structures, which may be larger
 * than this build's headers (seccomp_unotify(2): SECCOMP_GET_NOTIF_SIZES;
 * libseccomp's seccomp_notify_alloc does the same). */
static size_t notif_size, resp_size;

int egress_notify_listen(int fd)
{
	struct seccomp_notif_sizes sz;

	notify_fd = fd;
	if (fd < 0 || syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -1;
	notif_size = sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req);
	resp_size = sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp : sizeof(*resp);
	req = calloc(1, notif_size);
	resp = calloc(1, resp_size);
	if (req == NULL || resp == NULL)
		return -1;
	fcntl(notify_fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

/* 0 if the notification id is still pending (its task has not died nor
 * been answered); kernels before 5.9 (and their stable updates) know the
 * ioctl under its first, wrongly directed number, as libseccomp tries. */
static int id_valid(uint64_t id)
{
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
		return 0;
	if (errno == EINVAL && ioctl(notify_fd, SECCOMP_IOR(2, __u64), &id) == 0)
		return 0;
	return -1;
}

/* The destination of the notified connect(2), or -1 when there is none
 * to record (not an IP address) or it cannot be read (-2). */
static int read_dest(const struct seccomp_notif *n, struct sbx_egress_attempt *a)
{
	union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } u;
	uint64_t len = n->data.args[2];
	char path[40];
	ssize_t got;
	int fd;

	memset(&u, 0, sizeof(u));
	snprintf(path, sizeof(path), "/proc/%u/mem", (unsigned)n->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	/* the task may have died and its pid been reused since RECV */
	if (id_valid(n->id) != 0) {
		close(fd);
		return -1;
	}
	got = pread(fd, &u, len < sizeof(u) ? (size_t)len : sizeof(u), (off_t)n->data.args[1]);
	close(fd);
	if (got < (ssize_t)sizeof(u.sa.sa_family))
		return -2;
	if (u.sa.sa_family == AF_INET && got >= (ssize_t)sizeof(u.in)) {
		a->family = AF_INET;
		a->port = ntohs(u.in.sin_port);
		memcpy(a->addr, &u.in.sin_addr, 4);
		return 0;
	}
	if (u.sa.sa_family == AF_INET6 && got >= (ssize_t)sizeof(u.in6)) {
		const uint8_t *b = (const uint8_t *)&u.in6.sin6_addr;
		a->port = ntohs(u.in6.sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&u.in6.sin6_addr)) {
			a->family = AF_INET;
			memcpy(a->addr, b + 12, 4);
		} else {
			a->family = AF_INET6;
			memcpy(a->addr, b, 16);
		}
		return 0;
	}
	if (u.sa.sa_family == AF_INET || u.sa.sa_family == AF_INET6)
		return -2;
	return -1; /* AF_UNIX, AF_UNSPEC (dissolving an association) */
}

/* The sandbox's own loopback: not a destination outside. */
static bool local(const struct sbx_egress_attempt *a)
{
	static const uint8_t any6[16], lo6[16] = {[15] = 1};

	if (a->family == AF_INET)
		return a->addr[0] == 127 || (a->addr[0] | a->addr[1] | a->addr[2] | a->addr[3]) == 0;
	return memcmp(a->addr, lo6, 16) == 0 || memcmp(a->addr, any6, 16) == 0;
}

static uint8_t verdict(const struct sbx_egress_attempt *a)
{
	const struct egress_run *e = &nrun->egress;
	uint8_t v = SBX_ATTEMPT_UNREACHABLE;

	for (size_t i = 0; i < e->n_pairs; i++) {
		const struct sbx_egress_pair *p = &e->pairs[i];
		if (p->family != a->family || memcmp(p->addr, a->addr, 16) != 0)
			continue;
		if (p->port == a->port)
			return SBX_ATTEMPT_PAIR;
		v = SBX_ATTEMPT_REFUSED;
	}
	return v;
}

void egress_notify_handle(void)
{
	struct sbx_egress_attempt a;
	int rc;

	/* the kernel refuses a buffer that is not zeroed (EINVAL) */
	memset(req, 0, notif_size);
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return; /* the task was killed meanwhile (ENOENT) */
	memset(&a, 0, sizeof(a));
	a.magic = SBX_EGRESS_MAGIC;
	a.kind = SBX_EGRESS_ATTEMPT;
	rc = nrun != NULL ? read_dest(req, &a) : -1;
	if (rc == -2)
		a.verdict = SBX_ATTEMPT_UNREAD;
	else if (rc == 0 && !local(&a))
		a.verdict = verdict(&a);
	if (a.verdict != 0) {
		a.lost = lost;
		if (send(nrun->egress.sandbox, &a, sizeof(a), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(a))
			lost = 0;
		else
			lost++;
	}
	memset(resp, 0, resp_size);
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	(void)ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
}
