/* SPDX-License-Identifier: ISC */
/*
 * The images directory, SBX_IMAGES_DIR (root 0755): one directory per image
 * (root 0755) holding image.erofs, stamp, manifest and tree (root 0644)
 * and the mount point root/. A build or removal in progress works in a
 * hidden ".build-NAME-XXXXXX" or ".rm-NAME-XXXXXX" directory holding an
 * flock(2) on its ".lock" file; one whose lock is free was left by a
 * process that died and is removed by the next sbx-image that looks.
 * sbx-helper only ever opens NAME/, so none of these is ever used.
 */
#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>

#include "paths.h"
#include "policy.h"

int img_store_init(char *err, size_t errlen)
{
	char path[] = SBX_IMAGES_DIR;

	/* parents as a package install leaves them; the last one ours */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	if (chown(path, 0, 0) < 0 || chmod(path, 0755) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return -1;
}

int img_lock(char *err, size_t errlen)
{
	int fd = open(SBX_IMAGES_DIR "/.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	/* 0600: a lock anyone could open is a lock anyone could hold */
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		snprintf(err, errlen, "%s/.lock: %s", SBX_IMAGES_DIR, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int img_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	/* FTW_MOUNT: never into a mount (an image still mounted below stays,
	 * and its directory then fails to go: reported, not forced) */
	return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void img_remove_leftovers(void)
{
	char err[IMG_ERR_LEN];
	struct dirent *e;
	int glock;
	DIR *d;

	glock = img_lock(err, sizeof(err));
	d = opendir(SBX_IMAGES_DIR);
	if (d == NULL || glock < 0) {
		if (d)
			closedir(d);
		if (glock >= 0)
			close(glock);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX], lock[PATH_MAX + 8];
		int fd;

		if (strncmp(e->d_name, ".build-", 7) != 0 && strncmp(e->d_name, ".rm-", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", SBX_IMAGES_DIR, e->d_name);
		snprintf(lock, sizeof(lock), "%s/.lock", path);
		fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd); /* its sbx-image is still at work */
			continue;
		}
		if (fd >= 0)
			close(fd);
		snprintf(lock, sizeof(lock), "%s/%s", path, SBX_IMAGE_MOUNT);
		umount2(lock, MNT_DETACH | UMOUNT_NOFOLLOW);
		if (img_rmtree(path) == 0)
			img_warn("removed %s, left by an interrupted build or removal", path);
		else
			img_warn("cannot remove %s, left by an interrupted build: %s", path, strerror(errno));
	}
	closedir(d);
	close(glock);
}

int img_write_file(int dirfd, const char *name, const char *data, size_t len, char *err, size_t errlen)
{
	char tmp[NAME_MAX + 1];
	size_t off = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			goto fail;
		}
		off += (size_t)n;
	}
	/* rename only what is on disk: a crash leaves the old file or the new */
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		close(fd);
		goto fail;
	}
	close(fd);
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "writing %s: %s", name, strerror(errno));
	unlinkat(dirfd, tmp, 0);
	return -1;
}

/* Read a small file of dirfd, NUL-terminated, malloc'ed; NULL with errno. */
static char *read_small(int dirfd, const char *name, size_t max)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *buf;
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = malloc(max + 1);
	if (buf == NULL) {
		close(fd);
		return NULL;
	}
	while (len < max && (n = read(fd, buf + len, max - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return NULL;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

int img_read_stamp(int dirfd, struct sbx_image_stamp *s, char *err, size_t errlen)
{
	char why[256];
	char *text = read_small(dirfd, SBX_IMAGE_STAMP, SBX_IMAGE_STAMP_MAX + 1);
	int rc;

	if (text == NULL) {
		snprintf(err, errlen, "%s: %s", SBX_IMAGE_STAMP, strerror(errno));
		return -1;
	}
	rc = sbx_image_stamp_parse(text, strlen(text), s, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", SBX_IMAGE_STAMP, why);
	free(text);
	return rc;
}

int img_info(const char *name, struct img_info *info, char *err, size_t errlen)
{
	char path[PATH_MAX], field[64], why[256];
	struct stat st;
	char *manifest;
	int dfd, ffd;

	memset(info, 0, sizeof(*info));
	strlcpy(info->name, name, sizeof(info->name));
	snprintf(path, sizeof(path), "%s/%s", SBX_IMAGES_DIR, name);
	dfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "no image '%s' (%s: %s)", name, path, strerror(errno));
		return -1;
	}
	info->state = "broken";
	manifest = read_small(dfd, "manifest", 64 << 10);
	if (manifest != NULL) {
		img_manifest_field(manifest, "Built", info->built, sizeof(info->built));
		if (img_manifest_field(manifest, "Packages", field, sizeof(field)) == 0)
			info->packages = strtoull(field, NULL, 10);
		if (img_manifest_field(manifest, "Files", field, sizeof(field)) == 0)
			info->files = strtoull(field, NULL, 10);
		free(manifest);
	}
	if (img_read_stamp(dfd, &info->stamp, why, sizeof(why)) < 0) {
		close(dfd);
		return 0;
	}
	ffd = openat(dfd, SBX_IMAGE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (ffd >= 0 && fstat(ffd, &st) == 0) {
		info->size = (uint64_t)st.st_size;
		snprintf(path, sizeof(path), "%s/%s/%s", SBX_IMAGES_DIR, name, SBX_IMAGE_MOUNT);
		if (!sbx_image_stamp_matches(&info->stamp, &st, why, sizeof(why)))
			info->state = "modified";
		else if (!img_is_mounted(path, ffd, &info->stamp, why, sizeof(why)))
			info->state = "not mounted";
		else
			info->state = "ok";
	}
	if (ffd >= 0)
		close(ffd);
	close(dfd);
	return 0;
}

void img_policies_naming(const char *name, char *buf, size_t len)
{
	glob_t g;

	buf[0] = '\0';
	if (glob(SBX_SYSCONFDIR "/sbx/policies.d/*.policy", 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		static struct sbx_policy p;
		char err[SBX_ERR_LEN], *text, *base, dir[PATH_MAX];
		int dfd;

		strlcpy(dir, g.gl_pathv[i], sizeof(dir));
		base = strrchr(dir, '/');
		*base++ = '\0';
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		text = dfd >= 0 ? read_small(dfd, base, 256 << 10) : NULL;
		if (dfd >= 0)
			close(dfd);
		if (text == NULL)
			continue;
		memset(&p, 0, sizeof(p));
		/* a policy that does not parse is refused by the helper anyway;
		 * its image key still counts */
		if ((sbx_policy_parse(g.gl_pathv[i], text, strlen(text), &p, err, sizeof(err)) == 0 ||
		     p.image[0] != '\0') && strcmp(p.image, name) == 0) {
			*strrchr(base, '.') = '\0';
			if (buf[0])
				strlcat(buf, " ", len);
			strlcat(buf, base, len);
		}
		free(text);
	}
	globfree(&g);
}
