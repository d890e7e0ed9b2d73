/* SPDX-License-Identifier: ISC */
/*
 * The artifacts of a run (collector.h). It copies the regular files of
 * /out, subdirectories included (SBX_ART_DEPTH_MAX levels), into sealed
 * memfds for the recorder, never following a symlink and never leaving
 * /out (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, every path resolved from /out
 * itself), and tells the recorder about every file it does not return and
 * why (proto.h "collector -> recorder"), and which file the payload was
 * writing when /out filled up.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <bsd/string.h>

#include "collector.h"
#include "fdio.h"


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

struct walk {
	const struct collect *c;
	int outdir, art;
	uint64_t total, files;
	bool lost;                /* a word the recorder did not get: the list is not whole */
	struct timespec newest;   /* mtime of the newest regular file */
	char newest_path[SBX_PATH_MAX_ART + 1];
};

static void skipped(struct walk *w, enum sbx_art_skip why, const char *path)
{
	char msg[2 + SBX_PATH_MAX_ART];
	size_t n = strnlen(path, SBX_PATH_MAX_ART);

	msg[0] = SBX_COLLECT_SKIPPED;
	msg[1] = (char)why;
	memcpy(msg + 2, path, n);
	if (sbx_send_fd(w->art, msg, 2 + n, -1, 0) < 0)
		w->lost = true;
}

static int open_beneath(const struct walk *w, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, w->outdir, path, &how, sizeof(how));
}

static void one_file(struct walk *w, int fd, const struct stat *st, const char *path)
{
	int m;

	if (w->files == w->c->artifacts) {
		skipped(w, SBX_ART_SKIP_COUNT_CAP, path);
		return;
	}
	if (w->total + (uint64_t)st->st_size > w->c->out_bytes) {
		skipped(w, SBX_ART_SKIP_OUT_SIZE, path);
		return;
	}
	m = copy_to_memfd(fd, (uint64_t)st->st_size);
	if (m < 0) {
		skipped(w, SBX_ART_SKIP_UNREADABLE, path);
		return;
	}
	w->total += (uint64_t)st->st_size;
	w->files++;
	if (st->st_mtim.tv_sec > w->newest.tv_sec ||
	    (st->st_mtim.tv_sec == w->newest.tv_sec && st->st_mtim.tv_nsec >= w->newest.tv_nsec)) {
		w->newest = st->st_mtim;
		strlcpy(w->newest_path, path, sizeof(w->newest_path));
	}
	/* The recorder takes each file as it comes; fds in flight count
	 * against our RLIMIT_NOFILE (ETOOMANYREFS): wait for it, a bounded
	 * time, then name the file rather than lose it. */
	for (int tries = 0; sbx_send_fd(w->art, path, strlen(path), m, 0) < 0; tries++) {
		if ((errno != ETOOMANYREFS && errno != ENOBUFS && errno != EINTR) || tries == 500) {
			w->total -= (uint64_t)st->st_size;
			w->files--;
			skipped(w, SBX_ART_SKIP_UNREADABLE, path);
			break;
		}
		usleep(10000);
	}
	close(m);
}

static bool ctl_name(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* Directories still to walk (a stack: no recursion), each with its depth. */
struct pending {
	char (*path)[SBX_PATH_MAX_ART + 1];
	int *depth;
	size_t n, cap;
};

static bool push_dir(struct pending *p, const char *path, int depth)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void *np = realloc(p->path, cap * sizeof(*p->path)), *nd;
		if (np == NULL)
			return false;
		p->path = np;
		nd = realloc(p->depth, cap * sizeof(*p->depth));
		if (nd == NULL)
			return false;
		p->depth = nd;
		p->cap = cap;
	}
	strlcpy(p->path[p->n], path, sizeof(p->path[0]));
	p->depth[p->n++] = depth;
	return true;
}

/* The directory dir ("" for /out itself), depth levels down; the
 * directories in it go on *todo. */
static void walk_dir(struct walk *w, const char *dir, int depth, struct pending *todo)
{
	int dfd = dir[0] ? open_beneath(w, dir) : openat(w->outdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (dfd >= 0)
			close(dfd);
		/* /out itself unread (EMFILE under an RLIMIT_NOFILE the caller
		 * lowered with prlimit(2), ENOMEM): nothing can be named, so
		 * the list is not said to be whole */
		if (dir[0])
			skipped(w, SBX_ART_SKIP_UNREADABLE, dir);
		else
			w->lost = true;
		return;
	}
	/* errno 0 before each readdir(3): at its NULL, the end or an error */
	while ((errno = 0, de = readdir(d)) != NULL) {
		char path[SBX_PATH_MAX_ART + 2];
		struct stat st;
		int fd, n;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		n = snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", de->d_name);
		if (n < 0 || (size_t)n > SBX_PATH_MAX_ART) {
			skipped(w, SBX_ART_SKIP_BAD_NAME, path);
			continue;
		}
		/* a control character in a name: the recorder refuses it (good_name),
		 * and a name of one such byte is a word of the channel (proto.h: a
		 * file named "\x04" would be sent as SBX_COLLECT_CHANGESET with
		 * the payload's memfd): named as skipped, never sent as a file */
		if (ctl_name(de->d_name)) {
			skipped(w, SBX_ART_SKIP_BAD_NAME, path);
			continue;
		}
		/* hidden files are caches and dotfiles, not results: named, not returned */
		if (de->d_name[0] == '.') {
			skipped(w, SBX_ART_SKIP_HIDDEN, path);
			continue;
		}
		fd = open_beneath(w, path);
		if (fd < 0) {
			skipped(w, errno == ELOOP ? SBX_ART_SKIP_SYMLINK : SBX_ART_SKIP_UNREADABLE, path);
			continue;
		}
		if (fstat(fd, &st) < 0)
			skipped(w, SBX_ART_SKIP_UNREADABLE, path);
		else if (S_ISDIR(st.st_mode) && depth + 1 >= SBX_ART_DEPTH_MAX)
			skipped(w, SBX_ART_SKIP_TOO_DEEP, path);
		else if (S_ISDIR(st.st_mode)) {
			if (!push_dir(todo, path, depth + 1))
				skipped(w, SBX_ART_SKIP_UNREADABLE, path);
		} else if (!S_ISREG(st.st_mode))
			skipped(w, SBX_ART_SKIP_NOT_REGULAR, path);
		else
			one_file(w, fd, &st, path);
		close(fd);
	}
	/* readdir(3) ended on an error, not at the end: the rest is unknown */
	if (errno != 0) {
		if (dir[0])
			skipped(w, SBX_ART_SKIP_UNREADABLE, dir);
		else
			w->lost = true;
	}
	closedir(d);
}

int artifacts_collect(const struct collect *c)
{
	struct walk w = {.c = c, .outdir = c->outdir, .art = c->art};
	struct pending todo = {0};
	char dir[SBX_PATH_MAX_ART + 1];
	struct statfs sf;

	walk_dir(&w, "", 0, &todo);
	while (todo.n > 0) {
		todo.n--;
		strlcpy(dir, todo.path[todo.n], sizeof(dir));
		walk_dir(&w, dir, todo.depth[todo.n], &todo);
	}
	free(todo.path);
	free(todo.depth);
	/* /out without a free block: the newest file is the one whose write
	 * met ENOSPC (the payload is dead; nothing changes /out any more) */
	if (w.newest_path[0] && fstatfs(c->outdir, &sf) == 0 && sf.f_bavail == 0) {
		char msg[1 + SBX_PATH_MAX_ART];
		size_t n = strlen(w.newest_path);

		msg[0] = SBX_COLLECT_TRUNCATED;
		memcpy(msg + 1, w.newest_path, n);
		if (sbx_send_fd(c->art, msg, 1 + n, -1, 0) < 0)
			w.lost = true;
	}
	return w.lost ? -1 : 0;
}
