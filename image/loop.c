/* SPDX-License-Identifier: ISC */
/*
 * Mounting an image: image.erofs on a read-only loop device (loop(4),
 * LOOP_CONFIGURE since Linux 5.8) with LO_FLAGS_AUTOCLEAR, so the device
 * goes away by itself when its last mount does (the mount here and the
 * clones sandboxes still hold). A loop device rather than erofs's own
 * file-backed mounts (Linux 6.12) because the loop driver tells sbx-helper
 * which inode backs a mount (sbx_image_check_mount); nothing tells it that
 * for a file-backed mount.
 */
#include "image.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>
#include <linux/loop.h>

int img_mount_file(int filefd, const char *target, char *err, size_t errlen)
{
	struct loop_config cfg;
	char dev[32];
	int ctl, fd = -1, nr;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		snprintf(err, errlen, "/dev/loop-control: %s (is the loop module loaded?)", strerror(errno));
		return -1;
	}
	/* another process may take the free device first: then ask again */
	for (int tries = 0; tries < 16; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			snprintf(err, errlen, "no free loop device: %s", strerror(errno));
			close(ctl);
			return -1;
		}
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", dev, strerror(errno));
			close(ctl);
			return -1;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)filefd;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
		if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0)
			break;
		close(fd);
		fd = -1;
		if (errno != EBUSY) {
			snprintf(err, errlen, "%s: LOOP_CONFIGURE: %s", dev, strerror(errno));
			close(ctl);
			return -1;
		}
	}
	close(ctl);
	if (fd < 0) {
		snprintf(err, errlen, "no loop device stayed free");
		return -1;
	}
	if (mount(dev, target, "erofs", MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
		snprintf(err, errlen, "mount %s (erofs) on %s: %s%s", dev, target, strerror(errno),
			 errno == ENODEV ? " (no erofs in this kernel: modprobe erofs)" : "");
		close(fd); /* the last reference: autoclear detaches the device */
		return -1;
	}
	close(fd);
	return 0;
}

int img_is_mounted(const char *target, int filefd, const struct sbx_image_stamp *s, char *why, size_t whylen)
{
	struct stat st;
	int root, ok;

	if (fstat(filefd, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return 0;
	}
	root = open(target, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) {
		snprintf(why, whylen, "%s: %s", target, strerror(errno));
		return 0;
	}
	ok = sbx_image_check_mount(root, &st, s, why, whylen);
	close(root);
	return ok;
}
