/* SPDX-License-Identifier: ISC */
/* Frames of the recorder <-> sbx-signer protocol (signwire.h). */
#include "signwire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int put(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 read n bytes, 0 EOF before any, -1 error or EOF inside. */
static int get(int fd, void *p, size_t n)
{
	unsigned char *b = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			if (got == 0)
				return 0;
			errno = EPROTO;
			return -1;
		}
		got += (size_t)r;
	}
	return 1;
}

int sbx_sign_send(int fd, unsigned type, const void *payload, size_t len)
{
	unsigned char h[5];
	uint32_t n = (uint32_t)len + 1;

	if (len + 1 > SBX_SIGN_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	h[0] = (unsigned char)(n >> 24);
	h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8);
	h[3] = (unsigned char)n;
	h[4] = (unsigned char)type;
	return put(fd, h, sizeof(h)) < 0 || (len > 0 && put(fd, payload, len) < 0) ? -1 : 0;
}

int sbx_sign_recv(int fd, unsigned *type, unsigned char **buf, size_t *len)
{
	unsigned char h[5];
	uint32_t n;
	int rc = get(fd, h, sizeof(h));

	*buf = NULL;
	*len = 0;
	if (rc <= 0)
		return rc;
	n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	if (n == 0 || n > SBX_SIGN_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	*type = h[4];
	*buf = malloc(n); /* n - 1 bytes and a NUL for text payloads */
	if (*buf == NULL)
		return -1;
	if (n > 1 && get(fd, *buf, n - 1) != 1) {
		free(*buf);
		*buf = NULL;
		errno = errno ? errno : EPROTO;
		return -1;
	}
	(*buf)[n - 1] = '\0';
	*len = n - 1;
	return 1;
}
