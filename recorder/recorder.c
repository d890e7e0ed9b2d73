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

#include "fdio.h"
#include "proto.h"
#include "recorder.h"
#include "startfacts.h"
#include "testhook.h"
#include "textutil.h"
#include "traceback.h"
#include "clock.h"

/* One line from sbx-helper to the client (proto.h SBX_FRAME_MESSAGE). */
static void message(struct rec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void message(struct rec *c, const char *fmt, ...)
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

static void reply(const struct rec *c, enum sbx_rec_reply r)
{
	unsigned char b = (unsigned char)r;

	(void)!send(c->ctl, &b, 1, MSG_NOSIGNAL);
}

static void fill_common(struct sbx_record *rec, const struct rec *c)
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
	}
	c->code[c->code_len] = '\0';
	close(SBX_REC_FD_CODE);
	crypto_hash_sha256(c->code_sha256, (const unsigned char *)c->code, c->code_len);
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static void capture(struct rec *c, struct stream *st, const char *data, size_t n)
{
	uint64_t room = c->d->limits.output_bytes - c->captured;

	st->total += n;
	if (n > room) {
		n = (size_t)room;
		if (!st->truncated) {
			st->truncated = true;
			reply(c, SBX_REPLY_KILL_OUTPUT);
		}
	}
	if (n == 0)
		return;
	if (st->cap.len + n > st->alloc) {
		size_t want = st->alloc ? st->alloc : 65536;
		while (want < st->cap.len + n)
			want *= 2;
		char *nb = realloc(st->cap.buf, want);
		if (nb == NULL)
			return;
		st->cap.buf = nb;
		st->alloc = want;
	}
	memcpy(st->cap.buf + st->cap.len, data, n);
	outq_output(&c->q, st->frame, &st->cap, st->cap.len, n);
	st->cap.len += n;
	c->captured += n;
}

static void read_end(struct rec *c)
{
	struct sbx_run_end e;
	char err[128];
	ssize_t n = recv(c->ctl, &e, sizeof(e), MSG_TRUNC);

	if (n >= 0 && sbx_run_end_check(&e, (size_t)n, err, sizeof(err)) == 0) {
		c->end = e;
	} else {
		memset(&c->end, 0, sizeof(c->end));
		c->end.outcome = SBX_OUTCOME_SANDBOX_ERROR;
		c->end.limit = SBX_LIMIT_NONE;
		strlcpy(c->end.error, "supervisor vanished", sizeof(c->end.error));
		c->end.exit_code = -1;
	}
	c->have_end = true;
}

/* Until both pipes are at EOF and the supervisor has said how the run
 * ended: capture, and send the client what it takes. */
static void pump(struct rec *c)
{
	static char buf[65536];

	while (!(c->s[0].eof && c->s[1].eof && c->have_end)) {
		struct pollfd p[4];
		int n = 0, ix[2] = {-1, -1}, cx = -1;

		for (int i = 0; i < 2; i++)
			if (!c->s[i].eof) {
				ix[i] = n;
				p[n++] = (struct pollfd){.fd = c->s[i].in, .events = POLLIN};
			}
		if (!c->have_end) {
			cx = n;
			p[n++] = (struct pollfd){.fd = c->ctl, .events = POLLIN};
		}
		if (outq_pending(&c->q))
			p[n++] = (struct pollfd){.fd = c->q.sock, .events = POLLOUT};
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++)
			if (ix[i] >= 0 && p[ix[i]].revents) {
				ssize_t r = read(c->s[i].in, buf, sizeof(buf));
				if (r > 0)
					capture(c, &c->s[i], buf, (size_t)r);
				else if (r == 0 || errno != EINTR)
					c->s[i].eof = true;
			}
		if (cx >= 0 && p[cx].revents)
			read_end(c);
		/* the socket may take new output, or room came back (qx) */
		outq_send(&c->q);
	}
}

/* ---- artifacts --------------------------------------------------------- */

/* Names the client can write and the JSON can carry: no hidden files, no
 * path separators or control characters, valid UTF-8. */
static bool good_name(const char *n)
{
	char *clean;
	bool ok;

	if (n[0] == '\0' || n[0] == '.')
		return false;
	for (const unsigned char *p = (const unsigned char *)n; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '/')
			return false;
	clean = sbx_utf8_sanitize(n, strlen(n));
	ok = clean != NULL && strcmp(clean, n) == 0;
	free(clean);
	return ok;
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

static void collect_artifacts(struct rec *c)
{
	const unsigned int seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	uint64_t total = 0;

	for (;;) {
		char name[257];
		unsigned char head[512];
		size_t headlen;
		struct stat st;
		int fd, n = sbx_recv_fd(c->art, name, sizeof(name) - 1, &fd);

		if (n <= 0)
			break;
		name[n] = '\0';
		if (fd < 0) {
			/* the collector's count of files it did not pass on */
			uint32_t k;
			if (n == 1 + (int)sizeof(k) && name[0] == '\0') {
				memcpy(&k, name + 1, sizeof(k));
				c->skipped_arts += k;
			}
			continue;
		}
		/* a sealed memfd cannot change after we hash it */
		if (!good_name(name) || c->n_arts == MAX_ARTIFACTS || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    ((unsigned)fcntl(fd, F_GET_SEALS) & seals) != seals ||
		    total + (uint64_t)st.st_size > c->d->limits.out_bytes) {
			c->skipped_arts++;
			close(fd);
			continue;
		}
		struct sbx_artifact *a = &c->arts[c->n_arts];
		memset(a, 0, sizeof(*a));
		strlcpy(a->name, name, sizeof(a->name));
		a->size = (uint64_t)st.st_size;
		if (hash_fd(fd, a->size, a->sha256, head, &headlen) < 0) {
			c->skipped_arts++;
			close(fd);
			continue;
		}
		strlcpy(a->media_type, sbx_media_type(name, head, headlen), sizeof(a->media_type));
		total += a->size;
		c->art_fd[c->n_arts++] = fd;
	}
	close(c->art);
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

static void fill_end(struct rec *c, struct sbx_record *end)
{
	struct timespec ts;

	fill_common(end, c);
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
	else if (gethostname(origin, len - 1) < 0)
		strlcpy(origin, "localhost", len);
	origin[len - 1] = '\0';
}

static _Noreturn void start_failed(struct rec *c, const char *err)
{
	message(c, "audit log unavailable, the run was not started: %s", err);
	reply(c, SBX_REPLY_START_FAIL);
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
	c.s[0] = (struct stream){.in = SBX_REC_FD_STDOUT, .frame = SBX_FRAME_STDOUT};
	c.s[1] = (struct stream){.in = SBX_REC_FD_STDERR, .frame = SBX_FRAME_STDERR};
	umask(027);
	origin_of(d, origin, sizeof(origin));

	if (read_code(&c, err, sizeof(err)) < 0)
		start_failed(&c, err);
	fill_common(&start, &c);
	start.kind = SBX_REC_START;
	start.code = c.code;
	start.code_len = c.code_len;
	if (start_fields(&start, &c, err, sizeof(err)) < 0 || rec_log_open(&c.log, origin, err, sizeof(err)) < 0 ||
	    rec_log_append(c.log, &start, c.chain, err, sizeof(err)) < 0)
		start_failed(&c, err);
	c.start_seq = start.seq;
	sbx_rext_free(&start.ext);
	if (!(d->flags & SBX_DESC_REFUSED)) {
		reply(&c, SBX_REPLY_START_OK);
		outq_frame(&c.q, SBX_FRAME_STARTED, d->run_id, strlen(d->run_id), -1);
		pump(&c);
	} else {
		close(c.s[0].in);
		close(c.s[1].in);
		c.s[0].eof = c.s[1].eof = true;
		read_end(&c);
	}
	collect_artifacts(&c);
	TEST_HOOK("recorder-end");
	if (c.s[1].cap.len > 0)
		tb = sbx_traceback_parse(c.s[1].cap.buf, c.s[1].cap.len, d->language);

	fill_end(&c, &end);
	if (sbx_rec_put_u64(&end, SBX_F_INPUT_LIMIT, d->limits.input_bytes, err, sizeof(err)) < 0 ||
	    rec_log_append(c.log, &end, c.chain, err, sizeof(err)) < 0) {
		message(&c, "audit: END record: %s", err);
		syslog(LOG_ERR, "run=%s END record not written: %s", d->run_id, err);
		outq_flush(&c.q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	sbx_rext_free(&end.ext);
	/* After every END, so that every finished run can be proven; after it,
	 * not inside it: a failed checkpoint costs only its own freshness
	 * (verify warns about the tail), never the run's record. */
	if (rec_log_checkpoint(c.log, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint not written: %s", d->run_id, err);
	c.end_seq = end.seq;
	sbx_hex(c.chain, 32, chainhex);
	/* a remote syslog that keeps these lines witnesses the chain */
	syslog(LOG_INFO, "run=%s user=%s uid=%u policy=%s lang=%s outcome=%s exit=%d seq=%" PRIu64 " chain=%s",
	       d->run_id, d->user, (unsigned)d->uid, d->policy, d->language, sbx_outcome_defs[c.end.outcome].name,
	       c.end.exit_code, c.end_seq, chainhex);
	rec_log_close(c.log);

	res = result_json(&c, tb);
	text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	for (size_t i = 0; i < c.n_arts; i++)
		outq_frame(&c.q, SBX_FRAME_ARTIFACT, c.arts[i].name, strlen(c.arts[i].name), c.art_fd[i]);
	if (c.end.error[0])
		message(&c, "%s", c.end.error);
	if (text != NULL)
		outq_frame_take(&c.q, SBX_FRAME_RESULT, text, strlen(text));
	outq_flush(&c.q, sbx_mono_ms() + SBX_FLUSH_MS);
	_exit(0);
}
