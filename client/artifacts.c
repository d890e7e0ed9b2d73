/* SPDX-License-Identifier: ISC */
#include "artifacts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#define LIBBSD_NETBSD_VIS 1 /* we use neither strnvis(); this silences the warning */
#include <bsd/vis.h>

#include "fail.h"

static char *absolute(const char *dir)
{
	char cwd[PATH_MAX], *out;
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (dir[0] == '/') {
		out = strndup(dir, n);
	} else {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			cli_die("--artifacts", "cannot get the current directory: %s", strerror(errno));
		if (asprintf(&out, "%s/%.*s", strcmp(cwd, "/") == 0 ? "" : cwd, (int)n, dir) < 0)
			out = NULL;
	}
	if (out == NULL)
		cli_die("--artifacts", "out of memory");
	return out;
}

void artifact_dir_open(const char *dir, struct artifact_dir *ad)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;

	ad->fd = open(dir, flags);
	if (ad->fd < 0 && errno == ENOENT) {
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			cli_die_code("artifacts_unwritable", "--artifacts", "%s: cannot create: %s", dir, strerror(errno));
		ad->fd = open(dir, flags);
	}
	if (ad->fd < 0) {
		int e = errno;
		/* O_NOFOLLOW reports a symlink as ELOOP (or ENOTDIR with
		 * O_DIRECTORY): name the real reason. */
		if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			cli_die_code("artifacts_unwritable", "--artifacts", "%s: is a symbolic link; give the directory itself", dir);
		cli_die_code("artifacts_unwritable", "--artifacts", "%s: %s", dir, strerror(e));
	}
	/* Checked before the run, as the caller who writes the files (the
	 * collector runs with the caller's uid): a directory that exists but
	 * cannot be written would otherwise lose the artifacts after it. */
	if (faccessat(ad->fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		cli_die_code("artifacts_unwritable", "--artifacts", "%s: you cannot write there (%s); give a directory you can write",
			     dir, strerror(errno));
	ad->path = absolute(dir);
}

int artifact_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > 255 || memchr(name, '\0', len) != NULL || memchr(name, '/', len) != NULL)
		return 0;
	return !(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.');
}

static int copy_fd(int from, int to, uint64_t *size)
{
	char buf[65536];
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(from, buf, sizeof(buf), off), w;
		char *p = buf;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		off += r;
		while (r > 0) {
			w = write(to, p, (size_t)r);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			p += w;
			r -= w;
		}
	}
	*size = (uint64_t)off;
	return 0;
}

/* A temporary name that fits NAME_MAX even for a 255-byte NAME. */
static int temp_name(const char *name, char *out, size_t outlen)
{
	unsigned char rnd[4];
	size_t keep = strlen(name);

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	if (keep > 255 - 13)
		keep = 255 - 13;
	snprintf(out, outlen, "%.*s.tmp-%02x%02x%02x%02x", (int)keep, name, rnd[0], rnd[1], rnd[2], rnd[3]);
	return 0;
}

int artifact_save(const struct artifact_dir *ad, const char *name, int memfd, uint64_t *size,
		  char **path, char *err, size_t errlen)
{
	char tmp[256];
	struct stat st;
	int fd = -1, tries, e, rc;

	if (fstat(memfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the helper sent something other than a file");
		return -1;
	}
	for (tries = 0; tries < 16 && fd < 0; tries++) {
		if (temp_name(name, tmp, sizeof(tmp)) < 0) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			return -1;
		}
		fd = openat(ad->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST) {
			snprintf(err, errlen, "%s/%s: %s", ad->path, tmp, strerror(errno));
			return -1;
		}
	}
	if (fd < 0) {
		snprintf(err, errlen, "no free temporary name next to %s", name);
		return -1;
	}
	rc = copy_fd(memfd, fd, size);
	e = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc == 0 && asprintf(path, "%s/%s", ad->path, name) < 0) {
		rc = -1;
		e = ENOMEM;
	}
	if (rc == 0 && renameat(ad->fd, tmp, ad->fd, name) < 0) {
		rc = -1;
		e = errno;
		free(*path);
	}
	if (rc < 0) {
		*path = NULL;
		unlinkat(ad->fd, tmp, 0);
		snprintf(err, errlen, "%s/%s: %s", ad->path, name, strerror(e));
	}
	return rc;
}

char *artifact_printable(const char *name)
{
	size_t n = strlen(name);
	char *out = malloc(4 * n + 1);

	if (out != NULL)
		strvis(out, name, VIS_CSTYLE | VIS_OCTAL | VIS_TAB | VIS_NL);
	return out;
}
