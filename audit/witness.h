/* SPDX-License-Identifier: ISC */
/*
 * verify --witness FILE: checkpoints of this log collected elsewhere (a
 * remote syslog, a witness directory, a colleague's copy). FILE may hold
 * syslog lines with "note=BASE64" (what the recorder logs after every
 * checkpoint: checkpoint.h sbx_checkpoint_syslog) and plain signed notes
 * one after the other (what sbx-audit checkpoint prints), mixed; or FILE
 * is a directory (sbx.conf audit_witness_dir: one note per file), whose
 * regular files are read as one such file.
 */
#ifndef SBX_AUDIT_WITNESS_H
#define SBX_AUDIT_WITNESS_H
#include <stddef.h>

#include "checkpoint.h"

/* Bytes of a witness file read. */
#define WITNESS_FILE_MAX ((size_t)64 * 1024 * 1024)

struct witness {
	struct sbx_checkpoint *cps;   /* verified with pk, sorted by size */
	size_t n, cap;
	size_t n_other;               /* notes not signed by pk, or of another origin */
};

/* Add the checkpoints of path (verified with pk; of origin pin unless
 * NULL) to w. Returns 0, or -1 with err (unreadable, too large). */
int witness_read(struct witness *w, const char *path, const unsigned char *pk,
		 const char *pin, char *err, size_t errlen);
/* The same over n bytes of buf (untrusted). Returns 0, -1 when out of
 * memory. */
int witness_parse(struct witness *w, const char *buf, size_t n, const unsigned char *pk,
		  const char *pin);
/* Sort by size (after the last witness_read). */
void witness_sort(struct witness *w);
void witness_free(struct witness *w);

#endif
