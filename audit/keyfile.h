/* SPDX-License-Identifier: ISC */
/* sbx-audit keygen: writing key files so that a crash never leaves a
 * half-written key in place. */
#ifndef SBX_AUDIT_KEYFILE_H
#define SBX_AUDIT_KEYFILE_H
#include <stddef.h>
#include <sys/types.h>

/*
 * Write len bytes to path with the given mode and owner (uid/gid -1: keep
 * the invoker's). The data goes to a new file beside path (O_CREAT |
 * O_EXCL | O_NOFOLLOW), is fsync'd, then moved into place: rename() when
 * replace, else link(), which fails with EEXIST rather than overwrite.
 * The directory is fsync'd. Returns 0, or -1 with errno set and err
 * ("PATH: why").
 */
int keyfile_write(const char *path, const void *data, size_t len, mode_t mode,
		  uid_t uid, gid_t gid, int replace, char *err, size_t errlen);

#endif
