/* SPDX-License-Identifier: ISC */
/*
 * The recorder's run (recorder.h): START before the payload runs, the
 * payload's output captured up to the cap and streamed to the client as
 * frames, artifacts checked and hashed, the traceback parsed, END, the
 * result. The run description comes from the supervisor (checked in
 * main.c); the sandbox's output and the collector's files are untrusted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>
#include <sodium.h>

#include "checkpoint.h"
#include "fdio.h"
#include "proto.h"
#include "allocation.h"
#include "recorder.h"
#include "workspace.h"
#include "startfacts.h"
#include "testhook.h"
#include "textutil.h"
#include "traceback.h"
#include "version.h"
#include "clock.h"

/* What the log says of the caller's --parent claim (log.h). */
static int parent_field(struct sbx_record *rec, struct rec *c, char *err, size_t errlen)
{
	const char *verdict;

	if (c->d->parent_id[0] == '\0')
		return 0;
	if (rec_log_parent_check(c->log, c->d, &verdict, err, errlen) < 0)
		return -1;
	return sbx_rec_put_str(rec, SBX_F_PARENT_CHECK, verdict, err, errlen);
}

/* One line from sbx-helper to the client (proto.h SBX_FRAME_MESSAGE). */
void rec_message(struct rec *c, const char *fmt, ...)
{
	char buf[SBX_FRAME_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	outq_frame(&c->q, SBX_FRAME_MESSAGE, buf, strlen(buf), -1);
}

void rec_reply(const struct rec *c, enum sbx_rec_reply r)
{
	unsigned char b = (unsigned char)r;

	(void)!send(c->ctl, &b, 1, MSG_NOSIGNAL);
}

void rec_fill_common(struct sbx_record *rec, const struct rec *c)
{
	const struct sbx_run_desc *d = c->d;

	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->run_id, d->run_id, sizeof(rec->run_id));
	rec->realtime_ns = d->realtime_ns;
	rec->boottime_ns = d->boottime_ns;
	{
		int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, rec->boot_id, sizeof(rec->boot_id) - 1) : -1;
		if (n > 0)
			rec->boot_id[strcspn(rec->boot_id, "\n")] = '\0';
		if (fd >= 0)
			close(fd);
	}
	gethostname(rec->host, sizeof(rec->host) - 1);
	rec->uid = d->uid;
	rec->gid = d->gid;
	strlcpy(rec->user, d->user, sizeof(rec->user));
	strlcpy(rec->policy, d->policy, sizeof(rec->policy));
	memcpy(rec->policy_sha256, d->policy_sha256, 32);
	rec->limits = d->limits;
	strlcpy(rec->language, d->language, sizeof(rec->language));
	_Static_assert(sizeof(rec->argv) >= sizeof(d->argv), "the record holds the described argv");
	memcpy(rec->argv, d->argv, d->argv_len);
	rec->argv_len = d->argv_len;
	memcpy(rec->code_sha256, c->code_sha256, 32);
	strlcpy(rec->session, d->session, sizeof(rec->session));
	rec->attempt = d->attempt;
	strlcpy(rec->parent_id, d->parent_id, sizeof(rec->parent_id));
}

/* The code from its sealed memfd (the supervisor checked the seals and
 * the size): pread cannot block or see it change. A refused run records
 * no code (its fd may not even be a memfd; the supervisor passed
 * /dev/null). */
static int read_code(struct rec *c, char *err, size_t errlen)
{
	struct stat st;
	size_t n = (size_t)c->d->code_bytes;

	c->code = malloc(n + 1);
	if (c->code == NULL) {
		strlcpy(err, "out of memory", errlen);
		return -1;
	}
	c->code_len = 0;
	if (!(c->d->flags & SBX_DESC_REFUSED)) {
		if (fstat(SBX_REC_FD_CODE, &st) < 0 || (uint64_t)st.st_size != c->d->code_bytes ||
		    pread(SBX_REC_FD_CODE, c->code, n, 0) != (ssize_t)n) {
			snprintf(err, errlen, "the code could not be read back (%s)", strerror(errno));
			return -1;
		}
		c->code_len = n;
	} else if (c->d->flags & SBX_DESC_CODE) {
		/* by digest and size, never by text: a flood of refused requests
		 * must not fill the log and its search index (issue 11, finding 5) */
		if (hash_sealed(SBX_REC_FD_CODE, c->d->code_bytes, "the refused code", c->refused_sha256, err,
				errlen) < 0)
			return -1;
		c->refused_hashed = true;
	}
	c->code[c->code_len] = '\0';
	close(SBX_REC_FD_CODE);
	crypto_hash_sha256(c->code_sha256, (const unsigned char *)c->code, c->code_len);
	return 0;
}

/* The policy's text (proto.h SBX_REC_FD_POLICY), kept by digest with
 * START (the policy table): the sealed memfd the supervisor filled from
 * the file it parsed, checked against the digest it sent. */
static int read_policy(struct rec *c, struct sbx_record *start, char *err, size_t errlen)
{
	static char *text;
	const struct sbx_run_desc *d = c->d;
	size_t n = (size_t)d->policy_bytes;
	unsigned char got[32];
	struct stat st;

	if (!(d->flags & SBX_DESC_POLICY_TEXT))
		return 0;
	text = malloc(n ? n : 1);
	if (text == NULL) {
		strlcpy(err, "out of memory", errlen);
		return -1;
	}
	if (fstat(SBX_REC_FD_POLICY, &st) < 0 || (uint64_t)st.st_size != d->policy_bytes ||
	    pread(SBX_REC_FD_POLICY, text, n, 0) != (ssize_t)n) {
		snprintf(err, errlen, "the policy text could not be read back (%s)", strerror(errno));
		return -1;
	}
	crypto_hash_sha256(got, (const unsigned char *)text, n);
	if (sodium_memcmp(got, d->policy_sha256, 32) != 0) {
		strlcpy(err, "the policy text does not match the policy's digest", errlen);
		return -1;
	}
	start->policy_text = text;
	start->policy_len = n;
	return 0;
}

/* ---- output ------------------------------------------------------------ */

/*
 * The output cap (limit.h output, output_action). kill: the first
 * output_bytes of both streams together are kept and the run is stopped.
 * truncate: the first half is kept as the head (streamed live); past it
 * each stream keeps its last quarter in a ring and the run goes on, its
 * further output counted and discarded (the wall-time limit bounds it);
 * at the end the tail follows the head after a marker line naming the
 * bytes left out (finish_tail). Either way at most output_bytes are kept.
 */
static uint64_t head_cap(const struct rec *c)
{
	const struct sbx_limits *l = &c->d->limits;

	return l->output_action == SBX_ACTION_KILL ? l->output_bytes : l->output_bytes / 2;
}

static bool append(struct stream *st, const char *data, size_t n)
{
	if (st->cap.len + n > st->alloc) {
		size_t want = st->alloc ? st->alloc : 65536;
		while (want < st->cap.len + n)
			want *= 2;
		char *nb = realloc(st->cap.buf, want);
		if (nb == NULL)
			return false;
		st->cap.buf = nb;
		st->alloc = want;
	}
	memcpy(st->cap.buf + st->cap.len, data, n);
	st->cap.len += n;
	return true;
}

static void keep_tail(const struct rec *c, struct stream *st, const char *data, size_t n)
{
	if (st->tail == NULL) {
		st->tail_cap = (size_t)(c->d->limits.output_bytes / 4);
		st->tail = st->tail_cap ? malloc(st->tail_cap) : NULL;
		if (st->tail == NULL)
			st->tail_cap = 0;
	}
	if (st->tail_cap == 0)
		return;
	if (n >= st->tail_cap) {
		memcpy(st->tail, data + n - st->tail_cap, st->tail_cap);
		st->tail_pos = 0;
		st->tail_len = st->tail_cap;
		return;
	}
	while (n > 0) {
		size_t k = st->tail_cap - st->tail_pos < n ? st->tail_cap - st->tail_pos : n;
		memcpy(st->tail + st->tail_pos, data, k);
		st->tail_pos = (st->tail_pos + k) % st->tail_cap;
		st->tail_len = st->tail_len + k < st->tail_cap ? st->tail_len + k : st->tail_cap;
		data += k;
		n -= k;
	}
}

void rec_capture(struct rec *c, struct stream *st, const char *data, size_t n)
{
	uint64_t cap = head_cap(c), room = cap > c->captured ? cap - c->captured : 0;
	size_t keep = n > room ? (size_t)room : n;

	st->total += n;
	if (keep > 0 && append(st, data, keep)) {
		outq_output(&c->q, st->frame, &st->cap, st->cap.len - keep, keep);
		c->captured += keep;
	}
	if (keep == n)
		return;
	if (!st->truncated) {
		st->truncated = true;
		if (c->d->limits.output_action == SBX_ACTION_KILL)
			rec_reply(c, SBX_REPLY_KILL_OUTPUT);
	}
	if (c->d->limits.output_action == SBX_ACTION_TRUNCATE)
		keep_tail(c, st, data + keep, n - keep);
}

/* After the run: the marker and the tail after the head, in the capture
 * (so the result, the hash in END and the stream all carry them). The
 * tail starts after its first newline when that drops less than half of
 * it, so that it begins with a whole line. */
void rec_finish_tail(struct rec *c, struct stream *st)
{
	char marker[160];
	size_t from, n = st->tail_len, lead = 0;
	uint64_t kept_tail;

	if (!st->truncated)
		return;
	if (c->d->limits.output_action == SBX_ACTION_KILL) {
		st->omitted = st->total - st->cap.len;
		return;
	}
	from = st->tail_len < st->tail_cap ? 0 : st->tail_pos;
	for (size_t i = 0; i < n / 2; i++)
		if (st->tail[(from + i) % st->tail_cap] == '\n') {
			lead = i + 1;
			break;
		}
	kept_tail = n - lead;
	st->omitted = st->total - st->cap.len - kept_tail;
	snprintf(marker, sizeof(marker), "%s[sbx: output cut at the output limit: %" PRIu64 " of %" PRIu64
		 " bytes not shown%s]\n",
		 st->cap.len > 0 && st->cap.buf[st->cap.len - 1] != '\n' ? "\n" : "", st->omitted, st->total,
		 kept_tail ? "; the last part follows" : "");
	size_t off = st->cap.len;
	if (!append(st, marker, strlen(marker)))
		return;
	for (size_t i = lead; i < n;) {
		size_t at = (from + i) % st->tail_cap, k = n - i < st->tail_cap - at ? n - i : st->tail_cap - at;
		if (!append(st, st->tail + at, k))
			break;
		i += k;
	}
	outq_output(&c->q, st->frame, &st->cap, off, st->cap.len - off);
	free(st->tail);
	st->tail = NULL;
}

void rec_read_end(struct rec *c)
{
	struct sbx_run_end e;
	char err[128];
	ssize_t n;

	do
		n = recv(c->ctl, &e, sizeof(e), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	c->have_end = true;
	if (n > 0 && sbx_run_end_check(&e, (size_t)n, err, sizeof(err)) == 0) {
		c->end = e;
		return;
	}
	memset(&c->end, 0, sizeof(c->end));
	c->end.outcome = SBX_OUTCOME_SANDBOX_ERROR;
	c->end.limit = SBX_LIMIT_NONE;
	c->end.exit_code = -1;
	/* which of the three it was, for whoever reads the END record */
	if (n == 0)
		strlcpy(c->end.error, "supervisor vanished (its channel closed without END)", sizeof(c->end.error));
	else if (n < 0)
		snprintf(c->end.error, sizeof(c->end.error), "supervisor vanished (reading END: %s)", strerror(errno));
	else
		snprintf(c->end.error, sizeof(c->end.error), "supervisor vanished (%zd bytes, not an END: %s)", n, err);
}

static bool collect_one(struct rec *c);

/* Until both pipes are at EOF and the supervisor has said how the run
 * ended: capture, and send the client what it takes. */
static void pump(struct rec *c)
{
	static char buf[65536];

	int64_t tail = 0; /* after END: when the pipes count as ended (REC_TAIL_MS) */

	while (!(c->s[0].eof && c->s[1].eof && c->have_end)) {
		struct pollfd p[5];
		int n = 0, ix[2] = {-1, -1}, cx = -1, ax = -1, wait = -1;

		if (c->have_end) {
			int64_t now = sbx_mono_ms();
			if (tail == 0)
				tail = now + REC_TAIL_MS;
			if (now >= tail) {
				c->s[0].eof = c->s[1].eof = true;
				break;
			}
			wait = (int)(tail - now);
		}

		for (int i = 0; i < 2; i++)
			if (!c->s[i].eof) {
				ix[i] = n;
				p[n++] = (struct pollfd){.fd = c->s[i].in, .events = POLLIN};
			}
		if (!c->have_end) {
			cx = n;
			p[n++] = (struct pollfd){.fd = c->ctl, .events = POLLIN};
		}
		if (!c->art_eof) {
			ax = n;
			p[n++] = (struct pollfd){.fd = c->art, .events = POLLIN};
		}
		if (outq_pending(&c->q))
			p[n++] = (struct pollfd){.fd = c->q.sock, .events = POLLOUT};
		if (poll(p, (nfds_t)n, wait) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++)
			if (ix[i] >= 0 && p[ix[i]].revents) {
				ssize_t r = read(c->s[i].in, buf, sizeof(buf));
				if (r > 0)
					rec_capture(c, &c->s[i], buf, (size_t)r);
				else if (r == 0 || errno != EINTR)
					c->s[i].eof = true;
			}
		if (cx >= 0 && p[cx].revents)
			rec_read_end(c);
		if (ax >= 0 && p[ax].revents)
			(void)collect_one(c);
		/* the socket may take new output, or room came back (qx) */
		outq_send(&c->q);
	}
}

/* ---- artifacts --------------------------------------------------------- */

/* Paths the client can write and the JSON can carry: components
 * separated by single '/', none empty or hidden (no "." or ".."), no
 * control characters, valid UTF-8. */
static bool good_name(const char *n)
{
	char *clean;
	bool ok;

	if (n[0] == '\0' || strlen(n) > SBX_PATH_MAX_ART)
		return false;
	for (const unsigned char *p = (const unsigned char *)n; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		if ((p == (const unsigned char *)n || p[-1] == '/') && (*p == '.' || *p == '/'))
			return false;
	}
	if (n[strlen(n) - 1] == '/')
		return false;
	clean = sbx_utf8_sanitize(n, strlen(n));
	ok = clean != NULL && strcmp(clean, n) == 0;
	free(clean);
	return ok;
}

static void skip(struct rec *c, const char *path, enum sbx_art_skip why)
{
	c->skipped_arts++;
	c->skipped_why[why]++;
	if (c->n_skipped == MAX_SKIPPED_LISTED || c->skipped == NULL)
		return;
	strlcpy(c->skipped[c->n_skipped].path, path, sizeof(c->skipped[0].path));
	c->skipped[c->n_skipped++].why = why;
}

static int hash_fd(int fd, uint64_t size, unsigned char out[32], unsigned char *head, size_t *headlen)
{
	crypto_hash_sha256_state h;
	unsigned char buf[65536];
	uint64_t off = 0;

	crypto_hash_sha256_init(&h);
	*headlen = 0;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);
		if (n <= 0)
			return -1;
		if (off == 0) {
			*headlen = (size_t)n < 512 ? (size_t)n : 512;
			memcpy(head, buf, *headlen);
		}
		crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
		off += (uint64_t)n;
	}
	crypto_hash_sha256_final(&h, out);
	return 0;
}

/* A message without an fd from the collector (proto.h). */
static void collector_note(struct rec *c, const char *msg, size_t n)
{
	char path[SBX_PATH_MAX_ART + 1];

	if (n >= 2 && msg[0] == SBX_COLLECT_SKIPPED) {
		size_t k = n - 2 < SBX_PATH_MAX_ART ? n - 2 : SBX_PATH_MAX_ART;
		unsigned why = (unsigned char)msg[1];
		char *clean;

		memcpy(path, msg + 2, k);
		path[k] = '\0';
		clean = sbx_utf8_sanitize(path, strlen(path));
		skip(c, clean ? clean : "?", why < SBX_ART_SKIP_N ? (enum sbx_art_skip)why : SBX_ART_SKIP_UNREADABLE);
		free(clean);
	} else if (n >= 1 && msg[0] == SBX_COLLECT_CHANGESET) {
		c->cs_said = true;
		ws_note(c, msg + 1, n - 1);
	} else if (n == 1 && msg[0] == SBX_COLLECT_DONE) {
		c->art_done = true;
	} else if (n >= 2 && msg[0] == SBX_COLLECT_TRUNCATED) {
		size_t k = n - 1 < SBX_PATH_MAX_ART ? n - 1 : SBX_PATH_MAX_ART;

		memcpy(path, msg + 1, k);
		path[k] = '\0';
		for (size_t i = 0; i < c->n_arts; i++)
			if (strcmp(c->arts[i].name, path) == 0)
				c->art_truncated[i] = true;
	}
}

/* The arrays for limits.artifacts files, before the collector sends any. */
void rec_artifacts_init(struct rec *c)
{
	size_t cap = (size_t)c->d->limits.artifacts;

	c->arts = calloc(cap ? cap : 1, sizeof(*c->arts));
	c->art_truncated = calloc(cap ? cap : 1, sizeof(*c->art_truncated));
	c->skipped = calloc(MAX_SKIPPED_LISTED, sizeof(*c->skipped));
	c->arts_cap = c->arts != NULL && c->art_truncated != NULL ? cap : 0;
}

/* The collector's next message within REC_TAIL_MS; false (the channel
 * counted as ended, the list incomplete unless it said SBX_COLLECT_DONE)
 * when none came: a collector that did not die holds its end open. */
static bool art_wait(struct rec *c)
{
	struct pollfd p = {.fd = c->art, .events = POLLIN};
	int rc;

	while ((rc = poll(&p, 1, REC_TAIL_MS)) < 0 && errno == EINTR)
		;
	if (rc == 1)
		return true;
	c->art_eof = true;
	if (!c->art_done)
		skip(c, ".", SBX_ART_SKIP_INCOMPLETE);
	return false;
}

/*
 * One message from the collector: a file is checked, hashed and queued
 * for the client at once (the queue owns its fd), so that neither the
 * collector's fds in flight (counted against the caller's RLIMIT_NOFILE)
 * nor ours pile up. false at EOF.
 */
static bool collect_one(struct rec *c)
{
	char name[SBX_PATH_MAX_ART + 3];
	int fd, n = sbx_recv_fd(c->art, name, sizeof(name) - 1, &fd);

	if (n < 0 && errno == EINTR)
		return true;
	if (n < 0 && errno == EPROTO) {
		/* its descriptor was cut off (MSG_CTRUNC: no room for it under
		 * our RLIMIT_NOFILE): that file is skipped, and said so, and the
		 * next one may still fit (issue 11, finding 7) */
		skip(c, "?", SBX_ART_SKIP_UNREADABLE);
		return true;
	}
	if (n <= 0) {
		c->art_eof = true;
		/* the collector (the caller's process) ended before its last
		 * word: what it did not send is unknown, the list incomplete */
		if (!c->art_done)
			skip(c, ".", SBX_ART_SKIP_INCOMPLETE);
		return false;
	}
	name[n] = '\0';
	if (fd < 0) {
		collector_note(c, name, (size_t)n);
		return true;
	}
	/* the manifest comes once, first, and only in a --workspace run; any
	 * other such message is a file of that name (refused by good_name) */
	if (n == 1 && name[0] == SBX_COLLECT_CHANGESET && (c->d->flags & SBX_DESC_WORKSPACE) && !c->cs_said) {
		c->cs_said = true;
		ws_take_manifest(c, fd);
		return true;
	}
	rec_take_artifact(c, name, fd);
	return true;
}

void rec_take_artifact(struct rec *c, const char *name, int fd)
{
	const unsigned int seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	unsigned char head[512];
	size_t headlen = 0;
	struct stat st;
	enum sbx_art_skip why;

	/* a sealed memfd cannot change after we hash it */
	if (!good_name(name))
		why = SBX_ART_SKIP_BAD_NAME;
	else if (c->n_arts >= c->arts_cap)
		why = SBX_ART_SKIP_COUNT_CAP;
	else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ((unsigned)fcntl(fd, F_GET_SEALS) & seals) != seals)
		why = SBX_ART_SKIP_UNREADABLE;
	else if (c->art_total + (uint64_t)st.st_size > c->d->limits.out_bytes)
		why = SBX_ART_SKIP_OUT_SIZE;
	else
		why = SBX_ART_SKIP_N;
	struct sbx_artifact *a = why == SBX_ART_SKIP_N ? &c->arts[c->n_arts] : NULL;
	if (a != NULL) {
		memset(a, 0, sizeof(*a));
		strlcpy(a->name, name, sizeof(a->name));
		a->size = (uint64_t)st.st_size;
		if (hash_fd(fd, a->size, a->sha256, head, &headlen) < 0)
			why = SBX_ART_SKIP_UNREADABLE;
	}
	if (why != SBX_ART_SKIP_N || a == NULL) {
		char *clean = sbx_utf8_sanitize(name, strlen(name));
		skip(c, clean ? clean : "?", why);
		free(clean);
		close(fd);
		return;
	}
	strlcpy(a->media_type, sbx_media_type(name, head, headlen), sizeof(a->media_type));
	c->art_total += a->size;
	c->n_arts++;
	outq_frame(&c->q, SBX_FRAME_ARTIFACT, a->name, strlen(a->name), fd);
}

/* ---- records ------------------------------------------------------------- */

static void excerpt(const struct stream *st, char *out, size_t outlen)
{
	size_t n = st->cap.len < outlen - 1 ? st->cap.len : outlen - 1;
	const char *from = st->cap.buf ? st->cap.buf + st->cap.len - n : "";
	char *clean = sbx_utf8_sanitize(from, n);

	strlcpy(out, clean ? clean : "", outlen);
	free(clean);
}

const char *rec_limit_name(const struct sbx_run_end *e)
{
	/* a full tmpfs does not end the run: named only when nothing else fired
	 * (the record's limit field holds 15 bytes: "tmp+shm+out" for all three) */
	static const char *const disk_full[] = {"",         "tmp_size",     "out_size",     "tmp+out_size",
						"shm_size", "tmp+shm_size", "shm+out_size", "tmp+shm+out"};

	if (e->limit != SBX_LIMIT_NONE)
		return sbx_limit_defs[e->limit].key;
	return disk_full[e->disk_full & (SBX_DISK_FULL_TMP | SBX_DISK_FULL_OUT | SBX_DISK_FULL_SHM)];
}

void rec_fill_end(struct rec *c, struct sbx_record *end)
{
	struct timespec ts;

	rec_fill_common(end, c);
	end->kind = SBX_REC_END;
	/* END carries the time the run ended, START the time it began */
	clock_gettime(CLOCK_REALTIME, &ts);
	end->realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	end->boottime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	strlcpy(end->outcome, sbx_outcome_defs[c->end.outcome].name, sizeof(end->outcome));
	strlcpy(end->limit, rec_limit_name(&c->end), sizeof(end->limit));
	strlcpy(end->error, c->end.error, sizeof(end->error));
	end->exit_code = c->end.exit_code;
	end->signal = c->end.signal;
	end->wall_ms = c->end.wall_ms;
	end->cpu_ms = c->end.cpu_ms;
	end->memory_peak_bytes = c->end.memory_peak_bytes;
	end->stdout_bytes = c->s[0].total;
	end->stderr_bytes = c->s[1].total;
	crypto_hash_sha256(end->stdout_sha256, (const unsigned char *)(c->s[0].cap.buf ? c->s[0].cap.buf : ""),
			   c->s[0].cap.len);
	crypto_hash_sha256(end->stderr_sha256, (const unsigned char *)(c->s[1].cap.buf ? c->s[1].cap.buf : ""),
			   c->s[1].cap.len);
	excerpt(&c->s[1], end->stderr_excerpt, sizeof(end->stderr_excerpt));
	end->artifacts = c->arts;
	end->n_artifacts = c->n_arts;
}

static void origin_of(const struct sbx_run_desc *d, char *origin, size_t len)
{
	if (d->audit_origin[0])
		strlcpy(origin, d->audit_origin, len);
	else
		sbx_default_origin(origin, len); /* HOST/sbx */
	origin[len - 1] = '\0';
}

/* The refusal's own fields: what was asked, why not, the code sent. */
static int refused_fields(struct sbx_record *rec, struct rec *c, char *err, size_t errlen)
{
	const struct sbx_run_desc *d = c->d;

	return (d->policy[0] && sbx_rec_put_str(rec, SBX_F_REQ_POLICY, d->policy, err, errlen) < 0) ||
			       (d->language[0] &&
				sbx_rec_put_str(rec, SBX_F_REQ_LANGUAGE, d->language, err, errlen) < 0) ||
			       sbx_rec_put_str(rec, SBX_F_REFUSAL, c->end.error_code[0] ? c->end.error_code : "setup",
					       err, errlen) < 0 ||
			       sbx_rec_put_str(rec, SBX_F_REFUSAL_MSG, c->end.error, err, errlen) < 0 ||
			       sbx_rec_put_str(rec, SBX_F_SBX_VERSION, SBX_VERSION, err, errlen) < 0 ||
			       (c->refused_hashed &&
				sbx_rec_put_u64(rec, SBX_F_CODE_BYTES, d->code_bytes, err, errlen) < 0) ||
			       (d->unrecorded_refusals > 0 &&
				sbx_rec_put_u64(rec, SBX_F_UNRECORDED, d->unrecorded_refusals, err, errlen) < 0)
		       ? -1
		       : 0;
}

/*
 * Refused before a policy loaded (rundesc.h SBX_DESC_NO_POLICY): one
 * REFUSED record, the caller's request as asked (policy and language in
 * requested_policy and requested_language, the fixed policy, language and
 * argv empty: none applied), why (the supervisor's END: its error code
 * and the words the caller gets) and the code by digest: code_sha256 is
 * the code actually sent when its memfd passed the checks, else zeros.
 * Then the checkpoint and the result, as after an END.
 */
static _Noreturn void refused_run(struct rec *c, const char *origin)
{
	const struct sbx_run_desc *d = c->d;
	struct sbx_record rec;
	char err[SBX_ERR_LEN], chainhex[65];
	json_t *res;
	char *text;

	close(c->s[0].in);
	close(c->s[1].in);
	c->s[0].eof = c->s[1].eof = true;
	rec_read_end(c);
	rec_fill_common(&rec, c);
	rec.kind = SBX_REC_REFUSED;
	rec.policy[0] = rec.language[0] = '\0';
	memset(rec.policy_sha256, 0, 32);
	rec.argv_len = 0;
	if (c->refused_hashed)
		memcpy(rec.code_sha256, c->refused_sha256, 32);
	else
		memset(rec.code_sha256, 0, 32);
	if (refused_fields(&rec, c, err, sizeof(err)) < 0 || rec_log_open(&c->log, origin, err, sizeof(err)) < 0 ||
	    rec_log_append(c->log, &rec, c->chain, err, sizeof(err)) < 0) {
		rec_message(c, "audit log unavailable: the refusal was not recorded: %s", err);
		syslog(LOG_ERR, "run=%s REFUSED record not written: %s", d->run_id, err);
		outq_flush(&c->q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	sbx_rext_free(&rec.ext);
	c->start_seq = c->end_seq = rec.seq;
	if (rec_log_checkpoint(c->log, d, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint not written: %s", d->run_id, err);
	sbx_hex(c->chain, 32, chainhex);
	syslog(LOG_INFO, "run=%s user=%s uid=%u refused=%s policy=%s lang=%s seq=%" PRIu64 " chain=%s", d->run_id,
	       d->user, (unsigned)d->uid, c->end.error_code[0] ? c->end.error_code : "setup", d->policy, d->language,
	       rec.seq, chainhex);
	rec_log_close(c->log);
	res = result_json(c, NULL);
	text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	rec_message(c, "%s", c->end.error);
	if (text != NULL)
		outq_frame_take(&c->q, SBX_FRAME_RESULT, text, strlen(text));
	outq_flush(&c->q, sbx_mono_ms() + SBX_FLUSH_MS);
	_exit(0);
}

static _Noreturn void start_failed(struct rec *c, const char *err)
{
	rec_message(c, "audit log unavailable, the run was not started: %s", err);
	rec_reply(c, SBX_REPLY_START_FAIL);
	/* the supervisor waits 2 s for us */
	outq_flush(&c->q, sbx_mono_ms() + 1000);
	_exit(1);
}

void recorder_run(const struct sbx_run_desc *d)
{
	static struct rec c;
	struct sbx_record start, end;
	char err[SBX_ERR_LEN], chainhex[65], origin[SBX_ORIGIN_MAX + 1];
	json_t *tb = NULL, *res;
	char *text;

	c.d = d;
	c.ctl = SBX_REC_FD_CONTROL;
	c.art = SBX_REC_FD_ARTIFACTS;
	outq_init(&c.q, SBX_REC_FD_RESULT);
	rec_artifacts_init(&c);
	c.s[0] = (struct stream){.in = SBX_REC_FD_STDOUT, .frame = SBX_FRAME_STDOUT};
	c.s[1] = (struct stream){.in = SBX_REC_FD_STDERR, .frame = SBX_FRAME_STDERR};
	umask(027);
	origin_of(d, origin, sizeof(origin));
	/* the supervisor builds the sandbox while START commits (main.c) */
	rec_reply(&c, SBX_REPLY_READY);

	if (read_code(&c, err, sizeof(err)) < 0)
		start_failed(&c, err);
	if (d->flags & SBX_DESC_APPLY)
		ws_apply_run(&c, origin);
	if (d->flags & SBX_DESC_NO_POLICY)
		refused_run(&c, origin);
	int lsock = -1;
	if ((d->flags & SBX_DESC_LIVE) && !(d->flags & SBX_DESC_REFUSED) &&
	    (lsock = live_listen(d, err, sizeof(err))) < 0) {
		rec_message(&c, "session %s: %s", d->session, err);
		rec_reply(&c, SBX_REPLY_START_FAIL);
		outq_flush(&c.q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	rec_fill_common(&start, &c);
	start.kind = SBX_REC_START;
	start.code = c.code;
	start.code_len = c.code_len;
	if (read_policy(&c, &start, err, sizeof(err)) < 0 || start_fields(&start, &c, err, sizeof(err)) < 0 ||
	    egress_start_fields(&start, &d->egress, err, sizeof(err)) < 0)
		start_failed(&c, err);
	TEST_MARK("recorder-start-built");
	if (rec_log_open(&c.log, origin, err, sizeof(err)) < 0)
		start_failed(&c, err);
	TEST_MARK("recorder-log-open");
	if (parent_field(&start, &c, err, sizeof(err)) < 0 || rec_log_append(c.log, &start, c.chain, err, sizeof(err)) < 0)
		start_failed(&c, err);
	c.start_seq = start.seq;
	TEST_MARK("recorder-start-committed");
	sbx_rext_free(&start.ext);
	if (!(d->flags & SBX_DESC_REFUSED)) {
		rec_reply(&c, SBX_REPLY_START_OK);
		outq_frame(&c.q, SBX_FRAME_STARTED, d->run_id, strlen(d->run_id), -1);
		if (lsock >= 0)
			live_serve(&c, lsock);
		pump(&c);
		rec_finish_tail(&c, &c.s[0]);
		rec_finish_tail(&c, &c.s[1]);
		/* the cap fired and the run went on: the limit that fired */
		if ((c.s[0].truncated || c.s[1].truncated) && c.end.limit == SBX_LIMIT_NONE)
			c.end.limit = SBX_LIMIT_OUTPUT;
	} else {
		close(c.s[0].in);
		close(c.s[1].in);
		c.s[0].eof = c.s[1].eof = true;
		rec_read_end(&c);
	}
	while (!c.art_eof && art_wait(&c) && collect_one(&c))
		;
	close(c.art);
	/* the supervisor ended the relay before it sent the END facts (or the
	 * fd is /dev/null: no egress, or a refused run) */
	egress_report_read(SBX_REC_FD_EGRESS, &d->egress, &c.net);
	TEST_HOOK("recorder-end");
	if (c.s[1].cap.len > 0)
		tb = sbx_traceback_parse(c.s[1].cap.buf, c.s[1].cap.len, d->language);

	rec_fill_end(&c, &end);
	if (egress_end_fields(&end, &d->egress, &c.net, err, sizeof(err)) < 0) {
		rec_message(&c, "audit: END record: network fields: %s", err);
		syslog(LOG_ERR, "run=%s END record without its network fields: %s", d->run_id, err);
	}
	if (c.session_state[0] == '\0' && (d->flags & SBX_DESC_LIVE) && !(d->flags & SBX_DESC_REFUSED))
		snprintf(c.session_state, sizeof(c.session_state), "died: %s", sbx_outcome_defs[c.end.outcome].name);
	if ((c.session_state[0] &&
	     sbx_rec_put_str(&end, SBX_F_SESSION_STATE, c.session_state, err, sizeof(err)) < 0) ||
	    sbx_rec_put_u64(&end, SBX_F_INPUT_LIMIT, d->limits.input_bytes, err, sizeof(err)) < 0 ||
	    allocation_fields(&end, d, err, sizeof(err)) < 0 ||
	    (c.skipped_arts > 0 && sbx_rec_put_u64(&end, SBX_F_ARTS_SKIPPED, c.skipped_arts, err, sizeof(err)) < 0) ||
	    (!c.art_done && sbx_rec_put_str(&end, SBX_F_ARTS_INCOMPLETE,
					    "the collector ended before it had walked /out", err, sizeof(err)) < 0) ||
	    ws_end_fields(&c, &end, err, sizeof(err)) < 0 ||
	    rec_log_append(c.log, &end, c.chain, err, sizeof(err)) < 0) {
		rec_message(&c, "audit: END record: %s", err);
		syslog(LOG_ERR, "run=%s END record not written: %s", d->run_id, err);
		outq_flush(&c.q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	sbx_rext_free(&end.ext);
	TEST_MARK("recorder-end-committed");
	/* After every END, so that every finished run can be proven; after it,
	 * not inside it: a failed checkpoint costs only its own freshness
	 * (verify warns about the tail), never the run's record. */
	if (rec_log_checkpoint(c.log, d, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint not written: %s", d->run_id, err);
	TEST_MARK("recorder-checkpointed");
	c.end_seq = end.seq;
	sbx_hex(c.chain, 32, chainhex);
	/* a remote syslog that keeps these lines witnesses the chain */
	syslog(LOG_INFO, "run=%s user=%s uid=%u policy=%s lang=%s outcome=%s exit=%d seq=%" PRIu64 " chain=%s",
	       d->run_id, d->user, (unsigned)d->uid, d->policy, d->language, sbx_outcome_defs[c.end.outcome].name,
	       c.end.exit_code, c.end_seq, chainhex);
	rec_log_close(c.log);
	TEST_MARK("recorder-closed");

	res = result_json(&c, tb);
	text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	if (c.end.error[0])
		rec_message(&c, "%s", c.end.error);
	if (text != NULL)
		outq_frame_take(&c.q, SBX_FRAME_RESULT, text, strlen(text));
	outq_flush(&c.q, sbx_mono_ms() + SBX_FLUSH_MS);
	_exit(0);
}
