/* SPDX-License-Identifier: ISC */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access.h"
#include "fail.h"
#include "signals.h"
#include "stack.h"
#include "unconst.h"

#define ARGV_MAX (32 + 4 * SBX_MAX_INPUTS + 4 + 2 * SBX_EGRESS_MAX)
/* exec_child moves every descriptor at least this high before placing it */
#define FD_PARK 64

struct argv_buf {
	char *v[ARGV_MAX];
	int n;
	char nums[6 + SBX_MAX_INPUTS][24];
	int nnums;
};

static void add(struct argv_buf *a, const char *s)
{
	if (a->n < ARGV_MAX - 1)
		a->v[a->n++] = sbx_unconst(s);
	a->v[a->n] = NULL;
}

static void add_num(struct argv_buf *a, const char *opt, uint64_t v)
{
	char *buf = a->nums[a->nnums++];

	snprintf(buf, sizeof(a->nums[0]), "%" PRIu64, v);
	add(a, opt);
	add(a, buf);
}

/* Built before fork(): the child only calls async-signal-safe functions. */
static void build_argv(const struct run_opts *o, struct argv_buf *a)
{
	memset(a, 0, sizeof(*a));
	add(a, "sbx-helper");
	add(a, "run");
	add(a, "--lang");
	add(a, o->lang);
	add(a, "--code-fd");
	add(a, "3");
	add(a, "--result-fd");
	add(a, "4");
	if (o->policy) {
		add(a, "--policy");
		add(a, o->policy);
	}
	if (o->name[0]) {
		add(a, "--name");
		add(a, o->name);
	}
	if (o->timeout_ms)
		add_num(a, "--timeout", o->timeout_ms);
	if (o->memory_bytes)
		add_num(a, "--memory", o->memory_bytes);
	if (o->pids)
		add_num(a, "--pids", o->pids);
	/* The retry loop's links between attempts, recorded in the audit log. */
	if (o->session) {
		add(a, "--session");
		add(a, o->session);
	}
	if (o->attempt)
		add_num(a, "--attempt", o->attempt);
	if (o->parent) {
		add(a, "--parent");
		add(a, o->parent);
	}
	for (size_t i = 0; i < o->n_inputs; i++) {
		add_num(a, "--input-fd", (uint64_t)(HELPER_INPUT_FD0 + i));
		add(a, "--input-name");
		add(a, o->input_names[i]);
	}
	if (o->work_fd >= 0)
		add_num(a, "--work-fd", (uint64_t)(HELPER_INPUT_FD0 + o->n_inputs));
	for (size_t i = 0; i < o->n_allow; i++) {
		add(a, "--allow");
		add(a, o->allow[i]);
	}
	if (o->stdin_fd >= 0)
		add_num(a, "--stdin-fd", (uint64_t)(HELPER_INPUT_FD0 + o->n_inputs + (o->work_fd >= 0)));
	if (o->ws_fd >= 0) {
		uint64_t n = HELPER_INPUT_FD0 + o->n_inputs + (o->work_fd >= 0) + (o->stdin_fd >= 0);
		add_num(a, "--workspace-fd", n);
		add_num(a, "--changeset-fd", n + 1);
	}
	if (o->dry_run)
		add(a, "--dry-run");
	if (o->live)
		add(a, "--live");
	if (o->idle_ms)
		add_num(a, "--idle", o->idle_ms);
	if (o->lifetime_ms)
		add_num(a, "--lifetime", o->lifetime_ms);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		cli_die("fcntl", "%s", strerror(errno));
}

/* The child: put the descriptors in place and exec; any failure goes back
 * through errpipe as an errno. */
static void exec_child(const struct run_opts *o, const struct argv_buf *a, int code_fd, int sock, int errpipe,
		       const sigset_t *old)
{
	/* Move everything above the target numbers first, so that no dup2()
	 * below can close a descriptor still to be placed. */
	int ep = fcntl(errpipe, F_DUPFD_CLOEXEC, FD_PARK);
	int c = fcntl(code_fd, F_DUPFD_CLOEXEC, FD_PARK);
	int s = fcntl(sock, F_DUPFD_CLOEXEC, FD_PARK);
	int extra[SBX_MAX_INPUTS + 4], nx = 0;
	int e;

	signals_child_reset(old);
	if (ep < 0 || c < 0 || s < 0)
		goto fail;
	for (size_t i = 0; i < o->n_inputs; i++)
		if ((extra[nx++] = fcntl(o->input_fds[i], F_DUPFD_CLOEXEC, FD_PARK)) < 0)
			goto fail;
	if (o->work_fd >= 0 && (extra[nx++] = fcntl(o->work_fd, F_DUPFD_CLOEXEC, FD_PARK)) < 0)
		goto fail;
	if (o->stdin_fd >= 0 && (extra[nx++] = fcntl(o->stdin_fd, F_DUPFD_CLOEXEC, FD_PARK)) < 0)
		goto fail;
	if (o->ws_fd >= 0 && ((extra[nx++] = fcntl(o->ws_fd, F_DUPFD_CLOEXEC, FD_PARK)) < 0 ||
			      (extra[nx++] = fcntl(o->cs_fd, F_DUPFD_CLOEXEC, FD_PARK)) < 0))
		goto fail;
	/* dup2() leaves the copies without FD_CLOEXEC: only these (and 0-2)
	 * reach the helper. */
	if (dup2(c, HELPER_CODE_FD) < 0 || dup2(s, HELPER_RESULT_FD) < 0)
		goto fail;
	for (int i = 0; i < nx; i++)
		if (dup2(extra[i], HELPER_INPUT_FD0 + i) < 0)
			goto fail;
	cli_stack_restore();
	execv(SBX_HELPER_PATH, a->v);
fail:
	e = errno;
	if (ep >= 0)
		(void)!write(ep, &e, sizeof(e));
	_exit(127);
}

void helper_spawn(const struct run_opts *o, int code_fd, struct helper *h, sigset_t *old_mask)
{
	struct argv_buf a;
	int sv[2], ep[2], child_errno;
	ssize_t n;

	build_argv(o, &a);
	h->tty[0] = !o->json && isatty(1);
	h->tty[1] = !o->json && isatty(2);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		cli_die("socketpair", "%s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) < 0)
		cli_die("pipe", "%s", strerror(errno));
	fflush(NULL); /* nothing buffered may be written twice */
	signals_block(old_mask);
	h->pid = fork();
	if (h->pid < 0)
		cli_die("fork", "%s", strerror(errno));
	if (h->pid == 0)
		exec_child(o, &a, code_fd, sv[1], ep[1], old_mask);
	close(code_fd);
	close(sv[1]);
	close(ep[1]);
	do
		n = read(ep[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		char why[512];
		const char *code;

		waitpid(h->pid, NULL, 0);
		code = child_errno == EACCES ? helper_access(why, sizeof(why)) : NULL;
		if (code != NULL)
			cli_die_code(code, "run", "%s", why);
		cli_die(SBX_HELPER_PATH, "cannot execute: %s", strerror(child_errno));
	}
	h->result_fd = sv[0];
	/* A signal handler writes control bytes here: it must never block. */
	set_nonblock(h->result_fd);
}
