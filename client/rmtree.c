/* SPDX-License-Identifier: ISC */
/* Removal of a tree by directory fds only (see rmtree.h for why). */
#include "rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux 6.6; one number on every architecture */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* A directory is entered up to this many times when entries keep turning
 * up (a payload still writing): then what is left is reported. */
#define MAX_PASSES 3
/* Retries of one entry that changes type between look and removal. */
#define MAX_TRIES 3

struct level {
	DIR *d;
	char name[NAME_MAX + 1]; /* this directory's name in the level above */
	unsigned pass;
	bool progress; /* something was removed in this pass */
	bool failed;   /* something is left for good */
};

struct walk {
	struct level *st;
	size_t depth, cap;
	struct rmtree_report *r;
};

/* chmod of an O_PATH fd: fchmod(2) refuses one. The /proc/self/fd link
 * resolves to the fd's own inode, never through the tree again. */
static int chmod_pathfd(int pfd, mode_t mode)
{
	char p[64];

	if (syscall(SYS_fchmodat2, pfd, "", mode, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -1;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	return chmod(p, mode);
}

/* u+rwx on an opened directory of ours that lacks any of them */
static void open_up(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0700) != 0700)
		fchmod(fd, (st.st_mode & 07777) | 0700);
}

int rmtree_opendir(int parentfd, const char *name)
{
	struct stat st;
	int fd, pfd, e;

	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		open_up(fd);
		return fd;
	}
	if (errno != EACCES)
		return -1;
	/* not readable: an O_PATH fd needs no permission on the directory */
	pfd = openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0)
		goto fail;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		errno = EACCES;
		goto fail;
	}
	if (chmod_pathfd(pfd, (st.st_mode & 07777) | 0700) < 0)
		goto fail;
	/* "." of that fd: the same inode, not the name again */
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	e = errno;
	close(pfd);
	errno = e;
	return fd;
fail:
	e = errno;
	close(pfd);
	errno = e;
	return -1;
}

static void note_fail(struct walk *w, const char *name, int err)
{
	struct rmtree_report *r = w->r;
	size_t n = 0;

	w->st[w->depth].failed = true;
	if (r->failed++ > 0)
		return;
	r->first_errno = err;
	r->first_path[0] = '\0';
	for (size_t i = 1; i <= w->depth && n < sizeof(r->first_path); i++)
		n += (size_t)snprintf(r->first_path + n, sizeof(r->first_path) - n, "%s/", w->st[i].name);
	if (n < sizeof(r->first_path))
		snprintf(r->first_path + n, sizeof(r->first_path) - n, "%s", name);
}

static bool push(struct walk *w, int fd, const char *name)
{
	struct level *l;

	if (w->depth + 1 >= w->cap) {
		size_t cap = w->cap * 2 > RMTREE_MAX_DEPTH + 1 ? RMTREE_MAX_DEPTH + 1 : w->cap * 2;
		struct level *st = realloc(w->st, cap * sizeof(*st));
		if (st == NULL) {
			close(fd);
			note_fail(w, name, ENOMEM);
			return false;
		}
		w->st = st;
		w->cap = cap;
	}
	l = &w->st[w->depth + 1];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->d = fdopendir(fd);
	if (l->d == NULL) {
		int e = errno;
		close(fd);
		note_fail(w, name, e);
		return false;
	}
	w->depth++;
	return true;
}

/* One entry of the current directory: unlinked, or entered (pushed). */
static void one_entry(struct walk *w, const char *name)
{
	struct level *l = &w->st[w->depth];
	int dfd = dirfd(l->d);
	struct stat st;
	int last = EAGAIN;

	for (int t = 0; t < MAX_TRIES; t++) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				note_fail(w, name, errno);
			return;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dfd, name, 0) == 0) {
				w->r->removed++;
				l->progress = true;
				return;
			}
			if (errno == ENOENT)
				return;
			last = errno;
			if (errno == EISDIR || errno == EPERM) /* became a directory? look again */
				continue;
			note_fail(w, name, errno);
			return;
		}
		if (w->depth >= RMTREE_MAX_DEPTH) {
			w->r->too_deep = true;
			note_fail(w, name, ELOOP);
			return;
		}
		int fd = rmtree_opendir(dfd, name);
		if (fd >= 0) {
			push(w, fd, name);
			return;
		}
		if (errno == ENOENT)
			return;
		last = errno;
		if (errno == ELOOP || errno == ENOTDIR) /* became a link or a file */
			continue;
		note_fail(w, name, errno);
		return;
	}
	note_fail(w, name, last);
}

/* The current directory is read to its end: read it again, or leave it
 * and remove it from the level above. */
static void end_of_dir(struct walk *w)
{
	struct level *l = &w->st[w->depth], *up;
	bool failed = l->failed;

	if (!l->failed && l->progress && ++l->pass < MAX_PASSES) {
		l->progress = false;
		rewinddir(l->d);
		return;
	}
	if (w->depth == 0) {
		w->depth = SIZE_MAX; /* done */
		return;
	}
	closedir(l->d);
	w->depth--;
	up = &w->st[w->depth];
	if (failed) {
		up->failed = true; /* counted below it already */
		return;
	}
	if (unlinkat(dirfd(up->d), l->name, AT_REMOVEDIR) == 0) {
		w->r->removed++;
		up->progress = true;
	} else if (errno == ENOTDIR) {
		up->progress = true; /* swapped for a link meanwhile: next pass */
	} else if (errno != ENOENT) {
		note_fail(w, l->name, errno);
	}
}

static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want = RMTREE_MAX_DEPTH + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int rmtree_contents(int dirfd, struct rmtree_report *r)
{
	struct walk w = {.r = r, .cap = 16};
	struct dirent *e;
	int fd;

	memset(r, 0, sizeof(*r));
	w.st = calloc(w.cap, sizeof(*w.st));
	if (w.st == NULL) {
		r->failed = 1;
		r->first_errno = ENOMEM;
		return -1;
	}
	raise_nofile();
	open_up(dirfd);
	/* a description of our own: reading it moves no offset of the caller's */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || (w.st[0].d = fdopendir(fd)) == NULL) {
		r->failed = 1;
		r->first_errno = errno;
		if (fd >= 0)
			close(fd);
		free(w.st);
		return -1;
	}
	while (w.depth != SIZE_MAX) {
		errno = 0;
		e = readdir(w.st[w.depth].d);
		if (e == NULL) {
			if (errno != 0)
				note_fail(&w, ".", errno);
			end_of_dir(&w);
			continue;
		}
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			one_entry(&w, e->d_name);
	}
	closedir(w.st[0].d);
	free(w.st);
	return r->failed ? -1 : 0;
}
