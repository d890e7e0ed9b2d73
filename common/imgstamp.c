/* SPDX-License-Identifier: ISC */
/*
 * Image stamps (imgstamp.h). The parser runs as root in sbx-helper, on a
 * file it has checked is root-owned and not writable by others; it still
 * accepts only the exact layout sbx-image writes.
 */
#include "imgstamp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <linux/major.h>

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

int sbx_valid_digest(const char *d)
{
	return d != NULL && strncmp(d, "sha256:", 7) == 0 && is_hex64(d + 7);
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;

	if (v[0] < '0' || v[0] > '9' || (v[0] == '0' && v[1] != '\0'))
		return -1;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

/* "SECONDS.NANOSECONDS", nanoseconds as exactly 9 digits */
static int parse_time(const char *v, int64_t *sec, uint32_t *nsec)
{
	char buf[32];
	char *dot;
	uint64_t s, ns;

	if (strlcpy(buf, v, sizeof(buf)) >= sizeof(buf) || (dot = strchr(buf, '.')) == NULL ||
	    strlen(dot + 1) != 9)
		return -1;
	*dot = '\0';
	if (parse_u64(buf, &s) < 0 || s > INT64_MAX)
		return -1;
	/* nanoseconds have leading zeros: digit by digit */
	ns = 0;
	for (const char *p = dot + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		ns = ns * 10 + (uint64_t)(*p - '0');
	}
	*sec = (int64_t)s;
	*nsec = (uint32_t)ns;
	return 0;
}

int sbx_image_stamp_parse(const char *text, size_t len, struct sbx_image_stamp *s,
			  char *err, size_t errlen)
{
	static const char *const keys[] = {"name", "digest", "file-sha256", "ino", "size",
					   "mtime", "ctime", "root-ino"};
	const char *p = text, *end = text + len;
	char line[256];
	int n = 0;

	memset(s, 0, sizeof(*s));
	if (len > SBX_IMAGE_STAMP_MAX || memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "larger than %u bytes or holds a NUL byte", SBX_IMAGE_STAMP_MAX);
		return -1;
	}
	for (n = 0; n <= (int)(sizeof(keys) / sizeof(keys[0])); n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l;
		char *v;
		uint64_t u;
		bool ok;

		if (nl == NULL || (l = (size_t)(nl - p)) >= sizeof(line)) {
			snprintf(err, errlen, "line %d: missing, unterminated or too long", n + 1);
			return -1;
		}
		memcpy(line, p, l);
		line[l] = '\0';
		p = nl + 1;
		if (n == 0) {
			if (strcmp(line, "sbx-image-stamp 1") != 0) {
				snprintf(err, errlen, "line 1: not 'sbx-image-stamp 1'");
				return -1;
			}
			continue;
		}
		v = strchr(line, ' ');
		if (v == NULL || (size_t)(v - line) != strlen(keys[n - 1]) ||
		    strncmp(line, keys[n - 1], (size_t)(v - line)) != 0) {
			snprintf(err, errlen, "line %d: expected key '%s'", n + 1, keys[n - 1]);
			return -1;
		}
		v++;
		switch (n) {
		case 1:
			ok = sbx_valid_name(v) && strlcpy(s->name, v, sizeof(s->name)) < sizeof(s->name);
			break;
		case 2:
			ok = sbx_valid_digest(v) && strlcpy(s->digest, v, sizeof(s->digest)) < sizeof(s->digest);
			break;
		case 3:
			ok = is_hex64(v) && strlcpy(s->file_sha256, v, sizeof(s->file_sha256)) < sizeof(s->file_sha256);
			break;
		case 4:
			ok = parse_u64(v, &s->ino) == 0;
			break;
		case 5:
			ok = parse_u64(v, &s->size) == 0;
			break;
		case 6:
			ok = parse_time(v, &s->mtime_sec, &s->mtime_nsec) == 0;
			break;
		case 7:
			ok = parse_time(v, &s->ctime_sec, &s->ctime_nsec) == 0;
			break;
		default:
			ok = parse_u64(v, &u) == 0;
			s->root_ino = u;
			break;
		}
		if (!ok) {
			snprintf(err, errlen, "line %d: bad value for '%s'", n + 1, keys[n - 1]);
			return -1;
		}
	}
	if (p != end) {
		snprintf(err, errlen, "line %d: unexpected text after the last key", n + 1);
		return -1;
	}
	return 0;
}

int sbx_image_stamp_format(const struct sbx_image_stamp *s, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "sbx-image-stamp 1\nname %s\ndigest %s\nfile-sha256 %s\nino %" PRIu64 "\nsize %" PRIu64
			 "\nmtime %" PRId64 ".%09" PRIu32 "\nctime %" PRId64 ".%09" PRIu32 "\nroot-ino %" PRIu64 "\n",
			 s->name, s->digest, s->file_sha256, s->ino, s->size, s->mtime_sec, s->mtime_nsec,
			 s->ctime_sec, s->ctime_nsec, s->root_ino);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

void sbx_image_stamp_set_file(struct sbx_image_stamp *s, const struct stat *st)
{
	s->ino = (uint64_t)st->st_ino;
	s->size = (uint64_t)st->st_size;
	s->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	s->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	s->ctime_sec = (int64_t)st->st_ctim.tv_sec;
	s->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
}

static void utc(int64_t sec, char *buf, size_t len)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(buf, len, "%" PRId64, sec);
}

int sbx_image_stamp_matches(const struct sbx_image_stamp *s, const struct stat *st,
			    char *why, size_t whylen)
{
	struct sbx_image_stamp now = *s;
	char t1[40], t2[40];

	sbx_image_stamp_set_file(&now, st);
	if (now.ino != s->ino) {
		snprintf(why, whylen, "it is another file (inode %" PRIu64 ", built as inode %" PRIu64 ")",
			 now.ino, s->ino);
	} else if (now.size != s->size) {
		snprintf(why, whylen, "its size is %" PRIu64 " bytes, built as %" PRIu64, now.size, s->size);
	} else if (now.mtime_sec != s->mtime_sec || now.mtime_nsec != s->mtime_nsec) {
		utc(now.mtime_sec, t1, sizeof(t1));
		utc(s->mtime_sec, t2, sizeof(t2));
		snprintf(why, whylen, "written to at %s, built at %s", t1, t2);
	} else if (now.ctime_sec != s->ctime_sec || now.ctime_nsec != s->ctime_nsec) {
		utc(now.ctime_sec, t1, sizeof(t1));
		utc(s->ctime_sec, t2, sizeof(t2));
		snprintf(why, whylen, "its inode changed at %s (a write, chmod, chown, link or touch), "
			 "stamped at %s", t1, t2);
	} else {
		return 1;
	}
	return 0;
}

int sbx_image_check_mount(int rootfd, const struct stat *file, const struct sbx_image_stamp *s,
			  char *why, size_t whylen)
{
	struct loop_info64 li;
	struct statfs sf;
	struct stat st, dev;
	char path[32];
	int fd, ok = 0;

	if (fstatfs(rootfd, &sf) < 0 || fstat(rootfd, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return 0;
	}
	if (sf.f_type != EROFS_SUPER_MAGIC_V1) {
		snprintf(why, whylen, "it is not mounted");
		return 0;
	}
	if (st.st_ino != s->root_ino || major(st.st_dev) != LOOP_MAJOR) {
		snprintf(why, whylen, "what is mounted is not the image's root on a loop device");
		return 0;
	}
	snprintf(path, sizeof(path), "/dev/loop%u", minor(st.st_dev));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &dev) < 0 || !S_ISBLK(dev.st_mode) || dev.st_rdev != st.st_dev ||
	    ioctl(fd, LOOP_GET_STATUS64, &li) < 0)
		snprintf(why, whylen, "%s is not the loop device it is mounted from", path);
	else if (li.lo_inode != (uint64_t)file->st_ino || li.lo_device != (uint64_t)file->st_dev)
		snprintf(why, whylen, "%s is backed by another file than %s", path, SBX_IMAGE_FILE);
	else if (li.lo_offset != 0 || li.lo_sizelimit != 0 || !(li.lo_flags & LO_FLAGS_READ_ONLY))
		snprintf(why, whylen, "%s is not a read-only view of the whole file", path);
	else
		ok = 1;
	if (fd >= 0)
		close(fd);
	return ok;
}
