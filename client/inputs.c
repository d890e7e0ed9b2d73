/* SPDX-License-Identifier: ISC */
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bsd/string.h>

#include "fail.h"
#include "name.h"
#include "limit.h"
#include "policy.h"
#include "fdio.h"
#include "units.h"

static int copy_file(const char *path, uint64_t *total)
{
	char buf[65536];
	struct stat st;
	int fd, mfd;

	/* O_NONBLOCK: a FIFO must not hang us before fstat says what it is */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		cli_die_code("input_unreadable", "--input", "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		cli_die_code("input_unreadable", "--input", "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		cli_die_code("input_unreadable", "--input", "%s: not a regular file", path);
	mfd = memfd_create("sbx-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		cli_die("memfd_create", "%s", strerror(errno));
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			cli_die_code("input_unreadable", "--input", "%s: cannot read: %s", path, strerror(errno));
		if (r == 0)
			break;
		*total += (uint64_t)r;
		if (*total > sbx_limit_defs[SBX_LIMIT_INPUT_SIZE].max)
			cli_die_usage("--input", "%s: input files larger than %llu bytes together", path,
				      (unsigned long long)sbx_limit_defs[SBX_LIMIT_INPUT_SIZE].max);
		if (sbx_write_all(mfd, buf, (size_t)r) < 0)
			cli_die_code("input_unreadable", "--input", "%s: cannot copy: %s", path, strerror(errno));
	}
	close(fd);
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		cli_die("memfd", "cannot seal %s: %s", path, strerror(errno));
	return mfd;
}

void stdin_open(struct run_opts *o, uint64_t cap, const char *policy)
{
	char buf[65536];
	uint64_t total = 0;
	int mfd;

	struct stat st;

	/* pipes, sockets and files only: a terminal is the user's, and a
	 * character device such as /dev/null or /dev/zero is no input */
	if ((o->file != NULL && strcmp(o->file, "-") == 0) || fstat(0, &st) < 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode)))
		return;
	mfd = memfd_create("sbx-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		cli_die("memfd_create", "%s", strerror(errno));
	for (;;) {
		ssize_t r = read(0, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EISDIR)
			break; /* a directory on fd 0: nothing to pass */
		if (r < 0)
			cli_die("stdin", "cannot read: %s", strerror(errno));
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (total > cap) {
			char c[32];

			sbx_format_size(cap, c, sizeof(c));
			cli_die_code("input_too_large", "stdin",
				     "more than policy %s's input_size %s: the standard input is passed to the "
				     "program; redirect it from /dev/null to run without it",
				     policy, c);
		}
		if (sbx_write_all(mfd, buf, (size_t)r) < 0)
			cli_die("stdin", "cannot copy: %s", strerror(errno));
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		cli_die("memfd", "cannot seal stdin: %s", strerror(errno));
	o->stdin_fd = mfd;
}

void inputs_open(struct run_opts *o)
{
	uint64_t total = 0;

	for (size_t i = 0; i < o->n_inputs; i++) {
		const char *path = o->inputs[i], *base;
		char name[256];
		size_t len;

		/* the basename, ignoring trailing slashes */
		strlcpy(name, path, sizeof(name));
		len = strlen(name);
		while (len > 1 && name[len - 1] == '/')
			name[--len] = '\0';
		base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (!code_name_valid(base))
			cli_die_usage("--input", "%s: '%s' is not a name for /in ([A-Za-z0-9._-], 1-64 characters, "
				"not starting with '.'); copy or link the file under another name", path, base);
		for (size_t j = 0; j < i; j++)
			if (strcmp(o->input_names[j], base) == 0)
				cli_die_usage("--input", "%s: a second file named '%s' (names under /in must differ)", path,
					base);
		strlcpy(o->input_names[i], base, sizeof(o->input_names[i]));
		o->input_fds[i] = copy_file(path, &total);
	}
}
