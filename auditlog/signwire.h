/* SPDX-License-Identifier: ISC */
/*
 * The recorder <-> sbx-signer protocol, over one SOCK_STREAM socket (fd
 * SBX_SIGNER_FD in sbx-signer, SBX_REC_FD_SIGNER in the recorder: proto.h). Every message is a frame: a 4-byte
 * big-endian length of what follows (at most SBX_SIGN_FRAME_MAX), one
 * type byte, the payload. Requests and replies alternate; the signer
 * exits at EOF.
 *
 * Requests (integers big-endian):
 *   RECORD      u64 seq, prev chain[32], u8 origin length, origin, blob
 *   CHECKPOINT  u64 size, root[32], u8 origin length, origin
 *   INIT        u64 size, chain[32], frontier (merkle.h sbx_mtree_save):
 *               accepted only by a signer with no state yet, whose first
 *               RECORD answered NEED_INIT (trust on first use)
 * Replies:
 *   OK          RECORD: chain[32], sig[64]; CHECKPOINT: the note; INIT: -
 *   REFUSED     a message (UTF-8, no newline): why
 *   NEED_INIT   -
 */
#ifndef SBX_SIGNWIRE_H
#define SBX_SIGNWIRE_H
#include <stddef.h>
#include <stdint.h>

#include "proto.h" /* SBX_SIGNER_FD */
#include "record.h"
#define SBX_SIGN_FRAME_MAX (SBX_REC_MAX_BLOB + 512)

enum sbx_sign_type {
	SBX_SIGN_RECORD = 1,
	SBX_SIGN_CHECKPOINT = 2,
	SBX_SIGN_INIT = 3,
	SBX_SIGN_OK = 0x80,
	SBX_SIGN_REFUSED = 0x81,
	SBX_SIGN_NEED_INIT = 0x82,
};

/* Write one frame (type, payload of len bytes); 0, or -1 (errno). */
int sbx_sign_send(int fd, unsigned type, const void *payload, size_t len);
/* Read one frame into *buf (malloc'd, *len bytes), *type; 1, 0 at EOF
 * before a frame, -1 (a short or oversized frame, errno). */
int sbx_sign_recv(int fd, unsigned *type, unsigned char **buf, size_t *len);

#endif
