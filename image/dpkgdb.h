/* SPDX-License-Identifier: ISC */
/*
 * What a dpkg database says about a tree (the host's, or an image's): its
 * package set, as a digest, and which package and version each program in
 * the usual bin directories belongs to. Read as an unprivileged user (the
 * recorder as _sbx, sbx-image as root over an image it built); never by
 * the setuid supervisor. Formats: dpkg-query(1), deb-status(5); the
 * digest: docs/image-digest.md "The host's package set".
 */
#ifndef SBX_DPKGDB_H
#define SBX_DPKGDB_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Both read the database with dpkg-query(1) (--admindir=admindir; NULL:
 * the system's), its supported interface.
 *
 * The package-set digest of the database in admindir:
 * "sha256:" and the SHA-256 of the sorted lines "PACKAGE<TAB>VERSION<TAB>
 * ARCHITECTURE\n" of every package whose Status is "install ok installed".
 * *count gets their number. Returns 0, or -1 with err.
 */
int sbx_dpkg_set_digest(const char *admindir, char digest[72], uint64_t *count, char *err, size_t errlen);

/*
 * The program index of a tree: for every path under /bin, /sbin, /usr/bin,
 * /usr/sbin and /usr/local/bin that an installed package owns
 * (dpkg-query --search), the line "PATH<TAB>PACKAGE<TAB>VERSION\n", PATH as
 * it resolves inside root (merged /usr: /bin/sh listed, /usr/bin/sh
 * written), sorted. Written to out. Returns the line count, or -1 with err.
 */
long sbx_dpkg_bin_index(const char *root, const char *admindir, FILE *out, char *err, size_t errlen);

/* Look path up in an index file; 1 and package, version; 0 if absent or
 * unreadable. */
int sbx_bin_index_lookup(const char *index, const char *path, char *package, size_t plen,
			 char *version, size_t vlen);

#endif
