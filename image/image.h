/* SPDX-License-Identifier: ISC */
/*
 * sbx-image internals. sbx-image(8) is the administrator's command that
 * builds, lists, shows, mounts, verifies and removes curated images under
 * SBX_IMAGES_DIR. It runs as root, never through the setuid helper. Layout
 * of an image directory and formats of its files: docs/images.md; the
 * content digest: docs/image-digest.md.
 */
#ifndef SBX_IMAGE_H
#define SBX_IMAGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imgstamp.h"

/* Exit statuses, sbx-image(8) EXIT STATUS: one table. */
enum {
	IMG_EXIT_OK = 0,
	IMG_EXIT_FAIL = 1,        /* a step failed (mmdebstrap, mkfs.erofs, mount, I/O) */
	IMG_EXIT_USAGE = 2,       /* bad option, image name or package name; not root */
	IMG_EXIT_NO_IMAGE = 3,    /* no image of that name */
	IMG_EXIT_IN_USE = 4,      /* rm: a policy names the image (--force removes it anyway) */
	IMG_EXIT_NO_PACKAGE = 5,  /* build: a package (or version) the apt sources do not have */
	IMG_EXIT_MODIFIED = 6,    /* verify, mount: the image file is not what was built */
};

#define IMG_ERR_LEN 512
#define IMG_MAX_PACKAGES 256

struct build_opts {
	const char *name;
	char *packages[IMG_MAX_PACKAGES];
	size_t n_packages;
	const char *suite;        /* NULL: the host's VERSION_CODENAME */
	int64_t epoch;            /* SOURCE_DATE_EPOCH */
	const char *cache;        /* --cache DIR: downloaded .debs kept there, or NULL */
	bool keep_docs;
	bool compress;            /* lz4hc (default) or none */
	bool verbose;             /* mmdebstrap's log to stderr as well */
};

/* main.c */
void img_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* build.c */
int img_build(const struct build_opts *o);
/* 1 if s is a Debian package name (Policy 5.6.1), optionally "=VERSION" (5.6.12). */
int img_valid_package(const char *s);

/* tree.c: the tree listing of docs/image-digest.md for the tree at root,
 * written to out; digest = "sha256:" + SHA-256 of the listing. Never
 * follows a symlink or leaves root's file system. Returns 0, or -1 with
 * err naming the path. */
int img_tree_listing(const char *root, FILE *out, char digest[SBX_DIGEST_LEN + 1], uint64_t *entries,
		     char *err, size_t errlen);
/* The listing's escape for a path or symlink target: bytes outside
 * [A-Za-z0-9._~/+,:=@-] become %XX (upper-case hex). out gets at most
 * 3 * strlen(in) + 1 bytes. */
void img_escape(const char *in, char *out, size_t outlen);
/* SHA-256 of an open file from its start, as hex. 0 or -1 (errno). */
int img_file_sha256(int fd, char hex[65]);

/* store.c: the images directory and one image in it. */
struct img_info {
	char name[SBX_NAME_MAX + 1];
	struct sbx_image_stamp stamp;
	uint64_t size;            /* bytes of image.erofs */
	uint64_t packages;
	uint64_t files;
	char built[32];           /* UTC, RFC 3339 */
	const char *state;        /* "ok", "not mounted", "modified", "broken" */
};
int img_store_init(char *err, size_t errlen);               /* create SBX_IMAGES_DIR */
int img_lock(char *err, size_t errlen);                      /* fd of the held lock, or -1 */
void img_remove_leftovers(void);                             /* interrupted builds' directories */
int img_info(const char *name, struct img_info *info, char *err, size_t errlen);
int img_read_stamp(int dirfd, struct sbx_image_stamp *s, char *err, size_t errlen);
int img_write_file(int dirfd, const char *name, const char *data, size_t len, char *err, size_t errlen);
/* Remove a tree without crossing into other mounts; 0 or -1 (errno). */
int img_rmtree(const char *path);
/* Names of policies in SYSCONFDIR/sbx/policies.d that name the image,
 * space-separated, into buf ("" if none). */
void img_policies_naming(const char *name, char *buf, size_t len);

/* loop.c: attach file read-only to a free loop device (autoclear) and
 * mount its erofs read-only, nosuid, nodev on target. 0 or -1 with err. */
int img_mount_file(int filefd, const char *target, char *err, size_t errlen);
/* Is target the erofs of that file's loop device, as sbx-helper checks?
 * 1 yes, 0 no (why set). */
int img_is_mounted(const char *target, int filefd, const struct sbx_image_stamp *s, char *why, size_t whylen);

/* manifest.c */
struct manifest {
	const char *name, *digest, *file_sha256, *suite, *arch;
	char built[32];
	int64_t epoch;
	uint64_t size, files, n_packages;
	char requested[4096];
	char builder[256];
	bool keep_docs, compress;
	char set_digest[72];      /* package-set digest (dpkgdb.h) */
	char *packages;           /* "name\tversion\tarch\n" lines, sorted */
};
int img_manifest_write(int dirfd, const struct manifest *m, char *err, size_t errlen);
/* Value of one header field of a manifest's text, into buf; 0 or -1. */
int img_manifest_field(const char *text, const char *key, char *buf, size_t len);

#endif
