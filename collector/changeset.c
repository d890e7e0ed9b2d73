/* SPDX-License-Identifier: ISC */
/*
 * The changeset of a --workspace run (docs/workspace.md), computed in the
 * collector: after every sandboxed process is dead, as the caller (no
 * capabilities, no_new_privs, not dumpable), from the overlay's upper
 * layer (the tmpfs fd the sandbox init passed) against the lower layer
 * (the caller's directory, the fd the client passed). Every path is
 * resolved one component at a time from those two fds, never following a
 * symbolic link (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, fstatat AT_SYMLINK_NOFOLLOW).
 *
 * What the upper layer holds (Documentation/filesystems/overlayfs.rst,
 * mounted with userxattr): a regular file, directory or symbolic link is
 * the run's version of that path; a character device 0/0 is a whiteout (the
 * path was deleted); a directory with user.overlay.opaque = "y" hides
 * everything the lower layer has under it. Anything else (a fifo, a
 * socket, another device) is not a change sbx carries: listed as skipped.
 *
 * Output: the manifest (the format in docs/workspace.md) in a sealed
 * memfd sent to the recorder, which signs its SHA-256 into END, and the
 * same bytes as "manifest" in the changeset directory together with the
 * after-content of every entry as "files/N" (N its entry number), all
 * written as the caller through the changeset directory's fd.
 *
 * What it reads from the upper layer and writes to the caller's disk is
 * bounded by the policy's workspace_size (collect.workspace_bytes), the
 * size of the upper tmpfs: the apparent sizes of the upper layer's files
 * (and links' targets) are summed before each is read, and past that size
 * the walk stops and the changeset ends incomplete. A tmpfs cannot hold
 * more than its size, except as holes (a sparse file costs it nothing) or
 * as hard links (one inode under many names, each a file of its own here):
 * without the bound, a payload's 16384 sparse files of 64 MiB (the inodes
 * of a 64M upper layer) could make the collector write 1 TiB to the
 * caller's disk. st_blocks would tell a sparse file, not a hard link; the
 * sum bounds both, and a run without either never meets it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <bsd/string.h>
#include <sha2.h> /* libmd: the helper links no libsodium */

#include "collector.h"
#include "fdio.h"
#include "textutil.h"
#include "units.h"

#define CS_DEPTH_MAX 64
#define CS_PATH_MAX 4096

struct cs_entry {
	char *path;         /* relative to the workspace, '/'-separated */
	char before[68];    /* "-", "d", "f:HEX" or "l:HEX" */
	char after[68];
	unsigned mode;      /* the run's permission bits (07777), 0 when deleted */
	long file;          /* files/N holds the after-content, or -1 */
};

struct cs {
	const struct collect *c;
	int csdir, files;
	struct cs_entry *e;
	size_t n, cap;
	char **skips;       /* "REASON PATH" lines */
	size_t n_skips;
	long next_file;
	uint64_t bytes;     /* of the upper layer's files and links read so far */
	uint64_t budget;    /* workspace_size: what the upper layer can hold */
	const char *incomplete; /* why the changeset is not whole, or NULL */
	char why[128];      /* incomplete's text when it names the budget */
};

/* "f:HEX" of fd's content from offset 0; -1 on a read error */
static int hash_file(int fd, char *out, size_t outlen)
{
	unsigned char buf[65536], d[32];
	char hex[65];
	SHA2_CTX h;
	ssize_t n;
	off_t off = 0;

	SHA256Init(&h);
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		SHA256Update(&h, buf, (size_t)n);
		off += n;
	}
	SHA256Final(d, &h);
	sbx_hex(d, 32, hex);
	snprintf(out, outlen, "f:%s", hex);
	return 0;
}

static void hash_link(const char *target, size_t len, char *out, size_t outlen)
{
	unsigned char d[32];
	char hex[65];
	SHA2_CTX h;

	SHA256Init(&h);
	SHA256Update(&h, (const uint8_t *)target, len);
	SHA256Final(d, &h);
	sbx_hex(d, 32, hex);
	snprintf(out, outlen, "l:%s", hex);
}

static int open_beneath(int dfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (__u64)(flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p;

	if (a + b + 2 > CS_PATH_MAX)
		return NULL;
	p = malloc(a + b + 2);
	if (p == NULL)
		return NULL;
	memcpy(p, dir, a);
	if (a)
		p[a++] = '/';
	memcpy(p + a, name, b + 1);
	return p;
}

static void skip(struct cs *c, const char *why, const char *path)
{
	size_t len = strlen(why) + strlen(path) + 2;
	char **n = realloc(c->skips, (c->n_skips + 1) * sizeof(*c->skips));
	char *line = malloc(len);

	if (n == NULL || line == NULL) {
		free(line);
		if (n != NULL)
			c->skips = n;
		c->incomplete = "out of memory";
		return;
	}
	c->skips = n;
	snprintf(line, len, "%s %s", why, path);
	c->skips[c->n_skips++] = line;
}

static struct cs_entry *add(struct cs *c, char *path, const char *before, const char *after, unsigned mode)
{
	struct cs_entry *e;

	if (path == NULL) {
		c->incomplete = "a path longer than 4096 bytes";
		return NULL;
	}
	if (c->n == SBX_CS_MAX_ENTRIES) {
		c->incomplete = "more than 65536 entries";
		free(path);
		return NULL;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *p = realloc(c->e, cap * sizeof(*c->e));
		if (p == NULL) {
			c->incomplete = "out of memory";
			free(path);
			return NULL;
		}
		c->e = p;
		c->cap = cap;
	}
	e = &c->e[c->n++];
	e->path = path;
	strlcpy(e->before, before, sizeof(e->before));
	strlcpy(e->after, after, sizeof(e->after));
	e->mode = mode;
	e->file = -1;
	return e;
}

/* The "before" word of the lower layer's name in ldfd (-1: none there) */
static void lower_state(int ldfd, const char *name, char *out, size_t outlen, bool *isdir)
{
	struct stat st;
	char target[CS_PATH_MAX];
	ssize_t n;
	int fd;

	*isdir = false;
	snprintf(out, outlen, "-");
	if (ldfd < 0 || fstatat(ldfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		*isdir = true;
		snprintf(out, outlen, "d");
	} else if (S_ISLNK(st.st_mode) && (n = readlinkat(ldfd, name, target, sizeof(target))) >= 0 &&
		   (size_t)n < sizeof(target)) {
		hash_link(target, (size_t)n, out, outlen);
	} else if (S_ISREG(st.st_mode) && (fd = open_beneath(ldfd, name, O_RDONLY)) >= 0) {
		if (hash_file(fd, out, outlen) < 0)
			snprintf(out, outlen, "?");
		close(fd);
	} else {
		/* a fifo, socket or device on disk, or unreadable: apply
		 * treats it as a conflict (nothing matches "?") */
		snprintf(out, outlen, "?");
	}
}

/* Everything the lower layer has under path (a directory, fd ldfd) is
 * deleted: one entry each, children first listed after (sorted later). */
static void deleted_tree(struct cs *c, int ldfd, const char *path, int depth) // NOLINT(misc-no-recursion): depth capped at CS_DEPTH_MAX
{
	DIR *d;
	struct dirent *de;
	int fd = dup(ldfd);

	if (depth >= CS_DEPTH_MAX) {
		c->incomplete = "a deleted directory nested deeper than 64 levels";
		if (fd >= 0)
			close(fd);
		return;
	}
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		c->incomplete = "a deleted directory could not be read";
		return;
	}
	rewinddir(d);
	while (c->incomplete == NULL && (errno = 0, de = readdir(d)) != NULL) {
		char before[68];
		bool isdir;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		lower_state(ldfd, de->d_name, before, sizeof(before), &isdir);
		char *p = join(path, de->d_name);
		if (isdir) {
			int sub = open_beneath(ldfd, de->d_name, O_RDONLY | O_DIRECTORY);
			if (sub < 0) {
				c->incomplete = "a deleted directory could not be read";
				free(p);
				break;
			}
			if (p != NULL)
				deleted_tree(c, sub, p, depth + 1);
			close(sub);
		}
		add(c, p, before, "-", 0);
	}
	if (c->incomplete == NULL && errno != 0)
		c->incomplete = "a deleted directory could not be read";
	closedir(d);
}

/* size more bytes of the upper layer to read and store: false (the
 * changeset incomplete) when they would pass workspace_size */
static bool charge(struct cs *c, uint64_t size)
{
	char lim[32];

	if (size <= c->budget - c->bytes) {
		c->bytes += size;
		return true;
	}
	sbx_format_size(c->budget, lim, sizeof(lim));
	snprintf(c->why, sizeof(c->why),
		 "the sizes of the files the run wrote exceed workspace_size (%s): sparse files or hard links", lim);
	c->incomplete = c->why;
	return false;
}

/* files/N: data (len bytes), or the first len bytes of fd (what charge()
 * allowed: never more, whatever the file holds); the entry's file number,
 * or -1. */
static long store(struct cs *c, int fd, const char *data, size_t len)
{
	char name[32];
	long n = c->next_file++;
	int out;

	snprintf(name, sizeof(name), "%ld", n);
	out = openat(c->files, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	if (data != NULL) {
		if (sbx_write_all(out, data, len) < 0) {
			close(out);
			return -1;
		}
	} else {
		char buf[65536];
		off_t off = 0;
		ssize_t k;
		while ((size_t)off < len &&
		       (k = pread(fd, buf, len - (size_t)off < sizeof(buf) ? len - (size_t)off : sizeof(buf), off)) != 0) {
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 || sbx_write_all(out, buf, (size_t)k) < 0) {
				close(out);
				return -1;
			}
			off += k;
		}
	}
	if (close(out) < 0)
		return -1;
	return n;
}

static bool opaque(int dirfd)
{
	char v[4];
	ssize_t n = fgetxattr(dirfd, "user.overlay.opaque", v, sizeof(v));

	if (n < 0)
		n = fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v));
	return n >= 1 && (v[0] == 'y' || v[0] == 'x');
}

static bool in_upper(int udfd, const char *name)
{
	struct stat st;

	return fstatat(udfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void walk(struct cs *c, int udfd, int ldfd, const char *path, int depth);

/* the lower layer's directory name (in ldfd, path p) is replaced by a
 * file or link: what it held is deleted */
static void deleted_dir_children(struct cs *c, int ldfd, const char *name, const char *p, int depth)
{
	int sub = open_beneath(ldfd, name, O_RDONLY | O_DIRECTORY);

	if (sub < 0) {
		c->incomplete = "a deleted directory could not be read";
		return;
	}
	deleted_tree(c, sub, p, depth + 1);
	close(sub);
}

static void one(struct cs *c, int udfd, int ldfd, const char *path, const char *name, int depth) // NOLINT(misc-no-recursion): depth capped at CS_DEPTH_MAX
{
	char before[68], after[68], target[CS_PATH_MAX];
	struct stat st;
	bool ldir;
	char *p = join(path, name);
	struct cs_entry *e;
	int fd;

	if (p == NULL) {
		c->incomplete = "a path longer than 4096 bytes";
		return;
	}
	if (fstatat(udfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		skip(c, "unreadable", p);
		free(p);
		return;
	}
	lower_state(ldfd, name, before, sizeof(before), &ldir);
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) {
		/* a whiteout: deleted, if the lower layer had it */
		if (before[0] == '-') {
			free(p);
			return;
		}
		if (ldir) {
			int sub = open_beneath(ldfd, name, O_RDONLY | O_DIRECTORY);
			if (sub < 0)
				c->incomplete = "a deleted directory could not be read";
			else {
				deleted_tree(c, sub, p, depth + 1);
				close(sub);
			}
		}
		add(c, p, before, "-", 0);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		int ud = open_beneath(udfd, name, O_RDONLY | O_DIRECTORY), ld = -1;
		if (ud < 0) {
			skip(c, "unreadable", p);
			free(p);
			return;
		}
		bool op = opaque(ud);
		if (ldir) {
			ld = open_beneath(ldfd, name, O_RDONLY | O_DIRECTORY);
			/* an opaque directory over one the lower layer has that
			 * cannot be read (EMFILE under an RLIMIT_NOFILE the caller
			 * lowered with prlimit(2)): its deletions are unknown */
			if (op && ld < 0)
				c->incomplete = "a deleted directory could not be read";
			if (op && ld >= 0) {
				/* what the lower directory has and the upper does not is gone */
				DIR *d;
				struct dirent *de;
				int dd = dup(ld);
				d = dd >= 0 ? fdopendir(dd) : NULL;
				if (d == NULL)
					c->incomplete = "a deleted directory could not be read";
				while (d != NULL && (errno = 0, de = readdir(d)) != NULL) {
					char b2[68];
					bool isd;
					if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
					    in_upper(ud, de->d_name))
						continue;
					lower_state(ld, de->d_name, b2, sizeof(b2), &isd);
					char *q = join(p, de->d_name);
					if (isd) {
						int s2 = open_beneath(ld, de->d_name, O_RDONLY | O_DIRECTORY);
						if (s2 < 0)
							c->incomplete = "a deleted directory could not be read";
						if (s2 >= 0 && q != NULL) {
							deleted_tree(c, s2, q, depth + 2);
						}
						if (s2 >= 0)
							close(s2);
					}
					add(c, q, b2, "-", 0);
				}
				if (d != NULL && errno != 0)
					c->incomplete = "a deleted directory could not be read";
				if (d != NULL)
					closedir(d);
				else if (dd >= 0)
					close(dd);
				close(ld);
				ld = -1;
			}
		} else {
			if (before[0] != '-') /* a file or link replaced by a directory */
				add(c, join(path, name), before, "d", (unsigned)(st.st_mode & 07777));
			else
				add(c, join(path, name), "-", "d", (unsigned)(st.st_mode & 07777));
		}
		if (depth + 1 >= CS_DEPTH_MAX)
			c->incomplete = "a directory nested deeper than 64 levels";
		else if (p != NULL)
			walk(c, ud, ld, p, depth + 1);
		free(p);
		close(ud);
		if (ld >= 0)
			close(ld);
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(udfd, name, target, sizeof(target));
		if (n < 0 || (size_t)n >= sizeof(target)) {
			skip(c, "unreadable", p);
			free(p);
			return;
		}
		if (!charge(c, (uint64_t)n)) {
			free(p);
			return;
		}
		hash_link(target, (size_t)n, after, sizeof(after));
		if (strcmp(before, after) == 0) {
			free(p);
			return;
		}
		if (ldir)
			deleted_dir_children(c, ldfd, name, p, depth);
		e = add(c, p, before, after, 0777);
		if (e != NULL && (e->file = store(c, -1, target, (size_t)n)) < 0)
			c->incomplete = "the changeset directory could not be written";
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		skip(c, S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device" : S_ISFIFO(st.st_mode) ? "fifo" : "socket",
		     p);
		free(p);
		return;
	}
	/* before it is read: a copied-up file left unchanged is read too */
	if (!charge(c, (uint64_t)st.st_size)) {
		free(p);
		return;
	}
	fd = open_beneath(udfd, name, O_RDONLY);
	if (fd < 0 || hash_file(fd, after, sizeof(after)) < 0) {
		skip(c, "unreadable", p);
		if (fd >= 0)
			close(fd);
		free(p);
		return;
	}
	if (strcmp(before, after) == 0) {
		/* copied up, content unchanged: a change only if the mode is */
		struct stat lst;
		if (fstatat(ldfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && (lst.st_mode & 07777) == (st.st_mode & 07777)) {
			close(fd);
			free(p);
			return;
		}
	}
	if (ldir)
		deleted_dir_children(c, ldfd, name, p, depth);
	e = add(c, p, before, after, (unsigned)(st.st_mode & 07777));
	if (e != NULL && (e->file = store(c, fd, NULL, (size_t)st.st_size)) < 0)
		c->incomplete = "the changeset directory could not be written";
	close(fd);
}

static void walk(struct cs *c, int udfd, int ldfd, const char *path, int depth) // NOLINT(misc-no-recursion): depth capped at CS_DEPTH_MAX
{
	int fd = dup(udfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		c->incomplete = "a directory of the upper layer could not be read";
		return;
	}
	rewinddir(d);
	/* errno 0 before each readdir(3): at its NULL, the end or an error */
	while (c->incomplete == NULL && (errno = 0, de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			one(c, udfd, ldfd, path, de->d_name, depth);
	if (c->incomplete == NULL && errno != 0)
		c->incomplete = "a directory of the upper layer could not be read";
	closedir(d);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cs_entry *)a)->path, ((const struct cs_entry *)b)->path);
}


static int manifest(struct cs *c, int m)
{
	int fd = dup(m);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "sbx-changeset 1\nrun %s\n", c->c->run_id);
	for (size_t i = 0; i < c->n; i++) {
		const struct cs_entry *e = &c->e[i];
		fprintf(f, "entry %s %s %04o ", e->before, e->after, e->mode);
		if (e->file >= 0)
			fprintf(f, "%ld ", e->file);
		else
			fputs("- ", f);
		sbx_put_pctpath(f, e->path);
		fputc('\n', f);
	}
	for (size_t i = 0; i < c->n_skips; i++) {
		char *sp = strchr(c->skips[i], ' ');
		*sp = '\0';
		fprintf(f, "skip %s ", c->skips[i]);
		sbx_put_pctpath(f, sp + 1);
		fputc('\n', f);
	}
	if (c->incomplete)
		fprintf(f, "end incomplete %s\n", c->incomplete);
	else
		fputs("end complete\n", f);
	return fclose(f) == 0 ? 0 : -1;
}

static void note(int art, const char *why)
{
	char msg[200];
	size_t n = strnlen(why, sizeof(msg) - 2);

	msg[0] = SBX_COLLECT_CHANGESET;
	memcpy(msg + 1, why, n);
	sbx_send_fd(art, msg, 1 + n, -1, 0);
}

void changeset_collect(const struct collect *col)
{
	struct cs c = {.c = col, .csdir = col->csdir, .files = -1, .budget = col->workspace_bytes};
	int art = col->art;
	int ud, m, out;
	struct stat st;
	char buf[65536];
	ssize_t k;
	off_t off = 0;

	/* the O_PATH fd the sandbox passed: a real descriptor of the same
	 * directory, beneath which everything is resolved */
	ud = open_beneath(col->upper, ".", O_RDONLY | O_DIRECTORY);
	if (ud < 0 || col->lower < 0 || col->csdir < 0) {
		note(art, "the upper layer could not be opened");
		return;
	}
	if (mkdirat(c.csdir, "files", 0700) < 0 ||
	    (c.files = openat(c.csdir, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		note(art, "the changeset directory could not be written");
		return;
	}
	walk(&c, ud, col->lower, "", 0);
	if (c.n > 0)
		qsort(c.e, c.n, sizeof(*c.e), by_path);
	m = memfd_create("sbx-changeset", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m < 0 || manifest(&c, m) < 0 || fstat(m, &st) < 0 || (uint64_t)st.st_size > SBX_CS_MANIFEST_MAX) {
		note(art, "the manifest could not be written");
		goto out;
	}
	/* the caller's copy first: what the recorder signs is what is stored */
	out = openat(c.csdir, "manifest", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	while (out >= 0 && (k = pread(m, buf, sizeof(buf), off)) > 0) {
		if (sbx_write_all(out, buf, (size_t)k) < 0)
			break;
		off += k;
	}
	if (out < 0 || off != st.st_size || fsync(out) < 0 || close(out) < 0 ||
	    fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		note(art, "the changeset directory could not be written");
	else
		sbx_send_fd(art, &(char){SBX_COLLECT_CHANGESET}, 1, m, 0);
out:
	if (m >= 0)
		close(m);
	for (size_t i = 0; i < c.n; i++)
		free(c.e[i].path);
	for (size_t i = 0; i < c.n_skips; i++)
		free(c.skips[i]);
	free(c.e);
	free(c.skips);
}
