/* SPDX-License-Identifier: ISC */
/*
 * The recorder: runs as _sbx with no capabilities. It owns the audit log
 * (START before the payload runs, END after), caps and forwards the
 * payload's output, parses the traceback, checks and hashes artifacts and
 * writes the result to the client. It trusts nothing it reads from the
 * sandbox or the collector; what it sends the supervisor is one byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bsd/string.h>
#include <sodium.h>

#include "checkpoint.h"
#include "helper.h"
#include "paths.h"
#include "proto.h"
#include "environment.h"
#include "startfacts.h"
#include "testhook.h"
#include "textutil.h"
#include "traceback.h"

#define MAX_ARTIFACTS 64

struct stream {
	int in, out;          /* sandbox pipe, client fd */
	char *buf;            /* captured bytes, at most the output cap in all */
	size_t len, cap, fwd; /* fwd: bytes already written to the client */
	uint64_t total;       /* bytes the payload wrote, kept or not */
	bool eof, truncated, client_gone;
};

struct rec {
	struct run *r;
	int ctl, art;
	struct sbx_audit *log;
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	char origin[128];
	struct stream s[2];
	uint64_t captured;
	struct run_end end;
	bool have_end;
	struct sbx_artifact arts[MAX_ARTIFACTS];
	int art_fd[MAX_ARTIFACTS];
	size_t n_arts, skipped_arts;
	uint64_t start_seq, end_seq;
	unsigned char chain[32];
	struct run_env env;   /* environment.h: in START and the result */
};

static void fill_common(struct sbx_record *rec, const struct run *r)
{
	size_t off = 0;

	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->run_id, r->run_id, sizeof(rec->run_id));
	rec->realtime_ns = r->realtime_ns;
	rec->boottime_ns = r->boottime_ns;
	{
		int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, rec->boot_id, sizeof(rec->boot_id) - 1) : -1;
		if (n > 0)
			rec->boot_id[strcspn(rec->boot_id, "\n")] = '\0';
		if (fd >= 0)
			close(fd);
	}
	gethostname(rec->host, sizeof(rec->host) - 1);
	rec->uid = (uint32_t)r->uid;
	rec->gid = (uint32_t)r->gid;
	strlcpy(rec->user, r->user, sizeof(rec->user));
	strlcpy(rec->policy, r->policy.name, sizeof(rec->policy));
	memcpy(rec->policy_sha256, r->policy.sha256, 32);
	rec->limits = r->limits;
	strlcpy(rec->language, r->lang_name, sizeof(rec->language));
	for (size_t i = 0; r->argv[i] != NULL; i++) {
		size_t n = strlen(r->argv[i]) + 1;
		if (off + n > sizeof(rec->argv))
			break;
		memcpy(rec->argv + off, r->argv[i], n);
		off += n;
	}
	rec->argv_len = off;
	memcpy(rec->code_sha256, r->code_sha256, 32);
	strlcpy(rec->session, r->session, sizeof(rec->session));
	rec->attempt = r->attempt;
	strlcpy(rec->parent_id, r->parent_id, sizeof(rec->parent_id));
}

static int open_log(struct rec *c, char *err, size_t errlen)
{
	const char *db = SBX_LOCALSTATEDIR "/lib/sbx/audit.db";
	const char *key = SBX_LOCALSTATEDIR "/lib/sbx/audit.key";

	if (sbx_key_load_secret(key, c->sk, err, errlen) < 0)
		return -1;
	return sbx_audit_open(db, 0, &c->log, err, errlen);
}

/* ---- output ------------------------------------------------------------ */

static void capture(struct rec *c, struct stream *st, const char *data, size_t n)
{
	uint64_t room = c->r->limits.output_bytes - c->captured;

	st->total += n;
	if (n > room) {
		n = (size_t)room;
		if (!st->truncated) {
			st->truncated = true;
			char k = REC_KILL_OUTPUT;
			(void)!send(c->ctl, &k, 1, MSG_NOSIGNAL);
		}
	}
	if (n == 0)
		return;
	if (st->len + n > st->cap) {
		size_t want = st->cap ? st->cap : 65536;
		while (want < st->len + n)
			want *= 2;
		char *nb = realloc(st->buf, want);
		if (nb == NULL)
			return;
		st->buf = nb;
		st->cap = want;
	}
	memcpy(st->buf + st->len, data, n);
	st->len += n;
	c->captured += n;
}

static void on_alarm(int sig)
{
	(void)sig; /* only interrupts a write(2) */
}

/*
 * The client's fds are its own (a terminal, a pipe) and blocking; their
 * flags are shared with the client, so we cannot make them non-blocking.
 * POLLOUT on a terminal promises less room than we write, so every write
 * is bounded by a timer: a stalled or paused client slows forwarding down
 * but never stops the recorder from draining the sandbox or writing END.
 */
static void forward(struct stream *st)
{
	const struct itimerval arm = {{0, 0}, {0, 200000}}, off = {{0, 0}, {0, 0}};
	size_t n = st->len - st->fwd;
	ssize_t w;

	if (n > 4096)
		n = 4096;
	setitimer(ITIMER_REAL, &arm, NULL);
	w = write(st->out, st->buf + st->fwd, n);
	setitimer(ITIMER_REAL, &off, NULL);
	if (w > 0)
		st->fwd += (size_t)w;
	else if (w < 0 && errno != EINTR && errno != EAGAIN)
		st->client_gone = true;
}

static bool pending(const struct stream *st)
{
	return !st->client_gone && st->fwd < st->len;
}

static void read_end(struct rec *c)
{
	struct run_end e;
	ssize_t n = recv(c->ctl, &e, sizeof(e), 0);

	if (n == (ssize_t)sizeof(e) && e.magic == RUN_END_MAGIC) {
		e.outcome[sizeof(e.outcome) - 1] = '\0';
		e.limit[sizeof(e.limit) - 1] = '\0';
		e.error[sizeof(e.error) - 1] = '\0';
		c->end = e;
	} else {
		memset(&c->end, 0, sizeof(c->end));
		strlcpy(c->end.outcome, "sandbox_error", sizeof(c->end.outcome));
		strlcpy(c->end.error, "supervisor vanished", sizeof(c->end.error));
		c->end.exit_code = -1;
	}
	c->have_end = true;
}

static void pump(struct rec *c)
{
	char buf[65536];
	int64_t flush_deadline = -1;

	for (;;) {
		struct pollfd p[5];
		int n = 0, ix[2] = {-1, -1}, ox[2] = {-1, -1}, cx = -1;

		for (int i = 0; i < 2; i++) {
			if (!c->s[i].eof) {
				ix[i] = n;
				p[n++] = (struct pollfd){.fd = c->s[i].in, .events = POLLIN};
			}
			if (pending(&c->s[i])) {
				ox[i] = n;
				p[n++] = (struct pollfd){.fd = c->s[i].out, .events = POLLOUT};
			}
		}
		if (!c->have_end) {
			cx = n;
			p[n++] = (struct pollfd){.fd = c->ctl, .events = POLLIN};
		}
		bool done = c->s[0].eof && c->s[1].eof && c->have_end;
		if (done && !pending(&c->s[0]) && !pending(&c->s[1]))
			return;
		if (done) {
			/* the run is over; give a stalled client a little time */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (flush_deadline < 0)
				flush_deadline = ts.tv_sec + 10;
			else if (ts.tv_sec >= flush_deadline)
				return;
		}
		if (poll(p, (nfds_t)n, 1000) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++) {
			if (ix[i] >= 0 && p[ix[i]].revents) {
				ssize_t r = read(c->s[i].in, buf, sizeof(buf));
				if (r > 0)
					capture(c, &c->s[i], buf, (size_t)r);
				else if (r == 0 || errno != EINTR)
					c->s[i].eof = true;
			}
			if (ox[i] >= 0 && p[ox[i]].revents) {
				if (p[ox[i]].revents & (POLLERR | POLLHUP | POLLNVAL))
					c->s[i].client_gone = true;
				else
					forward(&c->s[i]);
			}
		}
		if (cx >= 0 && p[cx].revents)
			read_end(c);
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
		int fd, n = recv_fd(c->art, name, sizeof(name) - 1, &fd);

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
		    total + (uint64_t)st.st_size > c->r->limits.out_bytes) {
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

/* ---- records and result ------------------------------------------------ */

static json_t *text_json(const char *data, size_t len)
{
	char *s = sbx_utf8_sanitize(data ? data : "", data ? len : 0);
	json_t *j = json_string(s ? s : "");
	free(s);
	return j;
}

static void excerpt(const struct stream *st, char *out, size_t outlen)
{
	size_t n = st->len < outlen - 1 ? st->len : outlen - 1;
	const char *from = st->buf ? st->buf + st->len - n : "";
	char *clean = sbx_utf8_sanitize(from, n);

	strlcpy(out, clean ? clean : "", outlen);
	free(clean);
}

static json_t *limits_json(const struct sbx_limits *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "wall_time_ms", (json_int_t)l->wall_ms, "cpu_time_ms", (json_int_t)l->cpu_ms,
			 "memory_bytes", (json_int_t)l->memory_bytes, "pids", (json_int_t)l->pids,
			 "cpus", (double)l->cpus_milli / 1000.0, "tmp_bytes", (json_int_t)l->tmp_bytes,
			 "shm_bytes", (json_int_t)l->shm_bytes,
			 "out_bytes", (json_int_t)l->out_bytes, "output_bytes", (json_int_t)l->output_bytes,
			 "file_size_bytes", (json_int_t)l->file_size_bytes, "open_files", (json_int_t)l->open_files,
			 "max_attempts", (json_int_t)l->max_attempts, "input_bytes", (json_int_t)l->input_bytes);
}

/* [{name, size, sha256}] of the input files, once the supervisor has
 * checked them. */
static json_t *inputs_json(const struct run *r)
{
	json_t *a = json_array();
	char sha[65];

	/* the digests START recorded (startfacts.c) */
	for (size_t i = 0; i < r->n_inputs && r->error[0] == '\0'; i++) {
		hex(r->inputs[i].sha256, 32, sha);
		json_array_append_new(a, json_pack("{s:s,s:I,s:s}", "name", r->inputs[i].name, "size",
						   (json_int_t)r->inputs[i].size, "sha256", r->inputs[i].hashed ? sha : ""));
	}
	return a;
}

/* {size, sha256} of the standard input passed to the program, as START
 * recorded it, or null (/dev/null). */
static json_t *stdin_json(const struct run *r)
{
	char sha[65];

	if (!r->stdin_hashed)
		return json_null();
	hex(r->stdin_sha256, 32, sha);
	return json_pack("{s:I,s:s}", "size", (json_int_t)r->stdin_size, "sha256", sha);
}

static json_t *result_json(struct rec *c, json_t *traceback)
{
	const struct run_end *e = &c->end;
	char chain[65], sha[65];
	json_t *arts = json_array(), *j;

	for (size_t i = 0; i < c->n_arts; i++) {
		hex(c->arts[i].sha256, 32, sha);
		json_array_append_new(arts, json_pack("{s:s,s:I,s:s,s:s}", "name", c->arts[i].name,
						      "size", (json_int_t)c->arts[i].size, "media_type",
						      c->arts[i].media_type, "sha256", sha));
	}
	hex(c->chain, 32, chain);
	hex(c->r->code_sha256, 32, sha);
	j = json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:o,s:o,s:b,s:b,s:I,s:I,s:o,s:o,s:I,s:s,s:o,s:I,s:s,s:s,s:s}",
		      "id", c->r->run_id, "outcome", e->outcome,
		      "exit_code", e->exit_code >= 0 ? json_integer(e->exit_code) : json_null(),
		      "signal", e->signal ? json_integer(e->signal) : json_null(),
		      "signal_name", e->signal ? json_string(sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "?") : json_null(),
		      "wall_ms", (json_int_t)e->wall_ms, "cpu_ms", (json_int_t)e->cpu_ms,
		      "memory_peak_bytes", (json_int_t)e->memory_peak_bytes, "pids_peak", (json_int_t)e->pids_peak,
		      "stdout", text_json(c->s[0].buf, c->s[0].len), "stderr", text_json(c->s[1].buf, c->s[1].len),
		      "stdout_truncated", c->s[0].truncated || c->s[0].total > c->s[0].len,
		      "stderr_truncated", c->s[1].truncated || c->s[1].total > c->s[1].len,
		      "stdout_bytes", (json_int_t)c->s[0].total, "stderr_bytes", (json_int_t)c->s[1].total,
		      "traceback", traceback ? traceback : json_null(), "artifacts", arts,
		      "artifacts_skipped", (json_int_t)c->skipped_arts, "policy", c->r->policy.name,
		      "limits", limits_json(&c->r->limits), "attempt", (json_int_t)c->r->attempt,
		      "session", c->r->session, "language", c->r->lang_name, "code_sha256", sha);
	if (j == NULL)
		return NULL;
	json_object_set_new(j, "inputs", inputs_json(c->r));
	json_object_set_new(j, "stdin", stdin_json(c->r));
	json_object_set_new(j, "limit", e->limit[0] ? json_string(e->limit) : json_null());
	{
		json_t *full = json_array();
		if (e->disk_full & DISK_FULL_TMP)
			json_array_append_new(full, json_string("/tmp"));
		if (e->disk_full & DISK_FULL_SHM)
			json_array_append_new(full, json_string("/dev/shm"));
		if (e->disk_full & DISK_FULL_OUT)
			json_array_append_new(full, json_string("/out"));
		json_object_set_new(j, "disk_full", full);
	}
	json_object_set_new(j, "error", e->error[0] ? text_json(e->error, strlen(e->error)) : json_null());
	json_object_set_new(j, "environment", run_env_json(&c->env));
	json_object_set_new(j, "audit", json_pack("{s:I,s:I,s:s}", "start_seq", (json_int_t)c->start_seq,
						  "end_seq", (json_int_t)c->end_seq, "chain", chain));
	return j;
}

static void send_frame(int fd, uint32_t type, const void *data, uint32_t len, int pass_fd)
{
	unsigned char *msg = malloc(8 + (size_t)len);
	uint32_t be[2] = {htonl(type), htonl(len)};

	if (msg == NULL)
		return;
	memcpy(msg, be, 8);
	memcpy(msg + 8, data, len);
	(void)send_fd(fd, msg, 8 + (size_t)len, pass_fd);
	free(msg);
}

void recorder_main(struct run *r, int ctl, int out_r, int err_r, int art)
{
	static struct rec c;
	struct sbx_record start, end;
	char err[SBX_ERR_LEN], chainhex[65];
	json_t *tb = NULL, *res;
	char *text;

	c.r = r;
	c.ctl = ctl;
	c.art = art;
	c.s[0] = (struct stream){.in = out_r, .out = 1};
	c.s[1] = (struct stream){.in = err_r, .out = 2};
	umask(027);
	{
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm; /* no SA_RESTART */
		sigaction(SIGALRM, &sa, NULL);
	}
	openlog("sbx", LOG_PID, LOG_AUTHPRIV);
	if (r->conf.audit_origin[0])
		strlcpy(c.origin, r->conf.audit_origin, sizeof(c.origin));
	else if (gethostname(c.origin, sizeof(c.origin) - 1) < 0)
		strlcpy(c.origin, "localhost", sizeof(c.origin));

	fill_common(&start, r);
	start.kind = SBX_REC_START;
	start.code = r->code;
	start.code_len = r->code_len;
	if (start_fields(&start, r, &c.env, err, sizeof(err)) < 0 || open_log(&c, err, sizeof(err)) < 0 ||
	    sbx_audit_append(c.log, &start, c.sk, c.origin, c.chain, err, sizeof(err)) < 0) {
		char k = REC_START_FAIL;
		warnx1("audit log unavailable, the run was not started: %s", err);
		(void)!send(ctl, &k, 1, MSG_NOSIGNAL);
		_exit(1);
	}
	c.start_seq = start.seq;
	sbx_rext_free(&start.ext);
	if (r->error[0] == '\0') {
		char k = REC_START_OK;
		(void)!send(ctl, &k, 1, MSG_NOSIGNAL);
		pump(&c);
	} else {
		close(out_r);
		close(err_r);
		c.s[0].eof = c.s[1].eof = true;
		read_end(&c);
	}
	collect_artifacts(&c);
	TEST_HOOK("recorder-end");
	if (c.s[1].len > 0)
		tb = sbx_traceback_parse(c.s[1].buf, c.s[1].len, r->lang_name);

	fill_common(&end, r);
	end.kind = SBX_REC_END;
	{
		/* END carries the time the run ended, START the time it began */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		end.realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		clock_gettime(CLOCK_BOOTTIME, &ts);
		end.boottime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	}
	strlcpy(end.outcome, c.end.outcome, sizeof(end.outcome));
	strlcpy(end.limit, c.end.limit, sizeof(end.limit));
	strlcpy(end.error, c.end.error, sizeof(end.error));
	end.exit_code = c.end.exit_code;
	end.signal = c.end.signal;
	end.wall_ms = c.end.wall_ms;
	end.cpu_ms = c.end.cpu_ms;
	end.memory_peak_bytes = c.end.memory_peak_bytes;
	end.stdout_bytes = c.s[0].total;
	end.stderr_bytes = c.s[1].total;
	crypto_hash_sha256(end.stdout_sha256, (const unsigned char *)(c.s[0].buf ? c.s[0].buf : ""), c.s[0].len);
	crypto_hash_sha256(end.stderr_sha256, (const unsigned char *)(c.s[1].buf ? c.s[1].buf : ""), c.s[1].len);
	excerpt(&c.s[1], end.stderr_excerpt, sizeof(end.stderr_excerpt));
	end.artifacts = c.arts;
	end.n_artifacts = c.n_arts;
	if (sbx_audit_append(c.log, &end, c.sk, c.origin, c.chain, err, sizeof(err)) < 0) {
		warnx1("audit: END record: %s", err);
		syslog(LOG_ERR, "run=%s END record not written: %s", r->run_id, err);
		_exit(1);
	}
	/* After every END, so that every finished run can be proven; after it,
	 * not inside it: a failed checkpoint costs only its own freshness
	 * (verify warns about the tail), never the run's record. */
	if (sbx_audit_checkpoint(c.log, c.sk, c.origin, 0, 0, NULL, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint not written: %s", r->run_id, err);
	sodium_memzero(c.sk, sizeof(c.sk));
	c.end_seq = end.seq;
	hex(c.chain, 32, chainhex);
	/* a remote syslog that keeps these lines witnesses the chain */
	syslog(LOG_INFO, "run=%s user=%s uid=%u policy=%s lang=%s outcome=%s exit=%d seq=%" PRIu64 " chain=%s",
	       r->run_id, r->user, (unsigned)r->uid, r->policy.name, r->lang_name, c.end.outcome,
	       c.end.exit_code, c.end_seq, chainhex);
	sbx_audit_close(c.log);

	res = result_json(&c, tb);
	text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	for (size_t i = 0; i < c.n_arts; i++) {
		send_frame(r->result_fd, SBX_FRAME_ARTIFACT, c.arts[i].name, (uint32_t)strlen(c.arts[i].name),
			   c.art_fd[i]);
		close(c.art_fd[i]);
	}
	if (text != NULL)
		send_frame(r->result_fd, SBX_FRAME_RESULT, text, (uint32_t)strlen(text), -1);
	close(r->result_fd);
	_exit(0);
}
