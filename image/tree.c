/* SPDX-License-Identifier: ISC */
/*
 * The tree listing and content digest of an image (docs/image-digest.md):
 * one line per file system object, sorted by path, giving type, mode,
 * owner, path and, for a regular file, its size and SHA-256, for a
 * symlink its target, for a device its numbers. The digest is the SHA-256
 * of the listing. Times and link counts are left out: they do not change
 * what the code running in the image sees, and leaving them out is what
 * makes a rebuild with the same package versions give the same digest.
 * SHA-256 comes from OpenSSL's libcrypto (EVP), about six times faster
 * than libsodium's here; sbx-image is never setuid.
 */
#include "image.h"
#include "unconst.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bsd/string.h>
#include <openssl/evp.h>

#define HEADER "sbx-image-tree 1\n"

static const char hexdig[] = "0123456789abcdef";

static void to_hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hexdig[b[i] >> 4];
		out[2 * i + 1] = hexdig[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void img_escape(const char *in, char *out, size_t outlen)
{
	static const char safe[] = "._~/+,:=@-";
	static const char up[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 <= outlen; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr(safe, *p) != NULL) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = up[*p >> 4];
			out[o++] = up[*p & 15];
		}
	}
	if (outlen > 0)
		out[o < outlen ? o : outlen - 1] = '\0';
}

int img_file_sha256(int fd, char hex[65])
{
	static unsigned char buf[1 << 20];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ssize_t n;
	int rc = -1;

	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		errno = ENOMEM;
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto out;
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
		goto out;
	to_hex(md, 32, hex);
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

struct entry {
	char *path;  /* as in the image, "/" first */
	char *line;
};

static int by_path(const void *a, const void *b)
{
	/* strcmp compares as unsigned char: the byte order docs/image-digest.md names */
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

/* One listing line for ent, malloc'ed, or NULL with err set. */
static char *line_for(const FTSENT *ent, const char *path, char *err, size_t errlen)
{
	const struct stat *st = ent->fts_statp;
	char epath[3 * PATH_MAX + 1], extra[3 * PATH_MAX + 80], *line = NULL;
	char type;

	extra[0] = '\0';
	img_escape(path, epath, sizeof(epath));
	if (S_ISDIR(st->st_mode)) {
		type = 'd';
	} else if (S_ISREG(st->st_mode)) {
		char hex[65];
		int fd = open(ent->fts_accpath, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

		if (fd < 0 || img_file_sha256(fd, hex) < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		close(fd);
		type = 'f';
		snprintf(extra, sizeof(extra), " %" PRIu64 " %s", (uint64_t)st->st_size, hex);
	} else if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX + 1], et[3 * PATH_MAX + 1];
		ssize_t n = readlink(ent->fts_accpath, target, sizeof(target) - 1);

		if (n < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return NULL;
		}
		target[n] = '\0';
		img_escape(target, et, sizeof(et));
		type = 'l';
		snprintf(extra, sizeof(extra), " %s", et);
	} else if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		type = S_ISCHR(st->st_mode) ? 'c' : 'b';
		snprintf(extra, sizeof(extra), " %u:%u", major(st->st_rdev), minor(st->st_rdev));
	} else if (S_ISFIFO(st->st_mode)) {
		type = 'p';
	} else {
		type = 's';
	}
	if (asprintf(&line, "%c %04o %u %u %s%s\n", type, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
		     (unsigned)st->st_gid, epath, extra) < 0) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return line;
}

int img_tree_listing(const char *root, FILE *out, char digest[SBX_DIGEST_LEN + 1], uint64_t *entries,
		     char *err, size_t errlen)
{
	char *const roots[] = {sbx_unconst(root), NULL}; /* fts_open(3) only reads it */
	size_t rootlen = strlen(root), n = 0, cap = 0;
	struct entry *v = NULL;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	FTSENT *ent;
	FTS *fts;
	int rc = -1;

	/* physical walk, no crossing into another mount (docs/image-digest.md) */
	fts = fts_open(roots, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
	if (fts == NULL) {
		snprintf(err, errlen, "%s: %s", root, strerror(errno));
		return -1;
	}
	for (;;) {
		const char *rel;
		char *line;

		errno = 0;
		ent = fts_read(fts);
		if (ent == NULL)
			break;
		if (ent->fts_info == FTS_DP)
			continue;
		if (ent->fts_info == FTS_DNR || ent->fts_info == FTS_ERR || ent->fts_info == FTS_NS) {
			snprintf(err, errlen, "%s: %s", ent->fts_path, strerror(ent->fts_errno));
			goto out;
		}
		rel = ent->fts_pathlen > rootlen ? ent->fts_path + rootlen : "/";
		line = line_for(ent, rel, err, errlen);
		if (line == NULL)
			goto out;
		if (n == cap) {
			struct entry *nv = reallocarray(v, cap ? cap * 2 : 4096, sizeof(*v));
			if (nv == NULL) {
				free(line);
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			v = nv;
			cap = cap ? cap * 2 : 4096;
		}
		v[n].path = strdup(rel);
		v[n].line = line;
		if (v[n++].path == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (errno != 0) {
		snprintf(err, errlen, "%s: %s", root, strerror(errno));
		goto out;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), by_path);
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	EVP_DigestUpdate(ctx, HEADER, strlen(HEADER));
	if (out != NULL)
		fputs(HEADER, out);
	for (size_t i = 0; i < n; i++) {
		EVP_DigestUpdate(ctx, v[i].line, strlen(v[i].line));
		if (out != NULL)
			fputs(v[i].line, out);
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32 || (out != NULL && ferror(out))) {
		snprintf(err, errlen, "writing the tree listing failed");
		goto out;
	}
	memcpy(digest, "sha256:", 8);
	to_hex(md, 32, digest + 7);
	*entries = n;
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].line);
	}
	free(v);
	fts_close(fts);
	return rc;
}
