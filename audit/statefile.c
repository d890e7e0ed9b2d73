/* SPDX-License-Identifier: ISC */
/* The --state file: read whole, replaced atomically so that a crash never
 * leaves the auditor without a trusted checkpoint. */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

long state_read(const char *path, char *buf, size_t buflen, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (n + 1 < buflen && (r = read(fd, buf + n, buflen - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (n + 1 >= buflen) {
		snprintf(err, errlen, "%s: too large for a checkpoint", path);
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: empty (delete it to trust the log's current checkpoint)", path);
		return -1;
	}
	return (long)n;
}

int state_write(const char *path, const char *note, char *err, size_t errlen)
{
	char tmp[4200];
	size_t len = strlen(note);
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write(fd, note, len) != (ssize_t)len || fsync(fd) < 0) {
		snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
