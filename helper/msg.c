/* SPDX-License-Identifier: ISC */
/*
 * The helper's own messages (helper.h "msg.c"). Root never writes to an fd
 * of the caller's that could block it: before the result socket is known
 * to be a socket, a child that has become the caller writes the line to
 * fd 2 (a full pipe then stalls only that child, which is killed after a
 * second); after, the line is a frame sent with MSG_DONTWAIT.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>

#include "helper.h"
#include "clock.h"
#include "unconst.h"

#define MSG_WAIT_MS 1000
#define MSG_HELD 4

static uid_t caller_uid;
static gid_t caller_gid;
static pid_t owner = -1;   /* the supervisor; its children stay silent */
static int sock = -1;
static bool held;
static char waiting[MSG_HELD][SBX_FRAME_LINE_MAX];
static size_t n_waiting;

void msg_init(void)
{
	caller_uid = getuid();
	caller_gid = getgid();
	owner = getpid();
}

void msg_use_socket(int result_sock)
{
	sock = result_sock;
}

void msg_hold(void)
{
	held = true;
}


int msg_frame(uint32_t type, const void *data, size_t len, int timeout_ms)
{
	unsigned char hdr[8];
	size_t sent = 0, total = 8 + len;
	long long end = sbx_mono_ms() + timeout_ms;

	if (sock < 0 || len > SBX_FRAME_MAX)
		return -1;
	sbx_frame_header(hdr, type, (uint32_t)len);
	while (sent < total) {
		struct iovec iov[2];
		struct msghdr m = {.msg_iov = iov};
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		ssize_t n;

		if (sent < 8) {
			iov[m.msg_iovlen++] = (struct iovec){hdr + sent, 8 - sent};
			if (len)
				iov[m.msg_iovlen++] = (struct iovec){sbx_unconst(data), len};
		} else {
			iov[m.msg_iovlen++] = (struct iovec){(char *)sbx_unconst(data) + (sent - 8), total - sent};
		}
		n = sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -1;
		long long left = end - sbx_mono_ms();
		if (left <= 0 || poll(&p, 1, (int)left) < 0)
			return -1;
	}
	return 0;
}

void msg_as_caller(int fd, const void *buf, size_t n)
{
	pid_t pid;
	char err[128];

	if (geteuid() != 0) {
		(void)!sbx_write_all(fd, buf, n);
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (drop_to(caller_uid, caller_gid, err, sizeof(err)) == 0)
			(void)!sbx_write_all(fd, buf, n);
		_exit(0);
	}
	if (pid > 0)
		wait_timeout(pid, MSG_WAIT_MS);
}

static void emit(const char *text)
{
	size_t n = strlen(text);

	if (sock >= 0) {
		if (msg_frame(SBX_FRAME_MESSAGE, text, n, MSG_WAIT_MS) < 0)
			sock = -1; /* the client is not listening: the rest would wait too */
		return;
	}
	char line[SBX_FRAME_LINE_MAX + 16];
	int k = snprintf(line, sizeof(line), "sbx-helper: %s\n", text);
	msg_as_caller(2, line, (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
}

void msg_release(void)
{
	held = false;
	for (size_t i = 0; i < n_waiting; i++)
		emit(waiting[i]);
	n_waiting = 0;
}

void warnx1(const char *fmt, ...)
{
	char buf[SBX_FRAME_LINE_MAX];
	va_list ap;

	if (getpid() != owner)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* one line, whatever the message held */
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (held) {
		if (n_waiting < MSG_HELD)
			strlcpy(waiting[n_waiting++], buf, sizeof(waiting[0]));
		return;
	}
	emit(buf);
}

#define DIE_WITH(status, fmt)                                  \
	do {                                                   \
		char buf_[SBX_FRAME_LINE_MAX];                 \
		va_list ap_;                                   \
		va_start(ap_, fmt);                            \
		vsnprintf(buf_, sizeof(buf_), fmt, ap_);       \
		va_end(ap_);                                   \
		warnx1("%s", buf_);                            \
		_exit(status);                                 \
	} while (0)

_Noreturn void die(const char *fmt, ...)
{
	DIE_WITH(SBX_EXIT_FAILURE, fmt);
}

_Noreturn void die_status(int status, const char *fmt, ...)
{
	DIE_WITH(status, fmt);
}
