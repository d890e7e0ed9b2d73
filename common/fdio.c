/* SPDX-License-Identifier: ISC */
#include "fdio.h"
#include "unconst.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int sbx_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t sbx_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

ssize_t sbx_sendmsg_fd(int sock, struct iovec *iov, size_t iovcnt, int fd, int flags)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = iovcnt};

	memset(&u, 0, sizeof(u));
	if (fd >= 0) {
		m.msg_control = u.b;
		m.msg_controllen = sizeof(u.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL | flags);
}

int sbx_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
	struct iovec iov = {.iov_base = sbx_unconst(buf), .iov_len = len};
	ssize_t n;

	do
		n = sbx_sendmsg_fd(sock, &iov, 1, fd, flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		if (flags != 0) {
			errno = EAGAIN;
			return -1;
		}
		return sbx_write_all(sock, (const char *)buf + n, len - (size_t)n);
	}
	return 0;
}

int sbx_recv_fd(int sock, void *buf, size_t len, int *fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(4 * sizeof(int))]; } u;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			   .msg_controllen = sizeof(u.b)};
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (m.msg_flags & MSG_CTRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		errno = EPROTO;
		return -1;
	}
	return (int)n;
}

void sbx_frame_header(unsigned char out[8], uint32_t type, uint32_t len)
{
	for (int i = 0; i < 4; i++) {
		out[i] = (unsigned char)(type >> (24 - 8 * i));
		out[4 + i] = (unsigned char)(len >> (24 - 8 * i));
	}
}

void sbx_hex(const unsigned char *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}
