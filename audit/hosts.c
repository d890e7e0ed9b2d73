/* SPDX-License-Identifier: ISC */
/* The per-host archives of a central store (hosts.h). */
#include "hosts.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int plain(unsigned char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_' || (c == '.' && !first);
}

void host_dirname(const char *origin, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, k = 0;

	for (i = 0; i < SBX_ORIGIN_MAX && origin[i] != '\0'; i++) {
		unsigned char c = (unsigned char)origin[i];
		if (plain(c, i == 0)) {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	out[k] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int host_origin(const char *name, char *origin)
{
	char back[HOST_DIR_MAX];
	size_t i, k = 0;

	for (i = 0; name[i] != '\0'; i++) {
		if (k == SBX_ORIGIN_MAX)
			return -1;
		if (name[i] == '%') {
			int h = hexval(name[i + 1]), l = h < 0 ? -1 : hexval(name[i + 2]);
			if (h < 0 || l < 0)
				return -1;
			origin[k++] = (char)(h << 4 | l);
			i += 2;
		} else {
			origin[k++] = name[i];
		}
	}
	origin[k] = '\0';
	if (k == 0 || memchr(origin, 0, k) != NULL)
		return -1;
	/* only the canonical spelling: one directory per origin */
	host_dirname(origin, back);
	return strcmp(back, name) == 0 ? 0 : -1;
}

struct pair {
	char *origin, *path;
};

static int by_origin(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->origin, ((const struct pair *)b)->origin);
}

int hosts_list(const char *dir, char ***origins, char ***paths, size_t *n, char *err,
	       size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct pair *v = NULL;
	size_t cap = 0, k = 0, i;
	char origin[SBX_ORIGIN_MAX + 1];

	*origins = *paths = NULL;
	*n = 0;
	if (d == NULL) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		char *p;
		if (de->d_name[0] == '.' || host_origin(de->d_name, origin) < 0)
			continue;
		if (asprintf(&p, "%s/%s/audit.db", dir, de->d_name) < 0)
			goto oom;
		if (stat(p, &sb) < 0 || !S_ISREG(sb.st_mode)) {
			free(p);
			continue;
		}
		if (k == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct pair *g = realloc(v, ncap * sizeof(*v));
			if (g == NULL) {
				free(p);
				goto oom;
			}
			v = g;
			cap = ncap;
		}
		v[k].path = p;
		v[k].origin = strdup(origin);
		if (v[k++].origin == NULL)
			goto oom;
	}
	closedir(d);
	if (k > 0)
		qsort(v, k, sizeof(*v), by_origin);
	*origins = calloc(k + 1, sizeof(char *));
	*paths = calloc(k + 1, sizeof(char *));
	if (*origins == NULL || *paths == NULL) {
		free(*origins);
		free(*paths);
		*origins = *paths = NULL;
		d = NULL;
		goto oom;
	}
	for (i = 0; i < k; i++) {
		(*origins)[i] = v[i].origin;
		(*paths)[i] = v[i].path;
	}
	free(v);
	*n = k;
	return 0;
oom:
	if (d != NULL)
		closedir(d);
	for (i = 0; i < k; i++) {
		free(v[i].origin);
		free(v[i].path);
	}
	free(v);
	snprintf(err, errlen, "%s: out of memory", dir);
	return -1;
}

void hosts_free(char **origins, char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(origins[i]);
		free(paths[i]);
	}
	free(origins);
	free(paths);
}
