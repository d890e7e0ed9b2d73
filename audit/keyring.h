/* SPDX-License-Identifier: ISC */
/*
 * The central store's keyring (sbx-audit import, report --hosts): which
 * public key signs each host's log. One host a line, the line being the
 * host's C2SP verifier key as `sbx-audit key --verifier` prints it on that
 * host (NAME+HASH+KEY, c2sp.org/signed-note): the name is the log's
 * origin, so the line says both "origin -> key" and, through HASH, that
 * the two belong together. Blank lines and lines starting with '#' are
 * ignored; an origin may appear once. Distributed by configuration
 * management (docs/fleet.md).
 */
#ifndef SBX_AUDIT_KEYRING_H
#define SBX_AUDIT_KEYRING_H
#include <stddef.h>

#include "record.h"

struct keyring_entry {
	char origin[SBX_ORIGIN_MAX + 1];
	unsigned char pk[32];
	size_t line;
};

struct keyring {
	struct keyring_entry *e;
	size_t n;
};

/* Parse len bytes (untrusted). Returns 0, or -1 with err ("line N: why"). */
int keyring_parse(const char *buf, size_t len, struct keyring *k, char *err, size_t errlen);
/* Read and parse a file (at most 16 MiB). Returns 0, -1 with err. */
int keyring_load(const char *path, struct keyring *k, char *err, size_t errlen);
/* The entry of origin, or NULL. */
const struct keyring_entry *keyring_find(const struct keyring *k, const char *origin);
void keyring_free(struct keyring *k);

#endif
