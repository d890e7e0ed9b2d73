/* SPDX-License-Identifier: ISC */
/*
 * Curated images (sbx-image(8)): where they live and the stamp that binds
 * an image's content digest to the one file holding its tree. Shared by
 * sbx-image, which writes the stamp after hashing the file, and sbx-helper,
 * which reads it (root-owned, checked like a policy file) before every run
 * with the image. Layout and format: docs/images.md.
 */
#ifndef SBX_IMGSTAMP_H
#define SBX_IMGSTAMP_H
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "paths.h"
#include "policy.h"

/* SBX_IMAGES_DIR/NAME/{image.erofs,stamp,manifest,tree,root/}: not under
 * LOCALSTATEDIR/lib/sbx, which _sbx owns (the audit log), because every
 * directory above an image must be root's, as above a policy file. */
#define SBX_IMAGES_DIR SBX_LOCALSTATEDIR "/lib/sbx-images"
#define SBX_IMAGE_FILE "image.erofs"
#define SBX_IMAGE_STAMP "stamp"
#define SBX_IMAGE_MOUNT "root"
#define SBX_IMAGE_STAMP_MAX 2048u

/* "sha256:" and 64 lower-case hex digits */
#define SBX_DIGEST_LEN 71

struct sbx_image_stamp {
	char name[SBX_NAME_MAX + 1];
	char digest[SBX_DIGEST_LEN + 1];  /* tree digest (docs/image-digest.md) */
	char file_sha256[65];             /* SHA-256 of image.erofs, hex */
	uint64_t ino, size;               /* of image.erofs (stat(2)) */
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	uint64_t root_ino;                /* inode of the image's / as mounted (erofs) */
};

/*
 * Parse a stamp's text (at most SBX_IMAGE_STAMP_MAX bytes): the header line
 * "sbx-image-stamp 1" and then exactly the keys name, digest, file-sha256,
 * ino, size, mtime, ctime, root-ino in that order, one "key value" line
 * each. Anything else is refused. Returns 0, or -1 with err ("line N: why").
 */
int sbx_image_stamp_parse(const char *text, size_t len, struct sbx_image_stamp *s,
			  char *err, size_t errlen);

/* The text sbx_image_stamp_parse reads. Returns its length, or -1 if it
 * does not fit in len. */
int sbx_image_stamp_format(const struct sbx_image_stamp *s, char *buf, size_t len);

/* Fill the file identity fields from a stat(2) of image.erofs. */
void sbx_image_stamp_set_file(struct sbx_image_stamp *s, const struct stat *st);

/*
 * Does the stat(2) of image.erofs still match the stamp? Every write to
 * the file moves its mtime and ctime, and no system call sets ctime, so a
 * match means the file is the one that was hashed. Returns 1, or 0 with
 * why naming the first field that differs ("ctime 1700000000.5 != ...").
 */
int sbx_image_stamp_matches(const struct sbx_image_stamp *s, const struct stat *st,
			    char *why, size_t whylen);

/*
 * Is rootfd (an fd of SBX_IMAGES_DIR/NAME/root) the root of the image's
 * erofs, mounted from a read-only loop device whose backing file is the
 * inode file describes (an fstat(2) of image.erofs), the whole file? That
 * is how sbx-image mounts an image, and the loop driver, not a path, says
 * which file backs it (LOOP_GET_STATUS64, loop(4)). Opens /dev/loopN for
 * the ioctl. Returns 1, or 0 with why.
 */
int sbx_image_check_mount(int rootfd, const struct stat *file, const struct sbx_image_stamp *s,
			  char *why, size_t whylen);

/* 1 if d is "sha256:" followed by 64 lower-case hex digits. */
int sbx_valid_digest(const char *d);

#endif
