/* SPDX-License-Identifier: ISC */
/* The code of a run, handed to the helper in a sealed memfd. */
#ifndef SBX_CLIENT_CODE_H
#define SBX_CLIENT_CODE_H
#include "cli.h"

/*
 * Put the code (-c CODE, FILE, or standard input for "-") into a memfd
 * (close-on-exec), seal it against writes, growing and shrinking, and
 * rewind it. Sealed, so the bytes the helper hashes and records are the
 * bytes that run. Dies with "sbx: FILE: why" on a read error or code larger
 * than SBX_CODE_MAX. Returns the fd.
 */
int code_memfd(const struct run_opts *o);

/* The whole content of a memfd from code_memfd(), NUL-terminated (the
 * retry loop keeps it to hand to the fixer); *len excludes the NUL.
 * Dies on failure. Caller frees. */
char *code_read_back(int fd, size_t *len);

#endif
