/* SPDX-License-Identifier: ISC */
/*
 * The recorder's frames to the client (proto.h), queued and sent without
 * ever blocking: the result socket is the caller's, and a client that
 * stops reading must slow nothing but itself. Output frames point into the
 * capture buffers (so queued output costs no second copy and is bounded by
 * the output cap); other frames own their payload.
 */
#ifndef SBX_RECORDER_OUTQ_H
#define SBX_RECORDER_OUTQ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer frames may point into (the captured stdout or
 * stderr). Offsets stay valid when it is reallocated. */
struct outq_src {
	char *buf;
	size_t len;
};

struct outq_item {
	uint32_t type;               /* enum sbx_frame_type */
	const struct outq_src *src;  /* output frames: bytes [off, off + len) of src */
	char *own;                   /* or a payload of our own (freed once sent) */
	size_t off, len;
	int fd;                      /* SCM_RIGHTS with the first byte, or -1; closed once sent */
	size_t sent;                 /* bytes of header and payload gone */
};

struct outq {
	int sock;
	struct outq_item *items;
	size_t head, n, cap;
	bool gone;                   /* the client closed or a send failed: drop everything */
};

void outq_init(struct outq *q, int sock);

/* Queue n bytes that were appended to src at offset off (an output frame;
 * merged into the last queued frame of the same source when that one has
 * not started to go). */
void outq_output(struct outq *q, uint32_t type, const struct outq_src *src, size_t off, size_t n);

/* Queue a frame with a copy of data (and fd, which the queue then owns). */
void outq_frame(struct outq *q, uint32_t type, const void *data, size_t n, int fd);

/* Queue a frame whose payload is data itself (malloc'ed; the queue frees it). */
void outq_frame_take(struct outq *q, uint32_t type, char *data, size_t n);

/* Send what the socket takes now. */
void outq_send(struct outq *q);

/* Something is queued (and the client has not gone). */
bool outq_pending(const struct outq *q);

/* Send until nothing is left, the client goes, or deadline_ms (sbx_mono_ms(),
 * clock.h) passes; then drop the rest. */
void outq_flush(struct outq *q, int64_t deadline_ms);

#endif
