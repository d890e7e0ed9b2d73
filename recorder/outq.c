/* SPDX-License-Identifier: ISC */
/* Frames to the client without blocking (outq.h). */
#include "outq.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "proto.h"
#include "clock.h"
#include "unconst.h"



void outq_init(struct outq *q, int sock)
{
	memset(q, 0, sizeof(*q));
	q->sock = sock;
}

static void drop(struct outq_item *it)
{
	free(it->own);
	it->own = NULL;
	if (it->fd >= 0)
		close(it->fd);
	it->fd = -1;
}

static struct outq_item *push(struct outq *q)
{
	if (q->head + q->n == q->cap) {
		if (q->head > 0) {
			memmove(q->items, q->items + q->head, q->n * sizeof(*q->items));
			q->head = 0;
		} else {
			size_t cap = q->cap ? q->cap * 2 : 64;
			struct outq_item *p = realloc(q->items, cap * sizeof(*p));
			if (p == NULL)
				return NULL;
			q->items = p;
			q->cap = cap;
		}
	}
	struct outq_item *it = &q->items[q->head + q->n++];
	memset(it, 0, sizeof(*it));
	it->fd = -1;
	return it;
}

/* One output frame of at most SBX_FRAME_OUTPUT_MAX bytes. */
static void output_one(struct outq *q, uint32_t type, const struct outq_src *src, size_t off, size_t n)
{
	struct outq_item *it;

	/* The tail of this source's data is always the last queued item of
	 * this source: extend the queue's last item when it is that one and
	 * has not started to go. Under a client that does not read, a payload
	 * alternating tiny writes to stdout and stderr still makes at most one
	 * item per write the pipe delivered, each within the cap. */
	if (q->n > 0) {
		it = &q->items[q->head + q->n - 1];
		if (it->src == src && it->sent == 0 && it->off + it->len == off && it->len + n <= SBX_FRAME_OUTPUT_MAX) {
			it->len += n;
			return;
		}
	}
	it = push(q);
	if (it == NULL) {
		q->gone = true; /* out of memory: the result still carries the output */
		return;
	}
	it->type = type;
	it->src = src;
	it->off = off;
	it->len = n;
}

void outq_output(struct outq *q, uint32_t type, const struct outq_src *src, size_t off, size_t n)
{
	while (n > 0 && !q->gone) {
		size_t k = n < SBX_FRAME_OUTPUT_MAX ? n : SBX_FRAME_OUTPUT_MAX;

		output_one(q, type, src, off, k);
		off += k;
		n -= k;
	}
}

void outq_frame(struct outq *q, uint32_t type, const void *data, size_t n, int fd)
{
	struct outq_item *it = q->gone ? NULL : push(q);
	char *copy = it ? malloc(n ? n : 1) : NULL;

	if (copy == NULL) {
		if (it)
			q->n--;
		if (fd >= 0)
			close(fd);
		return;
	}
	memcpy(copy, data, n);
	it->type = type;
	it->own = copy;
	it->len = n;
	it->fd = fd;
}

void outq_frame_take(struct outq *q, uint32_t type, char *data, size_t n)
{
	struct outq_item *it = q->gone ? NULL : push(q);

	if (it == NULL) {
		free(data);
		return;
	}
	it->type = type;
	it->own = data;
	it->len = n;
}

bool outq_pending(const struct outq *q)
{
	return !q->gone && q->n > 0;
}

void outq_send(struct outq *q)
{
	while (outq_pending(q)) {
		struct outq_item *it = &q->items[q->head];
		const char *payload = it->own ? it->own : it->src->buf + it->off;
		unsigned char hdr[8];
		struct iovec iov[2];
		size_t niov = 0;
		ssize_t w;

		sbx_frame_header(hdr, it->type, (uint32_t)it->len);
		if (it->sent < 8) {
			iov[niov++] = (struct iovec){hdr + it->sent, 8 - it->sent};
			if (it->len)
				iov[niov++] = (struct iovec){sbx_unconst(payload), it->len};
		} else {
			iov[niov++] = (struct iovec){sbx_unconst(payload + it->sent - 8), it->len + 8 - it->sent};
		}
		/* the fd goes with the header's first byte */
		w = sbx_sendmsg_fd(q->sock, iov, niov, it->sent == 0 ? it->fd : -1, MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			q->gone = true;
			break;
		}
		it->sent += (size_t)w;
		if (it->sent == it->len + 8) {
			drop(it);
			q->head++;
			q->n--;
		}
	}
	if (q->gone) {
		for (size_t i = 0; i < q->n; i++)
			drop(&q->items[q->head + i]);
		q->n = 0;
	}
}

void outq_flush(struct outq *q, int64_t deadline_ms)
{
	for (;;) {
		outq_send(q);
		if (!outq_pending(q))
			return;
		int64_t left = deadline_ms - sbx_mono_ms();
		struct pollfd p = {.fd = q->sock, .events = POLLOUT};
		if (left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR))
			break;
	}
	q->gone = true;
	outq_send(q); /* drops the rest */
}
