/* SPDX-License-Identifier: ISC */
/* The origin -> key file of a central store (keyring.h). */
#include "keyring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vkey.h"

#define KEYRING_MAX_BYTES (16u << 20)

int keyring_parse(const char *buf, size_t len, struct keyring *k, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len;
	size_t line = 0, cap = 0, i;
	char why[256];

	memset(k, 0, sizeof(*k));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct keyring_entry *e;

		line++;
		/* blank (also "\r\n") or a comment; else n >= 1 and p[0] is kept */
		if (p[0] == '\n' || p[0] == '\r' || p[0] == '#')
			goto next;
		if (p[n - 1] == '\r')
			n--;
		if (k->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			void *g = realloc(k->e, ncap * sizeof(*k->e));
			if (g == NULL) {
				snprintf(err, errlen, "line %zu: out of memory", line);
				goto bad;
			}
			k->e = g;
			cap = ncap;
		}
		e = &k->e[k->n];
		if (vkey_parse(p, n, e->origin, e->pk, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "line %zu: not a C2SP verifier key (NAME+HASH+KEY, as "
				 "sbx-audit key --verifier prints it): %s", line, why);
			goto bad;
		}
		for (i = 0; i < k->n; i++) {
			if (strcmp(k->e[i].origin, e->origin) == 0) {
				snprintf(err, errlen, "line %zu: origin %s already has a key (line %zu)",
					 line, e->origin, k->e[i].line);
				goto bad;
			}
		}
		e->line = line;
		k->n++;
next:
		p = nl ? nl + 1 : end;
	}
	return 0;
bad:
	keyring_free(k);
	return -1;
}

int keyring_load(const char *path, struct keyring *k, char *err, size_t errlen)
{
	struct stat sb;
	char *buf, why[512];
	ssize_t got;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > KEYRING_MAX_BYTES) {
		snprintf(err, errlen, "%s: not a regular file of at most %u bytes", path, KEYRING_MAX_BYTES);
		close(fd);
		return -1;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return -1;
	}
	while (len < (size_t)sb.st_size && (got = read(fd, buf + len, (size_t)sb.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	rc = keyring_parse(buf, len, k, why, sizeof(why));
	free(buf);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", path, why);
	return rc;
}

const struct keyring_entry *keyring_find(const struct keyring *k, const char *origin)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->e[i].origin, origin) == 0)
			return &k->e[i];
	return NULL;
}

void keyring_free(struct keyring *k)
{
	free(k->e);
	memset(k, 0, sizeof(*k));
}
