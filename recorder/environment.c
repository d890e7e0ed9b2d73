/* SPDX-License-Identifier: ISC */
/*
 * A run's environment (environment.h). Runs in the recorder as _sbx:
 * nothing here is root's. An image's facts come from what sbx-image wrote
 * beside it (root-owned, world-readable: the stamp's digest arrives from
 * the supervisor, the program index is NAME/programs); the host's from
 * dpkg-query, cached until dpkg's status file changes.
 */
#include "environment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <jansson.h>
#include <bsd/string.h>
#include <linux/openat2.h>

#include "dpkgdb.h"
#include "imgstamp.h"
#include "paths.h"
#include "recfield.h"
#include "record.h"
#include "version.h"

#define HOSTENV SBX_LOCALSTATEDIR "/lib/sbx/hostenv"
/* dpkg's status file: only its stat(2), as the cache's key; the database
 * itself is read through dpkg-query */
#define DPKG_STATUS "/var/lib/dpkg/status"

/* argv0 resolved inside root (RESOLVE_IN_ROOT: the image's own symlinks,
 * never the host's), as a path in that tree. */
static int resolve_in(const char *root, const char *argv0, char *out, size_t len)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char proc[64], full[PATH_MAX];
	size_t rl = strlen(root);
	int rfd, fd;
	ssize_t n;

	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, rfd, argv0[0] == '/' ? argv0 + 1 : argv0, &how, sizeof(how));
	close(rfd);
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, full, sizeof(full) - 1);
	close(fd);
	if (n < 0)
		return -1;
	full[n] = '\0';
	if (strcmp(root, "/") == 0)
		rl = 0;
	if (strncmp(full, root, rl) != 0 || (full[rl] != '/' && full[rl] != '\0'))
		return -1;
	strlcpy(out, full[rl] ? full + rl : "/", len);
	return 0;
}

/* The cache's first line: "sbx-hostenv 1 INO SIZE MTIME.NSEC" of dpkg's
 * status file; then "digest sha256:..."; then the program index. */
static void stamp_line(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "sbx-hostenv 1 %" PRIu64 " %" PRIu64 " %" PRId64 ".%09ld\n", (uint64_t)st->st_ino,
		 (uint64_t)st->st_size, (int64_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

static int cache_fresh(const struct stat *st, char digest[72])
{
	char want[128], line[256];
	FILE *f = fopen(HOSTENV, "re");
	int ok = 0;

	if (f == NULL)
		return 0;
	stamp_line(st, want, sizeof(want));
	if (fgets(line, sizeof(line), f) && strcmp(line, want) == 0 && fgets(line, sizeof(line), f) &&
	    strncmp(line, "digest ", 7) == 0) {
		line[strcspn(line, "\n")] = '\0';
		if (sbx_valid_digest(line + 7)) {
			strlcpy(digest, line + 7, 72);
			ok = 1;
		}
	}
	fclose(f);
	return ok;
}

/* Rebuild the cache: written beside it and renamed, so concurrent
 * recorders each see a whole file. */
static int cache_rebuild(const struct stat *st, char digest[72])
{
	char tmp[sizeof(HOSTENV) + 32], line[128], err[256];
	uint64_t n;
	FILE *f;

	if (sbx_dpkg_set_digest(NULL, digest, &n, err, sizeof(err)) < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.%d", HOSTENV, (int)getpid());
	f = fopen(tmp, "wxe");
	if (f == NULL)
		return -1;
	stamp_line(st, line, sizeof(line));
	fputs(line, f);
	fprintf(f, "digest %s\n", digest);
	/* the index lines follow; sbx_bin_index_lookup skips the two above */
	if (sbx_dpkg_bin_index("/", NULL, f, err, sizeof(err)) < 0 || fflush(f) != 0 || fsync(fileno(f)) < 0) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, HOSTENV) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

void run_environment(const char *image, const char *image_digest, const char *argv0, struct run_env *e)
{
	char root[PATH_MAX], index[PATH_MAX];
	struct stat st;

	struct utsname u;

	memset(e, 0, sizeof(*e));
	if (uname(&u) == 0)
		strlcpy(e->kernel, u.release, sizeof(e->kernel));
	strlcpy(e->sbx_version, SBX_VERSION, sizeof(e->sbx_version));
	if (image != NULL && image[0]) {
		strlcpy(e->image, image, sizeof(e->image));
		strlcpy(e->digest, image_digest ? image_digest : "", sizeof(e->digest));
		snprintf(root, sizeof(root), "%s/%s/%s", SBX_IMAGES_DIR, image, SBX_IMAGE_MOUNT);
		snprintf(index, sizeof(index), "%s/%s/programs", SBX_IMAGES_DIR, image);
	} else {
		strlcpy(e->image, "host", sizeof(e->image));
		strlcpy(root, "/", sizeof(root));
		strlcpy(index, HOSTENV, sizeof(index));
		if (stat(DPKG_STATUS, &st) == 0 && !cache_fresh(&st, e->digest) && cache_rebuild(&st, e->digest) < 0)
			e->digest[0] = '\0';
	}
	if (argv0 == NULL || resolve_in(root, argv0, e->interpreter, sizeof(e->interpreter)) < 0)
		strlcpy(e->interpreter, argv0 ? argv0 : "", sizeof(e->interpreter));
	if (!sbx_bin_index_lookup(index, e->interpreter, e->interp_package, sizeof(e->interp_package),
				  e->interp_version, sizeof(e->interp_version)))
		e->interp_package[0] = e->interp_version[0] = '\0';
}

static int nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 64 lower-case hex digits (sbx_valid_digest checked them) into 32 bytes */
static int unhex(const char *hex, unsigned char out[32])
{
	for (size_t i = 0; i < 32; i++) {
		int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int run_env_fields(struct sbx_record *rec, const struct run_env *e, char *err, size_t errlen)
{
	unsigned char d[32];

	if (sbx_rec_put_str(rec, SBX_F_ENV_IMAGE, e->image, err, errlen) < 0)
		return -1;
	if (sbx_valid_digest(e->digest) && unhex(e->digest + 7, d) == 0 &&
	    sbx_rec_put_digest(rec, SBX_F_ENV_DIGEST, d, err, errlen) < 0)
		return -1;
	if (e->interp_package[0] &&
	    (sbx_rec_put_str(rec, SBX_F_INTERP_PACKAGE, e->interp_package, err, errlen) < 0 ||
	     sbx_rec_put_str(rec, SBX_F_INTERP_VERSION, e->interp_version, err, errlen) < 0))
		return -1;
	return 0;
}

static json_t *str_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

json_t *run_env_json(const struct run_env *e)
{
	return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "image", e->image, "digest", str_or_null(e->digest),
			 "interpreter", str_or_null(e->interpreter), "interpreter_package",
			 str_or_null(e->interp_package), "interpreter_version", str_or_null(e->interp_version),
			 "kernel", str_or_null(e->kernel), "sbx_version", e->sbx_version);
}
