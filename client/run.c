/* SPDX-License-Identifier: ISC */
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "code.h"
#include "events.h"
#include "fail.h"
#include "outcome.h"
#include "proto.h"
#include "signals.h"
#include "clock.h"

/* After the helper exits, how long descriptors a leftover process might
 * still hold open are given to reach EOF. */
#define GRACE_MS 2000

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static void proto_error(struct run_state *rs, const char *why)
{
	if (rs->proto_err[0] == '\0')
		snprintf(rs->proto_err, sizeof(rs->proto_err), "protocol error: %s", why);
}

static void on_artifact(struct run_state *rs, struct frame *f)
{
	struct artifact_rec *a;
	struct stat st;
	char err[512];
	char *shown;

	if (!artifact_name_valid(f->payload, f->len)) {
		proto_error(rs, "an artifact name that is not a file name");
		return;
	}
	if (f->fd < 0) {
		shown = artifact_printable(f->payload);
		cli_warn("artifact", "%s: arrived without its content%s", shown ? shown : "?",
			 f->fd_lost ? " (descriptor dropped)" : "");
		free(shown);
		return;
	}
	if (rs->narts >= MAX_ARTIFACTS) {
		rs->arts_dropped = true;
		return;
	}
	if (rs->narts % 64 == 0) {
		void *p = realloc(rs->arts, (rs->narts + 64) * sizeof(*rs->arts));
		if (p == NULL)
			cli_die("artifact", "out of memory");
		rs->arts = p;
	}
	a = &rs->arts[rs->narts];
	memset(a, 0, sizeof(*a));
	a->name = strdup(f->payload);
	if (a->name == NULL)
		cli_die("artifact", "out of memory");
	rs->narts++;
	if (fstat(f->fd, &st) == 0)
		a->size = (uint64_t)st.st_size;
	if (rs->have_dir && artifact_save(&rs->dir, a->name, f->fd, &a->size, &a->path, err, sizeof(err)) < 0) {
		shown = artifact_printable(a->name);
		cli_warn("artifact", "%s: not saved: %s", shown ? shown : "?", err);
		free(shown);
	}
}

static void show(struct run_state *rs, int which, const char *buf, size_t n, bool eof);

/* The payload's output as it comes: shown in plain mode, an event with
 * --jsonl, nothing more with --json (the result carries it). */
static void on_output(struct run_state *rs, int which, const char *buf, size_t n)
{
	if (!rs->o->json)
		show(rs, which, buf, n, false);
	if (rs->o->jsonl && n > 0)
		event_data(which ? "stderr" : "stdout", &rs->carry[which], buf, n);
}

/* One line of sbx-helper's own: shown on our stderr in plain mode; the
 * reason given when no result comes. */
static void on_message(struct run_state *rs, const char *text, size_t n)
{
	char line[SBX_FRAME_LINE_MAX + 16];
	int k;

	if (n > SBX_FRAME_LINE_MAX || memchr(text, '\n', n) != NULL) {
		proto_error(rs, "a helper message that is not one line");
		return;
	}
	k = snprintf(line, sizeof(line), "sbx-helper: %.*s\n", (int)n, text);
	snprintf(rs->message, sizeof(rs->message), "%.*s", k - 1, line);
	if (!rs->o->json)
		show(rs, 1, line, (size_t)k, false);
}

static void on_frame(struct run_state *rs, struct frame *f)
{
	if (rs->result != NULL) {
		proto_error(rs, "a frame after the result");
	} else {
		switch (f->type) {
		case SBX_FRAME_RESULT:
			rs->result = f->payload;
			rs->result_len = f->len;
			f->payload = NULL;
			break;
		case SBX_FRAME_ARTIFACT:
			on_artifact(rs, f);
			break;
		case SBX_FRAME_STDOUT:
		case SBX_FRAME_STDERR:
			on_output(rs, f->type == SBX_FRAME_STDERR, f->payload, f->len);
			break;
		case SBX_FRAME_MESSAGE:
			on_message(rs, f->payload, f->len);
			break;
		case SBX_FRAME_STARTED:
			snprintf(rs->run_id, sizeof(rs->run_id), "%s", f->payload);
			break;
		default:
			proto_error(rs, "a dry-run answer to a run");
			break;
		}
	}
	free(f->payload);
	if (f->fd >= 0)
		close(f->fd);
}

void run_read_frames(struct run_state *rs)
{
	char err[256];
	struct frame f;

	for (;;) {
		switch (frame_read(&rs->fr, &f, err, sizeof(err))) {
		case FRAME_AGAIN:
			return;
		case FRAME_READY:
			on_frame(rs, &f);
			continue;
		case FRAME_ERROR:
			proto_error(rs, err);
			frame_reader_free(&rs->fr);
			/* fall through */
		case FRAME_EOF:
			/* closed by run_attempt, after the signal handlers let go of it */
			rs->sock_done = true;
			return;
		}
	}
}

/* Plain mode: what the program wrote, shown safely (ttysafe.h) on a
 * terminal and unchanged elsewhere, through ttyout.h so that a stalled
 * terminal or pipe cannot stall our reading of the socket. */
static void show(struct run_state *rs, int which, const char *buf, size_t n, bool eof)
{
	static char out[65536 * TTYSAFE_GROWTH + 2];
	struct ttyout *t = &rs->show[which];
	size_t o;

	if (t->fd == 0)
		t->fd = 1 + which; /* our stdout, stderr (a test may have set another) */
	if (!rs->h.tty[which]) {
		ttyout_add(t, buf, n);
	} else {
		o = ttysafe_escape(&rs->tty[which], buf, n, out);
		if (eof)
			o += ttysafe_finish(&rs->tty[which], out + o);
		ttyout_add(t, out, o);
	}
	/* a stalled terminal costs a 200 ms write once, not once per frame:
	 * event_loop() flushes it when it takes output again */
	if (!t->stalled)
		ttyout_flush(t);
}


static void event_loop(struct run_state *rs)
{
	long long deadline = 0;

	while (!rs->sock_done) {
		struct pollfd p[4];
		int np = 0, ip = -1, op[2] = {-1, -1}, timeout = -1, r;

		p[np++] = (struct pollfd){.fd = rs->h.result_fd, .events = POLLIN};
		if (rs->pidfd >= 0 && !rs->helper_exited) {
			ip = np;
			p[np++] = (struct pollfd){.fd = rs->pidfd, .events = POLLIN};
		}
		if (rs->helper_exited) {
			long long left = deadline - sbx_mono_ms();
			if (left <= 0)
				break;
			timeout = (int)left;
		}
		for (int i = 0; i < 2; i++)
			if (rs->show[i].stalled && !rs->show[i].gone) {
				op[i] = np;
				p[np++] = (struct pollfd){.fd = rs->show[i].fd, .events = POLLOUT};
			}
		r = poll(p, (nfds_t)np, timeout);
		if (r < 0 && errno == EINTR)
			continue; /* a forwarded signal */
		if (r < 0)
			cli_die("poll", "%s", strerror(errno));
		if (ip >= 0 && p[ip].revents) {
			rs->helper_exited = true;
			deadline = sbx_mono_ms() + GRACE_MS;
		}
		if (p[0].revents)
			run_read_frames(rs);
		for (int i = 0; i < 2; i++)
			if (op[i] >= 0 && p[op[i]].revents)
				rs->show[i].stalled = false;
		for (int i = 0; i < 2; i++)
			if (!rs->show[i].stalled)
				ttyout_flush(&rs->show[i]);
	}
	if (!rs->sock_done) {
		proto_error(rs, "the result socket stayed open after the helper exited");
		frame_reader_free(&rs->fr);
		rs->sock_done = true;
	}
	/* the ends of the streams: a character cut at the end, an escape
	 * sequence left open */
	if (!rs->o->json) {
		show(rs, 0, NULL, 0, true);
		show(rs, 1, NULL, 0, true);
	}
	if (rs->o->jsonl) {
		event_data("stdout", &rs->carry[0], NULL, 0);
		event_data("stderr", &rs->carry[1], NULL, 0);
	}
	/* as long as the recorder waits for a stalled client (proto.h) */
	ttyout_finish(&rs->show[0], SBX_FLUSH_MS);
	ttyout_finish(&rs->show[1], SBX_FLUSH_MS);
	if (rs->show[0].dropped + rs->show[1].dropped) {
		char line[160];
		struct ttyout warn = {.fd = 2};

		snprintf(line, sizeof(line), "sbx: output: %llu bytes not shown: the terminal stopped "
			 "taking output\n",
			 (unsigned long long)rs->show[0].dropped + rs->show[1].dropped);
		ttyout_add(&warn, line, strlen(line));
		ttyout_finish(&warn, 200);
	}
}

/* run_finish, then what the run's state holds released: the exit status. */
static int run_finish_free(struct run_state *rs)
{
	int rc = run_finish(rs);

	for (size_t i = 0; i < rs->narts; i++) {
		free(rs->arts[i].name);
		free(rs->arts[i].path);
	}
	free(rs->arts);
	free(rs->result);
	if (rs->have_dir) {
		close(rs->dir.fd);
		free(rs->dir.path);
	}
	return rc;
}

/* A live session's call (live.c): the recorder's frames on sock, as a
 * run's; the exit status is the result's, as sbx run's (sbx(1)). */
int run_on_socket(const struct run_opts *o, int sock)
{
	struct run_state rs;

	memset(&rs, 0, sizeof(rs));
	rs.o = o;
	rs.dir.fd = -1;
	if (o->artifacts) {
		artifact_dir_open(o->artifacts, &rs.dir);
		rs.have_dir = true;
	}
	rs.h.result_fd = sock;
	rs.h.tty[0] = !o->json && isatty(1);
	rs.h.tty[1] = !o->json && isatty(2);
	rs.pidfd = -1;
	rs.helper_exited = false;
	frame_reader_init(&rs.fr, sock);
	event_loop(&rs);
	close(sock);
	rs.status = W_EXITCODE(SBX_EXIT_FAILURE, 0);
	if (rs.result != NULL) {
		json_t *r = json_loadb(rs.result, rs.result_len, 0, NULL);
		const char *oc = json_string_value(json_object_get(r, "outcome"));
		for (size_t i = 0; oc != NULL && i < SBX_OUTCOME_N; i++)
			if (strcmp(sbx_outcome_defs[i].name, oc) == 0) {
				int st = sbx_outcome_defs[i].status;
				if (st == SBX_STATUS_PAYLOAD)
					st = (int)json_integer_value(json_object_get(r, "exit_code")) & 0xff;
				else if (st == SBX_STATUS_SIGNAL)
					st = 128 + (int)json_integer_value(json_object_get(r, "signal"));
				rs.status = W_EXITCODE(st & 0xff, 0);
			}
		json_decref(r);
	}
	return run_finish_free(&rs);
}

int run_code(const struct run_opts *o)
{
	return run_attempt(o, NULL);
}

int run_attempt(const struct run_opts *o, json_t **result)
{
	struct run_state rs;
	sigset_t old;
	int code_fd;

	memset(&rs, 0, sizeof(rs));
	rs.o = o;
	rs.keep = result;
	rs.dir.fd = -1;
	if (o->artifacts) {
		artifact_dir_open(o->artifacts, &rs.dir);
		rs.have_dir = true;
	}
	code_fd = code_memfd(o);
	helper_spawn(o, code_fd, &rs.h, &old);
	signals_forward(rs.h.result_fd, &old);
	rs.pidfd = pidfd_open_compat(rs.h.pid);
	frame_reader_init(&rs.fr, rs.h.result_fd);
	event_loop(&rs);
	while (waitpid(rs.h.pid, &rs.status, 0) < 0) {
		if (errno != EINTR)
			cli_die("waitpid", "%s", strerror(errno));
	}
	if (rs.pidfd >= 0)
		close(rs.pidfd);
	signals_detach();
	close(rs.h.result_fd);
	return run_finish_free(&rs);
}
