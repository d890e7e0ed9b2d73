/* SPDX-License-Identifier: ISC */
/*
 * Reading the helper's result socket (proto.h --result-fd): frames of an
 * 8-byte header (u32 type, u32 length, big-endian) and a payload; an
 * artifact frame's memfd arrives as SCM_RIGHTS with the header's first
 * byte. The reader is incremental and non-blocking so that one poll loop
 * can also watch the helper's exit and our own terminal.
 */
#ifndef SBX_CLIENT_FRAMES_H
#define SBX_CLIENT_FRAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARTIFACT_NAME_MAX 255

struct frame {
	uint32_t type;   /* enum sbx_frame_type */
	char *payload;   /* len bytes plus a NUL; malloc'ed, the caller frees */
	size_t len;
	int fd;          /* artifact memfd (close-on-exec), or -1; the caller closes */
	bool fd_lost;    /* the kernel dropped descriptors (MSG_CTRUNC) */
};

struct frame_reader {
	int sock;            /* non-blocking */
	unsigned char hdr[8];
	size_t hdr_got;
	struct frame cur;
	size_t got;
	unsigned stray_fds;  /* descriptors that came where none belong, closed */
};

enum frame_status {
	FRAME_AGAIN,  /* nothing more to read now: poll again */
	FRAME_READY,  /* *out holds a frame */
	FRAME_EOF,    /* the helper closed the socket between frames */
	FRAME_ERROR,  /* protocol error or I/O error, err says which; stop reading */
};

/* Start reading frames from sock (our end of the result socketpair, set
 * O_NONBLOCK by the caller). */
void frame_reader_init(struct frame_reader *r, int sock);

/*
 * Read until a frame completes, the socket has no data, or it ends.
 * Unknown frame types, lengths above the type's limit (proto.h; an artifact
 * name 1..ARTIFACT_NAME_MAX) and EOF inside a frame are errors. Descriptors arriving anywhere but with an artifact header's first
 * byte, or more than one there, are closed and counted in stray_fds.
 */
enum frame_status frame_read(struct frame_reader *r, struct frame *out, char *err, size_t errlen);

/* Free what a reader holds mid-frame. */
void frame_reader_free(struct frame_reader *r);

#endif
