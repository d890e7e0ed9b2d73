/* SPDX-License-Identifier: ISC */
/*
 * The artifact collector: started by the supervisor after every sandboxed
 * process is dead, as the caller (whose files these are), with no
 * capabilities, not dumpable, no_new_privs. It copies the regular files at
 * the top of /out into sealed memfds for the recorder, never following a
 * symlink and never leaving /out (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "helper.h"
#include "testhook.h"

#define MAX_FILES 64

static int copy_to_memfd(int src, uint64_t size)
{
	char buf[65536];
	uint64_t done = 0;
	/* not the file's name: memfd names stop at 249 bytes, file names at 255 */
	int m = memfd_create("sbx-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (m < 0)
		return -1;
	while (done < size) {
		ssize_t n = read(src, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || sbx_write_all(m, buf, (size_t)n) < 0)
			break;
		done += (uint64_t)n;
	}
	if (done != size ||
	    fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(m);
		return -1;
	}
	return m;
}

void collector_main(const struct run *r, int outdir, int art)
{
	char err[HELPER_ERR_LEN];
	struct dirent *de;
	uint64_t total = 0;
	uint32_t skipped = 0;
	int files = 0, dfd;
	DIR *d;

	if (drop_to(r->uid, r->gid, err, sizeof(err)) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(1);
	TEST_HOOK("collector-dropped");
	dfd = openat(outdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (d == NULL)
		_exit(1);
	while ((de = readdir(d)) != NULL) {
		struct open_how how = {
			.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
		};
		struct stat st;
		int fd, m;

		/* hidden files are caches and dotfiles, not results */
		if (de->d_name[0] == '.')
			continue;
		/* the result says how many files were left out, whatever the reason */
		skipped++;
		if (files == MAX_FILES)
			continue;
		fd = (int)syscall(SYS_openat2, outdir, de->d_name, &how, sizeof(how));
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || total + (uint64_t)st.st_size > r->limits.out_bytes) {
			close(fd);
			continue;
		}
		m = copy_to_memfd(fd, (uint64_t)st.st_size);
		close(fd);
		if (m < 0)
			continue;
		skipped--;
		total += (uint64_t)st.st_size;
		files++;
		sbx_send_fd(art, de->d_name, strlen(de->d_name), m, 0);
		close(m);
	}
	/* last message, without an fd: a NUL byte and the count left out */
	{
		char msg[1 + sizeof(skipped)] = {0};
		memcpy(msg + 1, &skipped, sizeof(skipped));
		sbx_send_fd(art, msg, sizeof(msg), -1, 0);
	}
	_exit(0);
}
