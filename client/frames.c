/* SPDX-License-Identifier: ISC */
#include "frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"
#include "rundesc.h"

void frame_reader_init(struct frame_reader *r, int sock)
{
	memset(r, 0, sizeof(*r));
	r->sock = sock;
	r->cur.fd = -1;
}

void frame_reader_free(struct frame_reader *r)
{
	free(r->cur.payload);
	if (r->cur.fd >= 0)
		close(r->cur.fd);
	frame_reader_init(r, r->sock);
}

/* Keep one descriptor if it came with a header's first byte, close the rest:
 * every received descriptor is ours to close, and a helper bug must not
 * leak them into our later children. */
static void take_fds(struct frame_reader *r, struct msghdr *m, int first_byte)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		size_t i, n;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (first_byte && r->cur.fd < 0) {
				r->cur.fd = fd;
			} else {
				close(fd);
				r->stray_fds++;
			}
		}
	}
	if (m->msg_flags & MSG_CTRUNC) {
		if (first_byte)
			r->cur.fd_lost = true;
		else
			r->stray_fds++;
	}
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int start_payload(struct frame_reader *r, char *err, size_t errlen)
{
	size_t max;

	r->cur.type = be32(r->hdr);
	r->cur.len = be32(r->hdr + 4);
	switch (r->cur.type) {
	case SBX_FRAME_ARTIFACT: max = ARTIFACT_NAME_MAX; break;
	case SBX_FRAME_RESULT: max = SBX_FRAME_MAX; break;
	case SBX_FRAME_STDOUT:
	case SBX_FRAME_STDERR: max = SBX_FRAME_OUTPUT_MAX; break;
	case SBX_FRAME_MESSAGE: max = SBX_FRAME_LINE_MAX; break;
	case SBX_FRAME_STARTED: max = SBX_ID_LEN; break;
	case SBX_FRAME_DRY_RUN: max = sizeof(struct sbx_dry_run); break;
	default:
		snprintf(err, errlen, "unknown frame type %u", (unsigned)r->cur.type);
		return -1;
	}
	if (r->cur.len > max) {
		snprintf(err, errlen, "frame of type %u and %zu bytes is over its %zu byte limit",
			 (unsigned)r->cur.type, r->cur.len, max);
		return -1;
	}
	if (r->cur.type == SBX_FRAME_ARTIFACT && r->cur.len == 0) {
		snprintf(err, errlen, "artifact name of 0 bytes");
		return -1;
	}
	if (r->cur.type != SBX_FRAME_ARTIFACT && r->cur.fd >= 0) {
		close(r->cur.fd);
		r->cur.fd = -1;
		r->stray_fds++;
	}
	r->cur.payload = malloc(r->cur.len + 1);
	if (r->cur.payload == NULL) {
		snprintf(err, errlen, "out of memory for a %zu byte frame", r->cur.len);
		return -1;
	}
	r->got = 0;
	return 0;
}

enum frame_status frame_read(struct frame_reader *r, struct frame *out, char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} ctl;

	for (;;) {
		int in_header = r->hdr_got < sizeof(r->hdr), first_byte = r->hdr_got == 0;
		struct iovec iov;
		struct msghdr m;
		ssize_t n;

		if (!in_header && r->got == r->cur.len) {
			r->cur.payload[r->cur.len] = '\0';
			*out = r->cur;
			r->cur.payload = NULL;
			r->cur.fd = -1;
			r->cur.fd_lost = false;
			r->hdr_got = 0;
			return FRAME_READY;
		}
		if (in_header) {
			iov.iov_base = r->hdr + r->hdr_got;
			iov.iov_len = sizeof(r->hdr) - r->hdr_got;
		} else {
			iov.iov_base = r->cur.payload + r->got;
			iov.iov_len = r->cur.len - r->got;
		}
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(r->sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return FRAME_AGAIN;
		if (n < 0) {
			snprintf(err, errlen, "reading the result socket: %s", strerror(errno));
			return FRAME_ERROR;
		}
		take_fds(r, &m, in_header && first_byte && n > 0);
		if (n == 0) {
			if (in_header && first_byte)
				return FRAME_EOF;
			snprintf(err, errlen, "the result socket closed inside a frame");
			return FRAME_ERROR;
		}
		if (in_header) {
			r->hdr_got += (size_t)n;
			if (r->hdr_got == sizeof(r->hdr) && start_payload(r, err, errlen) < 0)
				return FRAME_ERROR;
		} else {
			r->got += (size_t)n;
		}
	}
}
