/* SPDX-License-Identifier: ISC */
/*
 * A stand-in for sbx-helper to exercise the client's side of proto.h
 * (protocol version 2) without root: it speaks the frame protocol and acts
 * on the first word of the code it is given. Not built by default:
 *
 *   cc -std=c17 -D_GNU_SOURCE -Icommon -o /tmp/fake-helper tests/fake-helper.c
 *   cc ... -DSBX_HELPER_PATH='"/tmp/fake-helper"' client/\*.c build/libsbx.a ...
 *
 * Words: ok, artifacts, error, crash, badframe, strayfd, exit3, control,
 * args, bigresult, silent.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

static int sock = -1;

static void send_frame(uint32_t type, const void *data, uint32_t len, int fd)
{
	unsigned char *msg = malloc(8 + (size_t)len);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {msg, 8 + (size_t)len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	msg[0] = (unsigned char)(type >> 24); msg[1] = (unsigned char)(type >> 16);
	msg[2] = (unsigned char)(type >> 8); msg[3] = (unsigned char)type;
	msg[4] = (unsigned char)(len >> 24); msg[5] = (unsigned char)(len >> 16);
	msg[6] = (unsigned char)(len >> 8); msg[7] = (unsigned char)len;
	memcpy(msg + 8, data, len);
	if (fd >= 0) {
		struct cmsghdr *c;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &m, 0) != (ssize_t)(8 + len))
		perror("fake-helper: sendmsg");
	free(msg);
}

static void text(uint32_t type, const char *s)
{
	send_frame(type, s, (uint32_t)strlen(s), -1);
}

static int memfd_with(const char *content, size_t n)
{
	int fd = memfd_create("art", MFD_ALLOW_SEALING);

	if (write(fd, content, n) != (ssize_t)n)
		abort();
	fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK);
	return fd;
}

static void result(const char *json)
{
	send_frame(SBX_FRAME_RESULT, json, (uint32_t)strlen(json), -1);
}

int main(int argc, char **argv)
{
	char code[4096] = {0}, word[64] = {0}, buf[512];
	int i, code_fd = -1;

	for (i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--code-fd") == 0) code_fd = atoi(argv[i + 1]);
		if (strcmp(argv[i], "--result-fd") == 0) sock = atoi(argv[i + 1]);
	}
	if (code_fd < 0 || sock < 0) {
		fprintf(stderr, "sbx-helper: missing fds\n");
		return 125;
	}
	if (read(code_fd, code, sizeof(code) - 1) < 0)
		return 125;
	sscanf(code, "%63s", word);
	if (strcmp(word, "ok") == 0) {
		text(SBX_FRAME_STARTED, "0123456789abcdef0123456789abcdef");
		text(SBX_FRAME_STDOUT, "hello\n");
		text(SBX_FRAME_STDERR, "payload says hi on stderr\n");
		result("{\"outcome\":\"ok\",\"exit_code\":0,\"stdout\":\"hello\\n\",\"artifacts\":[]}");
		return 0;
	}
	if (strcmp(word, "artifacts") == 0) {
		static const char png[] = "\x89PNG\r\n\x1a\nfakepng";
		send_frame(SBX_FRAME_ARTIFACT, "plot.png", 8, memfd_with(png, sizeof(png) - 1));
		send_frame(SBX_FRAME_ARTIFACT, "data.csv", 8, memfd_with("a,b\n1,2\n", 8));
		send_frame(SBX_FRAME_ARTIFACT, "..", 2, memfd_with("x", 1));
		send_frame(SBX_FRAME_ARTIFACT, "nofd", 4, -1);
		send_frame(SBX_FRAME_ARTIFACT, "esc\x1b[31m", 8, memfd_with("e", 1));
		result("{\"outcome\":\"ok\",\"artifacts\":["
		       "{\"name\":\"plot.png\",\"size\":15,\"media_type\":\"image/png\",\"sha256\":\"00\"},"
		       "{\"name\":\"data.csv\",\"size\":8,\"media_type\":\"text/csv\",\"sha256\":\"11\"}]}");
		return 0;
	}
	if (strcmp(word, "error") == 0) {
		text(SBX_FRAME_STDERR, "payload noise\n");
		text(SBX_FRAME_MESSAGE, "policy 'secret': not allowed for user x");
		return 125;
	}
	if (strcmp(word, "crash") == 0)
		raise(SIGKILL);
	if (strcmp(word, "badframe") == 0) {
		send_frame(9, "x", 1, -1);
		return 0;
	}
	if (strcmp(word, "strayfd") == 0) {
		send_frame(SBX_FRAME_RESULT, "{\"outcome\":\"ok\"}", 16, memfd_with("x", 1));
		return 0;
	}
	if (strcmp(word, "exit3") == 0) {
		text(SBX_FRAME_STDERR, "Traceback (most recent call last):\nValueError: x\n");
		result("{\"outcome\":\"error\",\"exit_code\":3}");
		return 3;
	}
	if (strcmp(word, "control") == 0) {
		ssize_t n;
		char c = 0;
		text(SBX_FRAME_STDOUT, "waiting\n");
		n = read(sock, &c, 1);
		snprintf(buf, sizeof(buf), "{\"outcome\":\"signal\",\"control\":\"%s\"}",
			 n == 1 ? (c == SBX_CONTROL_INTERRUPT ? "I" : c == SBX_CONTROL_TERMINATE ? "T" : "?") : "EOF");
		result(buf);
		return 130;
	}
	if (strcmp(word, "args") == 0) {
		size_t off = (size_t)snprintf(buf, sizeof(buf), "{\"outcome\":\"ok\",\"argv\":[");
		for (i = 1; i < argc && off < sizeof(buf) - 64; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s\"%s\"", i > 1 ? "," : "", argv[i]);
		snprintf(buf + off, sizeof(buf) - off, "],\"fd5_open\":%s}", fcntl(5, F_GETFD) >= 0 ? "true" : "false");
		result(buf);
		return 0;
	}
	if (strcmp(word, "bigresult") == 0) {
		/* more output than a pipe holds, written before the result */
		size_t n = 1 << 20;
		char *big = malloc(n + 64);
		memset(big, 'x', n);
		for (size_t off = 0; off < n; off += SBX_FRAME_OUTPUT_MAX) {
			send_frame(SBX_FRAME_STDOUT, big + off, SBX_FRAME_OUTPUT_MAX, -1);
			send_frame(SBX_FRAME_STDERR, big + off, SBX_FRAME_OUTPUT_MAX, -1);
		}
		memcpy(big, "{\"outcome\":\"ok\",\"pad\":\"", 23);
		memset(big + 23, 'y', n - 23);
		memcpy(big + n, "\"}", 3);
		result(big);
		return 0;
	}
	if (strcmp(word, "silent") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "fake: unknown word '%s'", word);
	text(SBX_FRAME_MESSAGE, buf);
	return 125;
}
