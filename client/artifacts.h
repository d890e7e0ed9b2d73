/* SPDX-License-Identifier: ISC */
/*
 * Saving artifacts (files the payload left in /out) into the caller's
 * directory. The helper only hands over sealed memfds; all writing into the
 * caller's tree happens here, as the caller, without following symlinks.
 */
#ifndef SBX_CLIENT_ARTIFACTS_H
#define SBX_CLIENT_ARTIFACTS_H
#include <stddef.h>
#include <stdint.h>

struct artifact_dir {
	int fd;       /* O_DIRECTORY, close-on-exec */
	char *path;   /* absolute (from the cwd if DIR was relative), for "path" in the result */
};

/*
 * Open DIR (O_DIRECTORY | O_NOFOLLOW: DIR itself must not be a symlink),
 * creating it with mode 0755 (less the umask) if missing, and check that
 * the caller may write there. Done before the run so a bad DIR costs no
 * run and loses no artifact. Dies with "sbx: --artifacts: DIR: why",
 * error code artifacts_unwritable (exit 2).
 */
void artifact_dir_open(const char *dir, struct artifact_dir *ad);

/* 1 if name (len bytes from the frame) can be a file name in DIR: 1..255
 * bytes, no NUL, no '/', not "." or ".."; else 0. */
int artifact_name_valid(const char *name, size_t len);

/*
 * Copy the memfd's content into DIR/NAME: written to a new file
 * NAME.tmp-XXXXXXXX (random hex; O_CREAT | O_EXCL | O_NOFOLLOW, mode 0644
 * less the umask) and renamed over NAME, so readers never see half a file
 * and a symlink at NAME is replaced rather than followed. Returns 0 and
 * the malloc'ed absolute path in *path, or -1 with err set (nothing left
 * behind). *size gets the bytes written.
 */
int artifact_save(const struct artifact_dir *ad, const char *name, int memfd, uint64_t *size,
		  char **path, char *err, size_t errlen);

/* name with control and non-ASCII bytes escaped (C style), for messages on
 * a terminal: an artifact name is chosen by the payload. malloc'ed; NULL
 * when out of memory. */
char *artifact_printable(const char *name);

#endif
