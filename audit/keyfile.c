/* SPDX-License-Identifier: ISC */
/* Crash-safe, no-follow writing of key files (see keyfile.h). */
#include "keyfile.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
	int e = errno;

	snprintf(err, errlen, "%s: %s%s%s", path, what, what[0] ? ": " : "", strerror(e));
	errno = e;
	return -1;
}

static int sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = -1;

	if (copy == NULL)
		return -1;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	free(copy);
	return rc;
}

int keyfile_write(const char *path, const void *data, size_t len, mode_t mode,
		  uid_t uid, gid_t gid, int replace, char *err, size_t errlen)
{
	char tmp[4096];
	int fd, e;

	if (snprintf(tmp, sizeof(tmp), "%s.new-%08x", path, randombytes_random()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return fail(err, errlen, path, "");
	}
	/* Created with the final mode: the bytes are never readable by others. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return fail(err, errlen, tmp, "create");
	if (sbx_write_all(fd, data, len) < 0 || fsync(fd) < 0 ||
	    ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0) ||
	    fchmod(fd, mode) < 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return fail(err, errlen, tmp, "write");
	}
	if (close(fd) < 0) {
		e = errno;
		unlink(tmp);
		errno = e;
		return fail(err, errlen, tmp, "write");
	}
	if (replace ? rename(tmp, path) : link(tmp, path)) {
		e = errno;
		unlink(tmp);
		errno = e;
		return fail(err, errlen, path, "");
	}
	if (!replace)
		unlink(tmp);
	if (sync_dir(path) < 0)
		return fail(err, errlen, path, "sync directory");
	return 0;
}
