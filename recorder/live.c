/* SPDX-License-Identifier: ISC */
/*
 * A live session's calls, as _sbx (proto.h "live sessions", sbx(1)
 * SESSIONS). The sandbox is the session's run, built by the supervisor as
 * any run's; its payload is the driver (sandbox/python/sbx_live.py), which
 * reads calls from the call channel. Every call reaches the driver from
 * here only, after its START (cell N, its code) is committed: no commit,
 * no call. Its END (outcome, wall time as measured here, output digests,
 * traceback) follows when the driver says it is over or the session dies.
 * The driver is the sandbox's: what it says is bounded by our own clock
 * (KeyboardInterrupt at wall_time, the session killed LIVE_GRACE_MS later).
 */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <bsd/string.h>
#include <jansson.h>
#include <sodium.h>

#include "clock.h"
#include "fdio.h"
#include "version.h"
#include "log.h"
#include "outcome.h"
#include "proto.h"
#include "recorder.h"
#include "recfield.h"
#include "rundesc.h"
#include "startfacts.h"
#include "traceback.h"
#include "unconst.h"

#define LIVE_GRACE_MS 2000 /* from a call's wall_time (or a stop) to the session's kill */
#define LIVE_REQ_MS 2000   /* a connection's request arrives within this, or is dropped */
#define LIVE_FLUSH_MS 1000 /* a call's client gets this long to take its result */
#define LIVE_DRAIN_MS 200  /* what a refused connection sent is taken this long */
#define LIVE_LATE_MS 500   /* past wall_time, our interrupt follows the driver's own timer */
#define LIVE_REFUSALS_PER_MIN 20 /* REFUSED records a session writes a minute; the rest syslog and count */

struct call {
	struct rec r;  /* the call's own view: its code, output, END, result */
	struct sbx_run_desc d; /* the session's, with the call's wall_time and cpu_time */
	bool active, client_gone, interrupted, killed, restarted;
	uint64_t t0, deadline, hard; /* sbx_mono_ms() */
};

struct live {
	struct rec *c;
	int lsock, ch;
	bool ch_eof, stopping;
	uint64_t cells, idle_at, stop_kill, started;
	uint64_t life_at; /* before the supervisor's live_lifetime: we stop it first */
	union {
		uint32_t magic;
		struct sbx_live_done done;
		struct sbx_live_art art;
	} m;              /* the driver's message being read */
	size_t got;
	int fds[8];       /* descriptors that came with it, in order */
	size_t n_fds;
	struct call k;
	int mem_fd[2]; /* the session's memory now and peak (SBX_REC_MSG_CGROUP), or -1 */
	uint64_t refused_window, refused_in_window, refused_unrecorded;
};

static uint64_t now_ms(void) { return (uint64_t)sbx_mono_ms(); }

/* One number from the session's memory cgroup; 0 when unknown. */
static uint64_t cg_u64(int fd)
{
	char buf[64];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* The session's memory now and its peak so far (its cgroup's accounting,
 * the same the supervisor reads for a run's END). */
static void memory_now(const struct live *L, uint64_t *cur, uint64_t *peak)
{
	*cur = cg_u64(L->mem_fd[0]);
	*peak = cg_u64(L->mem_fd[1]);
}

/* The supervisor's messages: the session's cgroup (once), else its END. */
static void take_ctl(struct live *L)
{
	struct sbx_msg_hdr h;
	ssize_t n = recv(L->c->ctl, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);

	if (n == (ssize_t)sizeof(h) && h.magic == SBX_MSG_MAGIC && h.type == SBX_REC_MSG_CGROUP) {
		struct sbx_live_cgroup g;
		char err[128], cbuf[CMSG_SPACE(2 * sizeof(int))];
		struct iovec iov = {.iov_base = &g, .iov_len = sizeof(g)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
		int fds[2] = {-1, -1};

		n = recvmsg(L->c->ctl, &m, MSG_TRUNC | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
		if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(fds)))
			memcpy(fds, CMSG_DATA(c), sizeof(fds));
		if (n > 0 && sbx_live_cgroup_check(&g, (size_t)n, err, sizeof(err)) == 0 && fds[0] >= 0 &&
		    L->mem_fd[0] < 0) {
			L->mem_fd[0] = fds[0];
			L->mem_fd[1] = fds[1];
		} else {
			for (int i = 0; i < 2; i++)
				if (fds[i] >= 0)
					close(fds[i]);
		}
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	rec_read_end(L->c);
}

static void answer(int fd, uint32_t type, const char *text);

/*
 * A request that reached the session (its recorder, under its policy) and
 * was refused: one REFUSED record, as a refusal before a policy is
 * (recorder.c refused_run): who asked (the peer's uid), the session and
 * its policy asked for, why (an error code of sbx(1)) and the words the
 * peer gets, the code's digest when it sent a sealed memfd. Its own run
 * id; the session by name and id in the message. At most
 * LIVE_REFUSALS_PER_MIN a minute, so that another user cannot fill the
 * log through someone's session: the rest go to syslog, counted in the
 * next record (unrecorded_refusals).
 */
static void refuse(struct live *L, int fd, uid_t uid, const char *code, const char *msg, int codefd)
{
	const struct sbx_run_desc *d = L->c->d;
	struct sbx_record rec;
	char err[SBX_ERR_LEN], text[SBX_DESC_ERR_LEN];
	unsigned char rid[16];
	uint64_t now = now_ms();
	struct timespec ts;

	/* "refused: CODE: ..." is how the client knows the status (finish.c) */
	snprintf(text, sizeof(text), "refused: %s: session %s (%s): %s", code, d->session, d->run_id, msg);
	if (now - L->refused_window >= 60000) {
		L->refused_window = now;
		L->refused_in_window = 0;
	}
	if (L->refused_in_window >= LIVE_REFUSALS_PER_MIN) {
		L->refused_unrecorded++;
		syslog(LOG_WARNING, "run=%s session=%s uid=%u refused=%s (not recorded: %u a minute)", d->run_id,
		       d->session, (unsigned)uid, code, LIVE_REFUSALS_PER_MIN);
		answer(fd, SBX_FRAME_MESSAGE, text);
		return;
	}
	L->refused_in_window++;
	rec_fill_common(&rec, L->c);
	rec.kind = SBX_REC_REFUSED;
	randombytes_buf(rid, sizeof(rid));
	sbx_hex(rid, sizeof(rid), rec.run_id);
	clock_gettime(CLOCK_REALTIME, &ts);
	rec.realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	rec.boottime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	rec.uid = (uint32_t)uid;
	if (uid != d->uid) {
		struct passwd *pw = getpwuid(uid);
		rec.gid = pw != NULL ? (uint32_t)pw->pw_gid : 0;
		snprintf(rec.user, sizeof(rec.user), "%s", pw != NULL ? pw->pw_name : "");
	}
	rec.policy[0] = rec.language[0] = '\0';
	memset(rec.policy_sha256, 0, 32);
	rec.argv_len = 0;
	memset(rec.code_sha256, 0, 32);
	rec.attempt = 0;
	rec.parent_id[0] = '\0';
	struct stat st;
	int seals = codefd >= 0 ? fcntl(codefd, F_GET_SEALS) : -1;
	bool hashed = codefd >= 0 && fstat(codefd, &st) == 0 && S_ISREG(st.st_mode) && seals >= 0 &&
		      (seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) ==
			      (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) &&
		      (uint64_t)st.st_size <= SBX_CODE_MAX &&
		      hash_sealed(codefd, (uint64_t)st.st_size, "code", rec.code_sha256, err, sizeof(err)) == 0;
	if (sbx_rec_put_str(&rec, SBX_F_REQ_POLICY, d->policy, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_REQ_LANGUAGE, d->language, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_REFUSAL, code, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_REFUSAL_MSG, text, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_SBX_VERSION, SBX_VERSION, err, sizeof(err)) < 0 ||
	    (hashed && sbx_rec_put_u64(&rec, SBX_F_CODE_BYTES, (uint64_t)st.st_size, err, sizeof(err)) < 0) ||
	    (L->refused_unrecorded > 0 &&
	     sbx_rec_put_u64(&rec, SBX_F_UNRECORDED, L->refused_unrecorded, err, sizeof(err)) < 0) ||
	    rec_log_append(L->c->log, &rec, L->c->chain, err, sizeof(err)) < 0) {
		syslog(LOG_ERR, "run=%s session=%s uid=%u REFUSED record not written: %s", d->run_id, d->session,
		       (unsigned)uid, err);
	} else {
		L->refused_unrecorded = 0;
		syslog(LOG_INFO, "run=%s session=%s uid=%u refused=%s seq=%" PRIu64, d->run_id, d->session,
		       (unsigned)uid, code, rec.seq);
		if (rec_log_checkpoint(L->c->log, d, err, sizeof(err)) < 0)
			syslog(LOG_WARNING, "run=%s checkpoint not written: %s", d->run_id, err);
	}
	sbx_rext_free(&rec.ext);
	answer(fd, SBX_FRAME_MESSAGE, text);
}

int live_listen(const struct sbx_run_desc *d, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int n, fd;

	if (d->session[0] == '\0') {
		strlcpy(err, "a live session needs a name (--session)", errlen);
		return -1;
	}
	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, SBX_LIVE_PREFIX "%u/%s", (unsigned)d->uid, d->session);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || n < 0 || (size_t)n >= sizeof(a.sun_path) - 1 ||
	    bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    listen(fd, 16) < 0) {
		snprintf(err, errlen, "%s", errno == EADDRINUSE ? "already live (sbx session stop it first)"
								 : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One frame to a connection, then close it: after what the peer sent is
 * taken (at most LIVE_DRAIN_MS), so that the close is no reset that would
 * cost the peer our answer. */
static void answer(int fd, uint32_t type, const char *text)
{
	struct outq q;
	char buf[256];
	uint64_t until_ms = (uint64_t)sbx_mono_ms() + LIVE_DRAIN_MS;

	outq_init(&q, fd);
	outq_frame(&q, type, text, strlen(text), -1);
	outq_flush(&q, sbx_mono_ms() + LIVE_FLUSH_MS);
	free(q.items);
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = (int64_t)(until_ms - (uint64_t)sbx_mono_ms());
		char cbuf[CMSG_SPACE(sizeof(int) * 4)];
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};

		if (left <= 0 || poll(&p, 1, (int)left) != 1 || recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			break;
		for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h != NULL; h = CMSG_NXTHDR(&m, h))
			if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
					int f;
					memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
					close(f);
				}
	}
	close(fd);
}

static void status_answer(struct live *L, int fd)
{
	uint64_t cur, peak;

	memory_now(L, &cur, &peak);
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:I}", "session", L->c->d->session, "id",
			      L->c->d->run_id, "session_state", L->stopping ? "stopping" : "live", "cells",
			      (json_int_t)L->cells, "idle_ms",
			      (json_int_t)(L->k.active ? 0 : now_ms() - (L->idle_at - L->c->d->limits.live_idle_ms)),
			      "uptime_ms", (json_int_t)(now_ms() - L->started), "memory_bytes",
			      L->mem_fd[0] >= 0 ? json_integer((json_int_t)cur) : json_null(), "memory_peak_bytes",
			      L->mem_fd[1] >= 0 ? json_integer((json_int_t)peak) : json_null(), "memory_limit_bytes",
			      (json_int_t)L->c->d->limits.memory_bytes);
	char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;

	answer(fd, SBX_FRAME_RESULT, t ? t : "{}");
	free(t);
	json_decref(j);
}

static void interrupt_driver(struct live *L);

/* Close the call channel: the driver ends at EOF; killed if it does not.
 * A running call is interrupted first (and recorded with the state). */
static void stop(struct live *L, const char *state)
{
	if (L->stopping)
		return;
	if (L->k.active && !L->k.interrupted)
		interrupt_driver(L);
	L->stopping = true;
	strlcpy(L->c->session_state, state, sizeof(L->c->session_state));
	shutdown(L->ch, SHUT_WR);
	L->stop_kill = now_ms() + LIVE_GRACE_MS;
}

static void interrupt_driver(struct live *L)
{
	struct sbx_live_call h = {.magic = SBX_LIVE_CALL_MAGIC};

	L->k.interrupted = true;
	(void)!send(L->ch, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void free_streams(struct rec *r)
{
	for (int i = 0; i < 2; i++) {
		free(r->s[i].cap.buf);
		free(r->s[i].tail);
	}
	free(r->code);
	free(r->arts);
	free(r->art_truncated);
	free(r->skipped);
	r->arts = NULL;
	r->art_truncated = NULL;
	r->skipped = NULL;
}

/* The call's END (its outcome in k->r.end), its result, its client closed. */
static void end_call(struct live *L, const char *state)
{
	struct call *k = &L->k;
	struct sbx_record end;
	char err[SBX_ERR_LEN];
	json_t *tb = NULL, *res;

	k->r.end.wall_ms = now_ms() - k->t0;
	rec_finish_tail(&k->r, &k->r.s[0]);
	rec_finish_tail(&k->r, &k->r.s[1]);
	if ((k->r.s[0].truncated || k->r.s[1].truncated) && k->r.end.limit == SBX_LIMIT_NONE)
		k->r.end.limit = SBX_LIMIT_OUTPUT;
	strlcpy(k->r.session_state, state, sizeof(k->r.session_state));
	if (k->r.s[1].cap.len > 0)
		tb = sbx_traceback_parse(k->r.s[1].cap.buf, k->r.s[1].cap.len, L->c->d->language);
	rec_fill_end(&k->r, &end);
	if (sbx_rec_put_u64(&end, SBX_F_CELL, k->r.cell, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&end, SBX_F_SESSION_STATE, state, err, sizeof(err)) < 0 ||
	    rec_log_append(L->c->log, &end, L->c->chain, err, sizeof(err)) < 0) {
		/* a call without its END must be the last: the session stops */
		rec_message(&k->r, "audit: END record of cell %llu: %s; the session stops",
			    (unsigned long long)k->r.cell, err);
		syslog(LOG_ERR, "run=%s cell=%llu END record not written: %s", L->c->d->run_id,
		       (unsigned long long)k->r.cell, err);
		stop(L, "died: audit");
	} else {
		/* the result's audit key: this call's records, the chain after them */
		k->r.end_seq = end.seq;
		memcpy(k->r.chain, L->c->chain, sizeof(k->r.chain));
	}
	sbx_rext_free(&end.ext);
	if (rec_log_checkpoint(L->c->log, L->c->d, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint not written: %s", L->c->d->run_id, err);
	res = result_json(&k->r, tb);
	char *text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	if (text != NULL)
		outq_frame_take(&k->r.q, SBX_FRAME_RESULT, text, strlen(text));
	outq_flush(&k->r.q, sbx_mono_ms() + LIVE_FLUSH_MS);
	json_decref(res); /* result_json released tb */
	free(k->r.q.items);
	close(k->r.q.sock);
	free_streams(&k->r);
	k->active = false;
	L->idle_at = now_ms() + L->c->d->limits.live_idle_ms;
}

static void end_as(struct live *L, enum sbx_outcome o, int limit, int code, int sig, const char *state)
{
	struct sbx_run_end *e = &L->k.r.end;

	e->outcome = (uint32_t)o;
	e->limit = limit;
	e->exit_code = code;
	e->signal = sig;
	end_call(L, state);
}

/* The driver's word that the call is over. */
static void call_done(struct live *L)
{
	const struct sbx_live_done *d = &L->m.done;

	if (d->magic != SBX_LIVE_DONE_MAGIC || !L->k.active || d->cell != L->k.r.cell) {
		syslog(LOG_WARNING, "run=%s: the driver sent a malformed reply: session stopped", L->c->d->run_id);
		stop(L, "died: protocol");
		return;
	}
	/* a session stopping under the call (stop, lifetime) says so */
	const char *st = L->stopping ? L->c->session_state : L->k.restarted ? "restarted" : "live";
	uint64_t cur, peak;

	L->k.r.end.cpu_ms = d->cpu_ms;
	/* the session's peak up to the call's end: the call's own peak when
	 * it set the session's, else an upper bound of it (a cgroup's peak
	 * cannot be reset without root) */
	memory_now(L, &cur, &peak);
	L->k.r.end.memory_peak_bytes = peak;
	switch (d->status) {
	case SBX_LIVE_OK: end_as(L, SBX_OUTCOME_OK, SBX_LIMIT_NONE, 0, 0, st); break;
	case SBX_LIVE_WALL: end_as(L, SBX_OUTCOME_TIMEOUT, SBX_LIMIT_WALL_TIME, SBX_EXIT_TIMEOUT, 0, st); break;
	case SBX_LIVE_CPU: end_as(L, SBX_OUTCOME_CPU_LIMIT, SBX_LIMIT_CPU_TIME, SBX_EXIT_TIMEOUT, 0, st); break;
	case SBX_LIVE_INTERRUPT: end_as(L, SBX_OUTCOME_SIGNAL, SBX_LIMIT_NONE, -1, 2, st); break;
	case SBX_LIVE_EXIT:
		stop(L, "exited");
		end_as(L, SBX_OUTCOME_OK, SBX_LIMIT_NONE, 0, 0, "exited");
		break;
	default: end_as(L, SBX_OUTCOME_ERROR, SBX_LIMIT_NONE, 1, 0, st); break;
	}
}

static int read_call_code(struct call *k, int fd, char *err, size_t errlen)
{
	const int need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || seals < 0 || (seals & need) != need) {
		strlcpy(err, "the code is not a sealed memfd", errlen);
		return -1;
	}
	if ((uint64_t)st.st_size > SBX_CODE_MAX) {
		snprintf(err, errlen, "the code is %lld bytes, more than %u", (long long)st.st_size, SBX_CODE_MAX);
		return -1;
	}
	k->r.code = malloc((size_t)st.st_size + 1);
	if (k->r.code == NULL || pread(fd, k->r.code, (size_t)st.st_size, 0) != st.st_size) {
		strlcpy(err, "the code could not be read", errlen);
		return -1;
	}
	k->r.code_len = (size_t)st.st_size;
	k->r.code[k->r.code_len] = '\0';
	crypto_hash_sha256(k->r.code_sha256, (const unsigned char *)k->r.code, k->r.code_len);
	return 0;
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The call header, its code and its inputs to the driver (proto.h). */
static int send_call(struct live *L, const struct sbx_live_call *h, const struct sbx_live_input *in,
		     const int *infds, const uint64_t *sizes)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MAX_INPUTS)];
	struct iovec iov = {.iov_base = sbx_unconst(h), .iov_len = sizeof(*h)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t w;

	if (h->n_inputs > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * h->n_inputs);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * h->n_inputs);
		memcpy(CMSG_DATA(c), infds, sizeof(int) * h->n_inputs);
	}
	do
		w = sendmsg(L->ch, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w <= 0 || (w < (ssize_t)sizeof(*h) && send_all(L->ch, (const char *)h + w, sizeof(*h) - (size_t)w) < 0) ||
	    send_all(L->ch, L->k.r.code, L->k.r.code_len) < 0)
		return -1;
	for (uint32_t i = 0; i < h->n_inputs; i++) {
		struct sbx_live_input_file f;
		memset(&f, 0, sizeof(f));
		memcpy(f.name, in[i].name, sizeof(f.name));
		f.size = sizes[i];
		if (send_all(L->ch, &f, sizeof(f)) < 0)
			return -1;
	}
	return 0;
}

/* START of the call committed (its code, its inputs with their SHA-256),
 * then the code and the inputs to the driver. */
static void start_call(struct live *L, int fd, const struct sbx_live_req *q, int codefd,
		       const struct sbx_live_input *in, const int *infds, const uint64_t *sizes)
{
	struct call *k = &L->k;
	struct rec *c = L->c;
	struct sbx_record start;
	struct timespec ts;
	char err[SBX_ERR_LEN];

	k->r = *c;
	k->d = *c->d;
	/* per call: at most the policy's (tighten-only, like sbx run's) */
	if (q->wall_ms && q->wall_ms < k->d.limits.wall_ms)
		k->d.limits.wall_ms = q->wall_ms;
	if (q->cpu_ms && q->cpu_ms < k->d.limits.cpu_ms)
		k->d.limits.cpu_ms = q->cpu_ms;
	k->r.d = &k->d;
	outq_init(&k->r.q, fd);
	for (int i = 0; i < 2; i++)
		k->r.s[i] = (struct stream){.in = c->s[i].in, .frame = c->s[i].frame};
	k->r.captured = 0;
	k->r.n_arts = 0;
	k->r.n_skipped = k->r.skipped_arts = 0;
	k->r.art_total = 0;
	memset(k->r.skipped_why, 0, sizeof(k->r.skipped_why));
	memset(&k->r.end, 0, sizeof(k->r.end));
	k->r.end.limit = SBX_LIMIT_NONE;
	k->r.code = NULL;
	k->r.session_state[0] = '\0';
	rec_artifacts_init(&k->r); /* the call's own, from its driver */
	k->client_gone = k->interrupted = k->killed = false;
	if (codefd < 0 || read_call_code(k, codefd, err, sizeof(err)) < 0) {
		rec_message(&k->r, "session %s: %s", c->d->session, codefd < 0 ? "no code" : err);
		outq_flush(&k->r.q, sbx_mono_ms() + LIVE_FLUSH_MS);
		free_streams(&k->r);
		free(k->r.q.items);
		close(fd);
		return;
	}
	/* the result lists the call's inputs (result.c) */
	k->d.n_inputs = q->n_inputs;
	k->d.inputs_bytes = 0;
	for (uint32_t i = 0; i < q->n_inputs; i++) {
		memcpy(k->d.inputs[i].name, in[i].name, sizeof(k->d.inputs[i].name));
		k->d.inputs[i].size = sizes[i];
		k->d.inputs_bytes += sizes[i];
	}
	k->r.cell = L->cells + 1;
	/* the caller's word that this is the first call after its restart */
	k->restarted = (q->flags & SBX_LIVE_F_RESTARTED) && k->r.cell == 1;
	rec_fill_common(&start, &k->r);
	start.kind = SBX_REC_START;
	clock_gettime(CLOCK_REALTIME, &ts);
	start.realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	start.boottime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	start.code = k->r.code;
	start.code_len = k->r.code_len;
	int bad = sbx_rec_put_u64(&start, SBX_F_CELL, k->r.cell, err, sizeof(err));
	/* the call's inputs, as a run's START lists them (startfacts.c) */
	for (uint32_t i = 0; bad == 0 && i < q->n_inputs; i++) {
		unsigned char sha[32];
		char what[96];
		snprintf(what, sizeof(what), "input %s", in[i].name);
		struct sbx_fval v[3] = {
			{.type = SBX_FT_STR, .p = (const unsigned char *)in[i].name, .n = strlen(in[i].name)},
			{.type = SBX_FT_U64, .u = sizes[i]},
			{.type = SBX_FT_DIGEST, .p = sha, .n = 32},
		};
		bad = hash_sealed(infds[i], sizes[i], what, sha, err, sizeof(err)) < 0 ||
		      sbx_rec_add_item(&start, SBX_F_INPUTS, v, 3, err, sizeof(err)) < 0;
		if (bad == 0 && i < SBX_MAX_INPUTS)
			memcpy(k->r.input_sha256[i], sha, 32);
	}
	if (bad != 0 || rec_log_append(c->log, &start, c->chain, err, sizeof(err)) < 0) {
		sbx_rext_free(&start.ext);
		rec_message(&k->r, "audit log unavailable, the call was not run: %s", err);
		outq_flush(&k->r.q, sbx_mono_ms() + LIVE_FLUSH_MS);
		free_streams(&k->r);
		free(k->r.q.items);
		close(fd);
		return;
	}
	sbx_rext_free(&start.ext);
	k->r.start_seq = start.seq;
	k->r.end_seq = 0;
	L->cells = k->r.cell;
	k->active = true;
	k->t0 = now_ms();
	k->deadline = k->t0 + start.limits.wall_ms + LIVE_LATE_MS;
	k->hard = k->deadline + LIVE_GRACE_MS;
	outq_frame(&k->r.q, SBX_FRAME_STARTED, c->d->run_id, strlen(c->d->run_id), -1);
	struct sbx_live_call h = {.magic = SBX_LIVE_CALL_MAGIC,
				  .cell = (uint32_t)k->r.cell,
				  .wall_ms = start.limits.wall_ms,
				  .cpu_ms = start.limits.cpu_ms,
				  .len = (uint32_t)k->r.code_len,
				  .n_inputs = q->n_inputs};
	if (send_call(L, &h, in, infds, sizes) < 0) {
		strlcpy(k->r.end.error, "the session's driver did not take the call", sizeof(k->r.end.error));
		rec_reply(c, SBX_REPLY_KILL_CALL);
		k->killed = true;
	}
}

/* a file name under /in, as the helper's --input-name (helper/args.c) */
static bool input_name_ok(const char *s)
{
	if (s[0] == '\0' || s[0] == '.')
		return false;
	for (size_t i = 0; s[i]; i++)
		if (i >= SBX_TOKEN_MAX || !(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* The call's inputs as the helper checks a run's (inputs.c): sealed
 * memfds, names valid and unique, together at most input_size. NULL, or
 * the error code with why in msg. */
static const char *check_inputs(struct live *L, struct sbx_live_input *in, const int *fds, size_t n, uint64_t *sizes,
				char *msg, size_t msglen)
{
	const int need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int seals = fcntl(fds[i], F_GET_SEALS);

		in[i].name[sizeof(in[i].name) - 1] = '\0';
		if (!input_name_ok(in[i].name)) {
			snprintf(msg, msglen, "input %zu: '%s' is not a file name for /in", i + 1, in[i].name);
			return "usage";
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(in[j].name, in[i].name) == 0) {
				snprintf(msg, msglen, "input %s given twice", in[i].name);
				return "usage";
			}
		if (fstat(fds[i], &st) < 0 || !S_ISREG(st.st_mode) || seals < 0 || (seals & need) != need) {
			snprintf(msg, msglen, "input %s is not a sealed memfd", in[i].name);
			return "usage";
		}
		sizes[i] = (uint64_t)st.st_size;
		total += sizes[i];
	}
	if (total > L->c->d->limits.input_bytes) {
		snprintf(msg, msglen, "the inputs are %llu bytes, more than input_size %llu bytes of policy '%s'",
			 (unsigned long long)total, (unsigned long long)L->c->d->limits.input_bytes, L->c->d->policy);
		return "input_too_large";
	}
	return NULL;
}

/* A new connection: the session's owner only; one request. */
static void take_conn(struct live *L, int fd)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	static struct {
		struct sbx_live_req q;
		struct sbx_live_input in[SBX_MAX_INPUTS];
	} b;
	char cbuf[CMSG_SPACE(sizeof(int) * (SBX_MAX_INPUTS + 1))];
	int fds[SBX_MAX_INPUTS + 1];
	size_t nfd = 0, got = 0, want = sizeof(b.q);
	bool trunc = false, other;
	uint64_t req_until;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
		close(fd);
		return;
	}
	/* another user gets no more of the session's time than a refused
	 * connection's drain */
	other = cr.uid != L->c->d->uid;
	req_until = now_ms() + (other ? LIVE_DRAIN_MS : LIVE_REQ_MS);
	memset(&b, 0, sizeof(b));
	while (got < want) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = (int64_t)(req_until - now_ms());
		struct iovec iov = {.iov_base = (char *)&b + got, .iov_len = want - got};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) != 1)
			break;
		n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		trunc |= (m.msg_flags & MSG_CTRUNC) != 0;
		for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h != NULL; h = CMSG_NXTHDR(&m, h))
			if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
					int f;
					memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
					if (nfd < sizeof(fds) / sizeof(fds[0]))
						fds[nfd++] = f;
					else {
						close(f);
						trunc = true;
					}
				}
		got += (size_t)n;
		if (got == sizeof(b.q) && want == sizeof(b.q) && b.q.magic == SBX_LIVE_MAGIC &&
		    b.q.version == SBX_LIVE_VERSION && b.q.op == SBX_LIVE_CALL && b.q.n_inputs <= SBX_MAX_INPUTS)
			want += b.q.n_inputs * sizeof(b.in[0]);
	}
	int codefd = nfd > 0 ? fds[0] : -1;
	if (other) {
		syslog(LOG_WARNING, "run=%s session=%s: uid %u refused (the session is uid %u's)", L->c->d->run_id,
		       L->c->d->session, (unsigned)cr.uid, (unsigned)L->c->d->uid);
		refuse(L, fd, cr.uid, "policy_denied", "this session belongs to another user: refused", codefd);
	} else if (got < sizeof(b.q) || trunc || b.q.magic != SBX_LIVE_MAGIC || b.q.version != SBX_LIVE_VERSION) {
		answer(fd, SBX_FRAME_MESSAGE, "not a live-session request (sbx version mismatch?)");
	} else if (b.q.op == SBX_LIVE_STATUS) {
		status_answer(L, fd);
	} else if (b.q.op == SBX_LIVE_STOP) {
		stop(L, "stopped");
		status_answer(L, fd);
	} else if (b.q.op == SBX_LIVE_CALL && L->stopping) {
		refuse(L, fd, cr.uid, "session_ended", "the session is stopping: no more calls", codefd);
	} else if (b.q.op == SBX_LIVE_CALL) {
		uint64_t sizes[SBX_MAX_INPUTS] = {0};
		char why[SBX_DESC_ERR_LEN];
		const char *code = NULL;

		if (got < want || b.q.n_inputs > SBX_MAX_INPUTS || nfd != 1 + (size_t)b.q.n_inputs) {
			snprintf(why, sizeof(why), "the request's %u inputs did not all arrive", (unsigned)b.q.n_inputs);
			code = "usage";
		} else {
			code = check_inputs(L, b.in, fds + 1, b.q.n_inputs, sizes, why, sizeof(why));
		}
		if (code != NULL)
			refuse(L, fd, cr.uid, code, why, codefd);
		else
			start_call(L, fd, &b.q, codefd, b.in, fds + 1, sizes);
	} else {
		answer(fd, SBX_FRAME_MESSAGE, "unknown live-session request");
	}
	for (size_t i = 0; i < nfd; i++)
		close(fds[i]);
}

/* Output of the sandbox: the running call's, else the session's own. */
static void take_output(struct live *L, int i, bool drain)
{
	static char buf[65536];
	struct rec *r = L->k.active ? &L->k.r : L->c;

	do {
		ssize_t n = recv(L->c->s[i].in, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			n = read(L->c->s[i].in, buf, sizeof(buf));
		if (n > 0) {
			rec_capture(r, &r->s[i], buf, (size_t)n);
			continue;
		}
		if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			L->c->s[i].eof = true;
		break;
	} while (drain);
}

static void drop_fds(struct live *L)
{
	while (L->n_fds > 0)
		close(L->fds[--L->n_fds]);
}

/* One of the call's /out files (driver -> recorder), as the collector's. */
static void call_artifact(struct live *L)
{
	char name[SBX_PATH_MAX_ART + 1];
	int fd = L->n_fds > 0 ? L->fds[0] : -1;

	if (L->n_fds > 0)
		memmove(L->fds, L->fds + 1, --L->n_fds * sizeof(int));
	memcpy(name, L->m.art.name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	if (fd < 0 || !L->k.active || L->m.art.cell != L->k.r.cell) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rec_take_artifact(&L->k.r, name, fd);
}

static void take_reply(struct live *L)
{
	size_t want = L->got < sizeof(uint32_t) ? sizeof(uint32_t)
		      : L->m.magic == SBX_LIVE_ART_MAGIC ? sizeof(L->m.art) : sizeof(L->m.done);
	char cbuf[CMSG_SPACE(sizeof(int) * 8)];
	struct iovec iov = {.iov_base = (char *)&L->m + L->got, .iov_len = want - L->got};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ssize_t n = recvmsg(L->ch, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
		L->ch_eof = true;
		return;
	}
	if (n < 0)
		return;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h != NULL; h = CMSG_NXTHDR(&mh, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int f;
				memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
				if (L->n_fds < sizeof(L->fds) / sizeof(L->fds[0]))
					L->fds[L->n_fds++] = f;
				else
					close(f);
			}
	L->got += (size_t)n;
	if (L->got == sizeof(uint32_t) && L->m.magic != SBX_LIVE_ART_MAGIC && L->m.magic != SBX_LIVE_DONE_MAGIC) {
		L->got = 0;
		drop_fds(L);
		syslog(LOG_WARNING, "run=%s: the driver sent a malformed message: session stopped", L->c->d->run_id);
		stop(L, "died: protocol");
		return;
	}
	if (L->got < sizeof(uint32_t) || L->got < (L->m.magic == SBX_LIVE_ART_MAGIC ? sizeof(L->m.art) : sizeof(L->m.done)))
		return;
	L->got = 0;
	if (L->m.magic == SBX_LIVE_ART_MAGIC) {
		call_artifact(L);
		return;
	}
	drop_fds(L);
	/* what the call printed before it ended is in the pipes by now */
	for (int i = 0; i < 2; i++)
		if (!L->c->s[i].eof) {
			int fl = fcntl(L->c->s[i].in, F_GETFL);
			fcntl(L->c->s[i].in, F_SETFL, fl | O_NONBLOCK);
			take_output(L, i, true);
			fcntl(L->c->s[i].in, F_SETFL, fl);
		}
	call_done(L);
}

static void client_bytes(struct live *L)
{
	unsigned char b[64];
	ssize_t n = recv(L->k.r.q.sock, b, sizeof(b), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* the caller is gone: nobody wants the call; it is still recorded */
		L->k.client_gone = true;
		if (!L->k.interrupted)
			interrupt_driver(L);
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if ((b[i] == SBX_CONTROL_INTERRUPT || b[i] == SBX_CONTROL_TERMINATE) && !L->k.interrupted)
			interrupt_driver(L);
}

static int until(uint64_t at, uint64_t now, int wait)
{
	if (at == 0)
		return wait;
	if (at <= now)
		return 0;
	return wait < 0 || at - now < (uint64_t)wait ? (int)(at - now) : wait;
}

void live_serve(struct rec *c, int lsock)
{
	static struct live L;
	struct timeval tv = {.tv_sec = 5};

	L.c = c;
	L.lsock = lsock;
	L.mem_fd[0] = L.mem_fd[1] = -1;
	L.ch = SBX_REC_FD_STDIN;
	L.started = now_ms();
	L.idle_at = L.started + c->d->limits.live_idle_ms;
	{
		uint64_t life = c->d->limits.live_lifetime_ms, early = life / 2 < 1000 ? life / 2 : 1000;
		L.life_at = L.started + life - early;
	}
	/* the driver takes a call at once when it is idle; one that does not
	 * within 5 s ends the session (start_call) */
	setsockopt(L.ch, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (!(c->have_end && c->s[0].eof && c->s[1].eof)) {
		struct pollfd p[8];
		int n = 0, ix[8], wait = -1;
		uint64_t now = now_ms();
		enum { P_LISTEN, P_CH, P_OUT, P_ERR, P_CTL, P_CALL, P_SESSQ, P_N };

		for (int i = 0; i < P_N; i++)
			ix[i] = -1;
#define ADD(slot, f, ev) (ix[slot] = n, p[n++] = (struct pollfd){.fd = (f), .events = (ev)})
		if (!L.k.active && !L.stopping && !c->have_end)
			ADD(P_LISTEN, lsock, POLLIN);
		if (!L.ch_eof)
			ADD(P_CH, L.ch, POLLIN);
		if (!c->s[0].eof)
			ADD(P_OUT, c->s[0].in, POLLIN);
		if (!c->s[1].eof)
			ADD(P_ERR, c->s[1].in, POLLIN);
		if (!c->have_end)
			ADD(P_CTL, c->ctl, POLLIN);
		if (L.k.active && !L.k.client_gone)
			ADD(P_CALL, L.k.r.q.sock, POLLIN | (outq_pending(&L.k.r.q) ? POLLOUT : 0));
		if (outq_pending(&c->q))
			ADD(P_SESSQ, c->q.sock, POLLOUT);
#undef ADD
		if (L.k.active && !L.k.killed)
			wait = until(L.k.interrupted ? L.k.hard : L.k.deadline, now, wait);
		if (!L.k.active && !L.stopping)
			wait = until(L.idle_at, now, wait);
		if (!L.stopping)
			wait = until(L.life_at, now, wait);
		if (L.stopping && L.stop_kill)
			wait = until(L.stop_kill, now, wait);
		if (poll(p, (nfds_t)n, wait) < 0 && errno != EINTR)
			break;
		if (ix[P_OUT] >= 0 && p[ix[P_OUT]].revents)
			take_output(&L, 0, false);
		if (ix[P_ERR] >= 0 && p[ix[P_ERR]].revents)
			take_output(&L, 1, false);
		if (ix[P_CH] >= 0 && p[ix[P_CH]].revents)
			take_reply(&L);
		if (ix[P_CTL] >= 0 && p[ix[P_CTL]].revents)
			take_ctl(&L);
		if (ix[P_CALL] >= 0 && L.k.active && (p[ix[P_CALL]].revents & (POLLIN | POLLHUP | POLLERR)))
			client_bytes(&L);
		if (ix[P_LISTEN] >= 0 && p[ix[P_LISTEN]].revents) {
			int fd = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				take_conn(&L, fd);
		}
		now = now_ms();
		if (L.k.active && !L.k.killed) {
			if (!L.k.interrupted && now >= L.k.deadline) {
				interrupt_driver(&L);
			} else if (L.k.interrupted && now >= L.k.hard) {
				/* it did not yield: the session goes, the call is recorded */
				rec_reply(c, SBX_REPLY_KILL_CALL);
				L.k.killed = true;
			}
		}
		if (!L.k.active && !L.stopping && now >= L.idle_at)
			stop(&L, "idle");
		if (!L.stopping && now >= L.life_at) {
			/* a call still running is interrupted; the supervisor's
			 * SIGINT and SIGKILL follow at live_lifetime */
			stop(&L, "lifetime");
		}
		if (L.stopping && L.stop_kill && now >= L.stop_kill) {
			rec_reply(c, SBX_REPLY_KILL_CALL);
			L.stop_kill = 0;
		}
		if (L.k.active)
			outq_send(&L.k.r.q);
		outq_send(&c->q);
	}
	close(lsock);
	if (c->have_end && !L.stopping)
		snprintf(c->session_state, sizeof(c->session_state), "died: %s",
			 L.k.killed ? "timeout" : sbx_outcome_defs[c->end.outcome].name);
	if (L.k.active) {
		/* the session died under the call: the call says so too */
		char state[64];
		const struct sbx_outcome_def *o = &sbx_outcome_defs[c->end.outcome];

		strlcpy(state, c->session_state[0] ? c->session_state : "died", sizeof(state));
		L.k.r.end.cpu_ms = 0;
		L.k.r.end.memory_peak_bytes = c->end.memory_peak_bytes;
		strlcpy(L.k.r.end.error, c->end.error, sizeof(L.k.r.end.error));
		if (L.k.killed)
			end_as(&L, SBX_OUTCOME_TIMEOUT, SBX_LIMIT_WALL_TIME, SBX_EXIT_TIMEOUT, 0, state);
		else
			end_as(&L, (enum sbx_outcome)c->end.outcome, c->end.limit, c->end.exit_code, c->end.signal, state);
		(void)o;
	}
}
