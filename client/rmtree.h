/* SPDX-License-Identifier: ISC */
/*
 * Removal of a directory tree that a sandboxed payload may be changing
 * while it is removed (a session directory is the payload's /work).
 *
 * Only directory fds and single-component names are used: every entry is
 * looked at with fstatat(AT_SYMLINK_NOFOLLOW), every directory is entered
 * with openat(O_DIRECTORY | O_NOFOLLOW) and every removal is an unlinkat()
 * relative to the fd of the directory that holds it. A symbolic link is
 * unlinked, never followed, so swapping a directory for a link (rename,
 * RENAME_EXCHANGE) mid-walk cannot make the walk reach or change anything
 * outside the tree. Permissions are only ever changed on an opened fd.
 */
#ifndef SBX_CLIENT_RMTREE_H
#define SBX_CLIENT_RMTREE_H
#include <stdbool.h>
#include <stddef.h>

/* Directories nested deeper than this below the top are not entered: each
 * level holds one fd (the soft RLIMIT_NOFILE is raised towards it). */
#define RMTREE_MAX_DEPTH 1024

/* What rmtree_contents() could not do. */
struct rmtree_report {
	unsigned long removed;  /* entries unlinked (files, links, directories) */
	unsigned long failed;   /* entries left behind */
	int first_errno;        /* errno of the first failure */
	bool too_deep;          /* a directory deeper than RMTREE_MAX_DEPTH was left */
	char first_path[512];   /* that entry, relative to the top ("a/b/c") */
};

/*
 * Open directory NAME (one component) of PARENTFD for removal:
 * O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC. When the owner lacks
 * read, write or search permission on it, u+rwx is added with fchmod on
 * the opened fd (or, when it cannot even be read, on an O_PATH fd of it:
 * fchmodat2(AT_EMPTY_PATH), else its /proc/self/fd link, which names that
 * inode and nothing else). Returns the fd, or -1 with errno: ELOOP or
 * ENOTDIR when NAME is a symlink or no directory, EACCES when it cannot be
 * opened and is not the caller's (effective uid) to open up.
 */
int rmtree_opendir(int parentfd, const char *name);

/*
 * Remove everything inside the directory DIRFD (not DIRFD itself, which
 * stays open and is not moved), like `rm -rf DIR/.*` without following a
 * symlink at any level. Continues past failures. Returns 0 when the
 * directory is now empty, -1 otherwise with *R saying what was left.
 * *R is reset first.
 */
int rmtree_contents(int dirfd, struct rmtree_report *r);

#endif
