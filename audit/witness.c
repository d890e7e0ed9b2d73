/* SPDX-License-Identifier: ISC */
/* Checkpoints collected elsewhere, read back for verify --witness. */
#include "witness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EM_DASH "\xe2\x80\x94 "

static int add(struct witness *w, const char *note, size_t len, const unsigned char *pk,
	       const char *pin)
{
	struct sbx_checkpoint cp;

	if (sbx_checkpoint_open(note, len, pk, &cp, NULL, 0) < 0 ||
	    (pin != NULL && strcmp(cp.origin, pin) != 0)) {
		w->n_other++;
		return 0;
	}
	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 64;
		struct sbx_checkpoint *g = realloc(w->cps, ncap * sizeof(*g));
		if (g == NULL)
			return -1;
		w->cps = g;
		w->cap = ncap;
	}
	w->cps[w->n++] = cp;
	return 0;
}

/* "note=BASE64" in a syslog line (the line may be prefixed by the daemon). */
static int from_syslog(struct witness *w, const char *s, size_t n, const unsigned char *pk,
		       const char *pin)
{
	const char *p = memmem(s, n, "note=", 5);
	char *note;
	size_t b64len, len = 0;
	int rc;

	if (p == NULL)
		return 0;
	p += 5;
	/* the line is not NUL-terminated: scan within it */
	for (b64len = 0; p + b64len < s + n; b64len++) {
		unsigned char c = (unsigned char)p[b64len];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '+' || c == '/' || c == '='))
			break;
	}
	note = malloc(b64len + 1);
	if (note == NULL)
		return -1;
	if (sodium_base642bin((unsigned char *)note, b64len, p, b64len, NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0) {
		free(note);
		w->n_other++;
		return 0;
	}
	rc = add(w, note, len, pk, pin);
	free(note);
	return rc;
}

int witness_parse(struct witness *w, const char *buf, size_t n, const unsigned char *pk,
		  const char *pin)
{
	const char *p, *end, *start = NULL;
	int in_sigs = 0;

	/* Plain notes: body lines, a blank line, "— " signature lines; the
	 * note ends at the first line after them. */
	for (p = buf, end = buf + n; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int sig = len >= sizeof(EM_DASH) - 1 && memcmp(p, EM_DASH, sizeof(EM_DASH) - 1) == 0;

		if (in_sigs && !sig) {
			if (add(w, start, (size_t)(p - start), pk, pin) < 0)
				return -1;
			in_sigs = 0;
			start = NULL;
		}
		if (sig && start != NULL && p > start + 1 && p[-1] == '\n' && p[-2] == '\n')
			in_sigs = 1;
		if (!in_sigs) {
			if (memmem(p, len, "note=", 5) != NULL) {
				if (from_syslog(w, p, len, pk, pin) < 0)
					return -1;
				start = NULL;
			} else if (start == NULL && len > 0) {
				start = p;
			} else if (start != NULL && len == 0 && p - 1 > start && p[-1] == '\n' &&
				   p[-2] == '\n') {
				start = NULL; /* two blank lines: not a note */
			}
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (in_sigs && add(w, start, (size_t)(end - start), pk, pin) < 0)
		return -1;
	return 0;
}

/* Append the regular file at fd to buf (n bytes so far, at most
 * WITNESS_FILE_MAX + 1 in all); closes fd. */
static void slurp_fd(int fd, char *buf, size_t *n)
{
	struct stat st;
	ssize_t got;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while (*n <= WITNESS_FILE_MAX &&
		       (got = read(fd, buf + *n, WITNESS_FILE_MAX + 1 - *n)) > 0)
			*n += (size_t)got;
	close(fd);
}

/* A witness directory (sbx.conf audit_witness_dir): every regular file in
 * it, symbolic links not followed, one note after the other. */
static int read_dir(struct witness *w, const char *path, DIR *d, const unsigned char *pk,
		    const char *pin, char *err, size_t errlen)
{
	char *buf = malloc(WITNESS_FILE_MAX + 2);
	struct dirent *e;
	size_t n = 0;
	int rc;

	if (buf == NULL) {
		closedir(d);
		snprintf(err, errlen, "--witness %s: out of memory", path);
		return -1;
	}
	while ((e = readdir(d)) != NULL && n <= WITNESS_FILE_MAX) {
		int fd;
		if (e->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		slurp_fd(fd, buf, &n);
		if (n > 0 && n <= WITNESS_FILE_MAX && buf[n - 1] != '\n')
			buf[n++] = '\n';
	}
	closedir(d);
	if (n > WITNESS_FILE_MAX) {
		free(buf);
		snprintf(err, errlen, "--witness %s: its files hold more than %zu MiB", path, WITNESS_FILE_MAX >> 20);
		return -1;
	}
	rc = witness_parse(w, buf, n, pk, pin);
	free(buf);
	if (rc < 0)
		snprintf(err, errlen, "--witness %s: out of memory", path);
	return rc;
}

int witness_read(struct witness *w, const char *path, const unsigned char *pk,
		 const char *pin, char *err, size_t errlen)
{
	DIR *d = opendir(path);
	FILE *f;
	char *buf;
	size_t n = 0, got;
	int rc;

	if (d != NULL)
		return read_dir(w, path, d, pk, pin, err, errlen);
	f = fopen(path, "re");
	if (f == NULL) {
		snprintf(err, errlen, "--witness %s: %s", path, strerror(errno));
		return -1;
	}
	buf = malloc(WITNESS_FILE_MAX + 1);
	if (buf == NULL) {
		fclose(f);
		snprintf(err, errlen, "--witness %s: out of memory", path);
		return -1;
	}
	while ((got = fread(buf + n, 1, WITNESS_FILE_MAX + 1 - n, f)) > 0 && n <= WITNESS_FILE_MAX)
		n += got;
	fclose(f);
	if (n > WITNESS_FILE_MAX) {
		free(buf);
		snprintf(err, errlen, "--witness %s: larger than %zu MiB", path,
			 WITNESS_FILE_MAX >> 20);
		return -1;
	}
	rc = witness_parse(w, buf, n, pk, pin);
	free(buf);
	if (rc < 0)
		snprintf(err, errlen, "--witness %s: out of memory", path);
	return rc;
}

static int by_size(const void *a, const void *b)
{
	const struct sbx_checkpoint *x = a, *y = b;

	return (x->size > y->size) - (x->size < y->size);
}

void witness_sort(struct witness *w)
{
	if (w->n > 1)
		qsort(w->cps, w->n, sizeof(*w->cps), by_size);
}

void witness_free(struct witness *w)
{
	free(w->cps);
	memset(w, 0, sizeof(*w));
}
