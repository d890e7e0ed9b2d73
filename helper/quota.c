/* SPDX-License-Identifier: ISC */
/*
 * What one user may put into the audit log (issue 11, finding 5). The log
 * is _sbx's, so the caller's disk quota does not apply to it, and every
 * request that reaches the code is recorded: without a bound of its own a
 * member of group sbx could fill /var for everyone. Two bounds, both in
 * sbx.conf(5):
 *
 *   max_requests_per_minute   requests (runs, refused or not) per user
 *                             and minute; past it the request is refused
 *                             before the code is read and is NOT recorded
 *                             (that is the point); it is counted instead,
 *                             and every later record of the user carries
 *                             the count since boot (unrecorded_refusals:
 *                             cumulative, so a request that dies before
 *                             its record loses no count);
 *   audit_code_per_day        bytes of code text one user's runs may put
 *                             into the log per day; past it the run is
 *                             refused and recorded by size alone.
 *
 * The state is a few words in the user's run-slot file (slots.c: root's,
 * in root-only directories, opened before this is called), at QUOTA_OFF,
 * past every slot byte, updated under a lock of its own byte. Windows are
 * fixed (minute and day of CLOCK_BOOTTIME); the file lives in RUNSTATEDIR,
 * a tmpfs, so the counts start afresh at boot, as that clock does. A
 * fixed window lets a user make up to twice the rate across a window's
 * edge; the bound is on growth, not on bursts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "units.h"

#define QUOTA_OFF  65536 /* past the slot bytes (max_runs_per_user <= 4096) */
#define QUOTA_LOCK (QUOTA_OFF - 1)
#define QUOTA_MAGIC 0x7362787175310a00ULL /* "sbxqu1\n" */

struct quota_state {
	uint64_t magic;
	uint64_t minute;          /* CLOCK_BOOTTIME minute of requests */
	uint64_t requests;        /* requests in that minute */
	uint64_t day;             /* CLOCK_BOOTTIME day of code_bytes */
	uint64_t code_bytes;      /* code text recorded that day */
	uint64_t unrecorded;      /* requests refused without a record, since boot */
};

static uint64_t boot_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

static int lock_state(int fd, short type)
{
	struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = QUOTA_LOCK, .l_len = 1};

	/* held for a pread and a pwrite by root processes only */
	while (fcntl(fd, F_OFD_SETLKW, &l) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Read the state under the lock (a missing or foreign one reads as zero). */
static int load(int fd, struct quota_state *q)
{
	ssize_t n;

	if (lock_state(fd, F_WRLCK) < 0)
		return -1;
	n = pread(fd, q, sizeof(*q), QUOTA_OFF);
	if (n != (ssize_t)sizeof(*q) || q->magic != QUOTA_MAGIC)
		memset(q, 0, sizeof(*q));
	q->magic = QUOTA_MAGIC;
	return 0;
}

static int store(int fd, const struct quota_state *q)
{
	int rc = pwrite(fd, q, sizeof(*q), QUOTA_OFF) == (ssize_t)sizeof(*q) ? 0 : -1;

	lock_state(fd, F_UNLCK);
	return rc;
}

int quota_request(struct run *r, char *err, size_t errlen)
{
	struct quota_state q;
	uint64_t minute = boot_seconds() / 60, max = r->conf.max_requests_per_minute;

	if (load(r->slot_fd, &q) < 0) {
		snprintf(err, errlen, "audit quota: locking the state of user %s: %s", r->user, strerror(errno));
		return -1;
	}
	if (q.minute != minute) {
		q.minute = minute;
		q.requests = 0;
	}
	if (q.requests >= max) {
		q.unrecorded++;
		store(r->slot_fd, &q);
		snprintf(err, errlen,
			 "user %s made %llu requests this minute, the most sbx.conf allows (max_requests_per_minute); "
			 "this one is refused and only counted in the audit log; wait a minute",
			 r->user, (unsigned long long)max);
		return -1;
	}
	q.requests++;
	/* this request's record says how many went unrecorded before it */
	r->unrecorded_refusals = q.unrecorded;
	if (store(r->slot_fd, &q) < 0) {
		snprintf(err, errlen, "audit quota: writing the state of user %s: %s", r->user, strerror(errno));
		return -1;
	}
	return 0;
}

int quota_code(struct run *r, char *err, size_t errlen)
{
	struct quota_state q;
	uint64_t day = boot_seconds() / 86400, max = r->conf.audit_code_per_day;
	char used[32], cap[32];

	if (load(r->slot_fd, &q) < 0) {
		snprintf(err, errlen, "audit quota: locking the state of user %s: %s", r->user, strerror(errno));
		return -1;
	}
	if (q.day != day) {
		q.day = day;
		q.code_bytes = 0;
	}
	if (q.code_bytes + r->code_len > max) {
		store(r->slot_fd, &q);
		sbx_format_size(q.code_bytes, used, sizeof(used));
		sbx_format_size(max, cap, sizeof(cap));
		snprintf(err, errlen,
			 "user %s's runs put %s of code into the audit log today and this one has %llu bytes: "
			 "over the %s sbx.conf allows (audit_code_per_day); refused, recorded by size only",
			 r->user, used, (unsigned long long)r->code_len, cap);
		return -1;
	}
	q.code_bytes += r->code_len;
	if (store(r->slot_fd, &q) < 0) {
		snprintf(err, errlen, "audit quota: writing the state of user %s: %s", r->user, strerror(errno));
		return -1;
	}
	return 0;
}
