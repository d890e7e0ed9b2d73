/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the client's decoding of what sbx-helper sends on the
 * result socket (common/proto.h: output, messages, progress, artifacts and
 * the result, frames of every type): the frame reader (client/frames.c) through
 * run_read_frames() in client/run.c, the result JSON through run_finish()
 * (client/finish.c), and the retry loop's use of the result, the fixer's
 * document (client/fixdoc.c). A compromised or buggy helper must not be
 * able to crash the client.
 *
 * Input: byte 0 sets how many bytes reach the socket at a time (1..255, 0:
 * all at once), so headers and payloads arrive split; the rest is the
 * byte stream. Inputs over 128 KiB are skipped (the socket buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>

#include "fixdoc.h"
#include "run.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)
#define MAX_INPUT (128u << 10)

static void use_result(json_t *res)
{
	struct fix_ctx fc = {.attempt = 1, .max_attempts = 3, .language = "python",
			     .session = "fuzz", .name = NULL, .code = "print(1)\n", .code_len = 9};
	char *doc;

	fc.history = json_array();
	REQUIRE(fc.history != NULL);
	doc = fix_document(&fc, res);
	if (doc != NULL) {
		json_t *back = json_loads(doc, 0, NULL);
		REQUIRE(back != NULL); /* what we hand the fixer must parse */
		json_decref(back);
		free(doc);
	}
	json_decref(fc.history);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run_opts o;
	struct run_state rs;
	json_t *res = NULL;
	size_t chunk, off;
	int sv[2];

	if (size == 0 || size > MAX_INPUT)
		return 0;
	chunk = data[0] ? data[0] : size;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	{
		int sz = (int)MAX_INPUT * 2;
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	memset(&rs, 0, sizeof(rs));
	memset(&o, 0, sizeof(o));
	rs.o = &o;
	rs.keep = &res;
	rs.dir.fd = -1;
	rs.pidfd = -1;
	rs.h.result_fd = sv[0];
	{
		/* plain mode shows output and messages: here, on /dev/null */
		static int devnull = -1;
		if (devnull < 0)
			devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		rs.show[0].fd = rs.show[1].fd = devnull;
	}
	frame_reader_init(&rs.fr, sv[0]);
	for (off = 0; off < size && !rs.sock_done; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		if (write(sv[1], data + off, n) != (ssize_t)n)
			abort();
		run_read_frames(&rs);
	}
	close(sv[1]);
	if (!rs.sock_done)
		run_read_frames(&rs);
	REQUIRE(rs.sock_done); /* all bytes are in, the writer closed: EOF or error */
	close(sv[0]);
	rs.status = 0; /* the helper exited 0 */
	(void)run_finish(&rs);
	if (res != NULL) {
		REQUIRE(rs.result != NULL && json_is_object(res));
		use_result(res);
		json_decref(res);
	}
	for (size_t i = 0; i < rs.narts; i++) {
		free(rs.arts[i].name);
		free(rs.arts[i].path);
	}
	free(rs.arts);
	free(rs.result);
	/* plain mode: output and messages wait for stdout/stderr there */
	free(rs.show[0].buf);
	free(rs.show[1].buf);
	return 0;
}
