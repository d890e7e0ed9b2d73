/* SPDX-License-Identifier: ISC */
/*
 * The central store's layout (docs/fleet.md): DIR/HOST/audit.db, one
 * archive per host, HOST being the host's origin with every byte outside
 * [A-Za-z0-9_-] (and a leading '.') written %XX, so that any origin
 * maps to one directory name and back; DIR/HOST/checkpoint, the newest
 * checkpoint the store verified, with its cosignature; DIR/HOST/import.log,
 * one line per import.
 */
#ifndef SBX_AUDIT_HOSTS_H
#define SBX_AUDIT_HOSTS_H
#include <stddef.h>

#include "record.h"

#define HOST_DIR_MAX (3 * SBX_ORIGIN_MAX + 1)

/* The directory name of origin into out (HOST_DIR_MAX bytes). */
void host_dirname(const char *origin, char *out);
/* The origin of a directory name into origin (SBX_ORIGIN_MAX + 1 bytes);
 * -1 if name is not one host_dirname makes. */
int host_origin(const char *name, char *origin);

/* The archives under dir, sorted by origin: *origins and *paths are
 * malloc'd arrays of *n malloc'd strings (hosts_free). Returns 0, or -1
 * with err (dir unreadable). */
int hosts_list(const char *dir, char ***origins, char ***paths, size_t *n, char *err,
	       size_t errlen);
void hosts_free(char **origins, char **paths, size_t n);

#endif
