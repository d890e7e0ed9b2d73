/* SPDX-License-Identifier: ISC */
/* Small helpers shared by the helper's processes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>

#include "helper.h"
#include "proto.h"

/*
 * Writes to the caller's descriptors. Whatever fd 1 or 2 is (a pipe nobody
 * reads, a terminal stopped with ^S, a file on the caller's own FUSE mount
 * whose inode lock it holds), a privileged process that writes to it may
 * block for as long as the caller likes, in uninterruptible sleep for the
 * FUSE file, where not even root's SIGKILL ends it; the caller cannot make
 * the description non-blocking for us either (its flags are shared). So a
 * root process never writes there itself: a child that has become the
 * caller (drop_to: the caller's uid and gid, no capabilities, not
 * dumpable) writes, and the parent waits for it at most CALLER_WRITE_MS.
 * A child still blocked then is one more process of the caller's, counted
 * against the caller's RLIMIT_NPROC, and delivers the bytes once the
 * descriptor takes them (one write(2) each: lines stay whole in a pipe);
 * root goes on, and does not wait for later writes of its own again. Processes that are not root write
 * themselves: the caller's own (the collector, the sandbox), and the
 * recorder, whose output to the caller becomes frames on the result socket
 * with protocol v2 (PLAN.md; common/proto.h).
 */
#define CALLER_WRITE_MS 1000

static uid_t caller_uid = (uid_t)-1;
static gid_t caller_gid = (gid_t)-1;
static bool stalled;

void set_caller(uid_t uid, gid_t gid)
{
	caller_uid = uid;
	caller_gid = gid;
}

void caller_ids(uid_t *uid, gid_t *gid)
{
	*uid = caller_uid;
	*gid = caller_gid;
}

int to_caller(int fd, const void *buf, size_t len)
{
	char err[HELPER_ERR_LEN];
	int st, pfd;
	pid_t pid;

	if (geteuid() != 0 || caller_uid == (uid_t)-1)
		return write_all(fd, buf, len);
	if (fd < 0 || fd > 2)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close_range(3, ~0U, 0);
		if (drop_to(caller_uid, caller_gid, err, sizeof(err)) < 0)
			_exit(1);
		_exit(write_all(fd, buf, len) < 0 ? 1 : 0);
	}
	/* once the caller has left one write hanging, later ones would wait
	 * behind it: they are started but not waited for */
	pfd = stalled ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		while (poll(&p, 1, CALLER_WRITE_MS) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	if (waitpid(pid, &st, WNOHANG) != pid) {
		stalled = true;
		return -1; /* left to finish on its own: see above */
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static char *out_buf;
static size_t out_len;
static FILE *out_stream;

FILE *caller_stdout(void)
{
	if (out_stream == NULL)
		out_stream = open_memstream(&out_buf, &out_len);
	if (out_stream == NULL)
		die("out of memory");
	return out_stream;
}

int caller_stdout_flush(void)
{
	if (out_stream == NULL)
		return 0;
	if (fclose(out_stream) != 0) {
		out_stream = NULL;
		return -1;
	}
	out_stream = NULL;
	return to_caller(1, out_buf, out_len);
}

void warnx1(const char *fmt, ...)
{
	char buf[512] = "sbx-helper: ";
	const size_t pre = 12;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + pre, sizeof(buf) - pre - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - pre - 2)
		n = (int)(sizeof(buf) - pre - 2);
	/* one line, whatever the message held */
	for (int i = 0; i < n; i++)
		if (buf[pre + (size_t)i] == '\n' || buf[pre + (size_t)i] == '\r')
			buf[pre + (size_t)i] = ' ';
	buf[pre + (size_t)n] = '\n';
	(void)to_caller(2, buf, pre + (size_t)n + 1);
}

_Noreturn void die(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warnx1("%s", buf);
	_exit(SBX_EXIT_FAILURE);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int write_file(const char *path, const char *data, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || write_all(fd, data, strlen(data)) < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (close(fd) < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void hex(const unsigned char *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int send_fd(int sock, const void *buf, size_t len, int fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	memset(&u, 0, sizeof(u));
	if (fd >= 0) {
		m.msg_control = u.b;
		m.msg_controllen = sizeof(u.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != len)
		return write_all(sock, (const char *)buf + n, len - (size_t)n);
	return 0;
}

/* Receives up to len bytes and at most one fd; extra fds are closed. */
int recv_fd(int sock, void *buf, size_t len, int *fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(4 * sizeof(int))]; } u;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			   .msg_controllen = sizeof(u.b)};
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (m.msg_flags & MSG_CTRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		errno = EPROTO;
		return -1;
	}
	return (int)n;
}

/*
 * Become uid/gid for good: no supplementary groups, all three ids set,
 * every capability set emptied (libcap), not dumpable. Verified afterwards
 * rather than trusted (setuid(2) failures have been exploited before).
 */
int drop_to(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	cap_t caps;

	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		snprintf(err, errlen, "dropping to uid %u: %s", (unsigned)uid, strerror(errno));
		return -1;
	}
	caps = cap_init();
	if (caps == NULL || cap_set_proc(caps) < 0) {
		snprintf(err, errlen, "clearing capabilities: %s", strerror(errno));
		cap_free(caps);
		return -1;
	}
	cap_free(caps);
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
	    eu != uid || su != uid || rg != gid || eg != gid || sg != gid || getgroups(0, NULL) != 0 ||
	    (uid != 0 && setuid(0) == 0)) {
		snprintf(err, errlen, "privilege drop to uid %u did not take", (unsigned)uid);
		return -1;
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* An empty permitted set is not enough: the bounding set is still
	 * full, so exec of a file-capability binary would hand some back. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Join a new session keyring (KEYCTL_JOIN_SESSION_KEYRING, keyctl(2)),
 * named NAME or anonymous ("_ses") for NULL: the keyrings a process
 * inherits through fork and execve are the caller's, and whoever possesses
 * a keyring may use every key in it with the possessor permissions. A
 * named one is created fresh only because the name is new (a run id): the
 * kernel would join an existing keyring of that name the process may
 * search. A kernel without CONFIG_KEYS (ENOSYS) has no keys to inherit.
 */
int new_session_keyring(const char *name, char *err, size_t errlen)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) >= 0 || errno == ENOSYS)
		return 0;
	snprintf(err, errlen, "a new session keyring: %s%s", strerror(errno),
		 errno == EDQUOT ? " (the key quota of this user is full: /proc/key-users, keyrings(7))" : "");
	return -1;
}
