/* SPDX-License-Identifier: ISC */
#include "code.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "proto.h"
#include "fdio.h"

static void put(int fd, const char *p, size_t n)
{
	if (sbx_write_all(fd, p, n) < 0)
		cli_die("memfd", "cannot write the code: %s", strerror(errno));
}

/* Copies in to the memfd; reading one byte past the limit tells "exactly
 * SBX_CODE_MAX" from "more". */
static void copy_capped(int in, int mfd, const char *what)
{
	char buf[65536];
	size_t total = 0;

	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			cli_die(what, "cannot read: %s", strerror(errno));
		if (r == 0)
			return;
		total += (size_t)r;
		if (total > SBX_CODE_MAX)
			cli_die(what, "code is larger than %u bytes (4 MiB)", SBX_CODE_MAX);
		put(mfd, buf, (size_t)r);
	}
}

int code_memfd(const struct run_opts *o)
{
	int mfd = memfd_create("sbx-code", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (mfd < 0)
		cli_die("memfd_create", "%s", strerror(errno));
	if (o->code) {
		size_t n = o->code_len ? o->code_len : strlen(o->code);
		if (n > SBX_CODE_MAX)
			cli_die("-c", "code is larger than %u bytes (4 MiB)", SBX_CODE_MAX);
		put(mfd, o->code, n);
	} else if (strcmp(o->file, "-") == 0) {
		copy_capped(STDIN_FILENO, mfd, "standard input");
	} else {
		struct stat st;
		int fd = open(o->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			cli_die(o->file, "%s", strerror(errno));
		if (fstat(fd, &st) < 0)
			cli_die(o->file, "%s", strerror(errno));
		if (S_ISDIR(st.st_mode))
			cli_die(o->file, "is a directory");
		if (S_ISREG(st.st_mode) && st.st_size > (off_t)SBX_CODE_MAX)
			cli_die(o->file, "code is larger than %u bytes (4 MiB)", SBX_CODE_MAX);
		copy_capped(fd, mfd, o->file);
		close(fd);
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		cli_die("memfd", "cannot seal the code: %s", strerror(errno));
	/* The helper shares this file offset. */
	if (lseek(mfd, 0, SEEK_SET) != 0)
		cli_die("memfd", "cannot rewind the code: %s", strerror(errno));
	return mfd;
}

char *code_read_back(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		cli_die("memfd", "%s", strerror(errno));
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		cli_die("code", "out of memory");
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != (ssize_t)st.st_size)
		cli_die("memfd", "cannot read the code back");
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}
