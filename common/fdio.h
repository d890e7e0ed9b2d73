/* SPDX-License-Identifier: ISC */
/* Descriptor I/O shared by the helper's processes, the recorder and the
 * client: whole writes and reads, fd passing (SCM_RIGHTS, unix(7)), frame
 * headers (proto.h), hex. */
#ifndef SBX_FDIO_H
#define SBX_FDIO_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* write(2) until len bytes are written (EINTR retried); 0 or -1 (errno). */
int sbx_write_all(int fd, const void *buf, size_t len);
/* read(2) until len bytes or EOF; bytes read, or -1 (errno). */
ssize_t sbx_read_full(int fd, void *buf, size_t len);
/* sendmsg(2) of iov with fd (or none: -1) as SCM_RIGHTS, flags |
 * MSG_NOSIGNAL: what sendmsg returned. */
struct iovec;
ssize_t sbx_sendmsg_fd(int sock, struct iovec *iov, size_t iovcnt, int fd, int flags);
/* sendmsg(2) of buf with fd (or none: -1) as SCM_RIGHTS, MSG_NOSIGNAL plus
 * flags; a short send of a stream socket is completed with sbx_write_all
 * when flags is 0. 0, or -1 (errno). */
int sbx_send_fd(int sock, const void *buf, size_t len, int fd, int flags);
/* recvmsg(2) of up to len bytes and at most one fd (close-on-exec; further
 * ones are closed; *fd = -1 if none). Bytes received, or -1 (errno; EPROTO
 * when descriptors were cut off). */
int sbx_recv_fd(int sock, void *buf, size_t len, int *fd);
/* The 8-byte frame header of proto.h: type, then length, big-endian. */
void sbx_frame_header(unsigned char out[8], uint32_t type, uint32_t len);
/* n bytes as 2n lower-case hex digits and a NUL. */
void sbx_hex(const unsigned char *in, size_t n, char *out);

#endif
