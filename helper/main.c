/* SPDX-License-Identifier: ISC */
/*
 * sbx-helper: the setuid-root part of sbx. See helper.h for the process
 * tree, common/proto.h for the interface and sbx-helper(8) for the
 * security model. This file is the supervisor: it prepares the run, starts
 * the recorder and the sandbox, enforces the limits and collects the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <bsd/string.h>

#include "errcode.h"
#include "helper.h"
#include "proto.h"
#include "testhook.h"
#include "clock.h"
#include "unconst.h"

/* From SIGINT at the wall-time limit to SIGKILL (milliseconds). */
#define WALL_GRACE_MS 500
/* From the client's interrupt or terminate request to SIGKILL. */
#define CONTROL_GRACE_MS 2000
/*
 * The pids limit (sbx.policy(5) pids): the kernel refuses a fork, clone or
 * thread start past pids.max with EAGAIN, and a program may handle that
 * and carry on (a pool that starts fewer workers, a loop that stops
 * starting threads). A fork bomb instead keeps hitting the limit, at its
 * own pace: a bomb of Python processes a few hundred times a second, a
 * bash one at bash's retry back-off. So the run is stopped (pids_limit)
 * once PIDS_REFUSED starts were refused in all; a program that met the
 * limit fewer times keeps its own outcome, and the result names the limit
 * ("pids").
 */
#define PIDS_REFUSED 50



/* Why the supervisor killed the sandbox. */
enum kill_cause {
	KILL_NONE,
	KILL_LIMIT,     /* a limit fired (killed_limit says which) */
	KILL_CLIENT,    /* the client is gone (EOF on the result socket) */
	KILL_GRACE,     /* an interrupt or terminate the payload did not obey in time */
	KILL_RECORDER,  /* the recorder died */
	KILL_POLL,      /* poll(2) or the sandbox's socket failed */
	KILL_TERM,      /* SIGTERM to the supervisor: root's (scancel, shutdown); the caller cannot send it */
};

/*
 * SIGTERM: a job scheduler cancelling the job (Slurm's scancel signals
 * every process of the step, as root), a shutdown. It must end the run
 * like a kill, recorded, never the supervisor or the recorder half-way.
 * Blocked from before the recorder is forked to the end (so no blocking
 * call elsewhere sees EINTR, and the recorder and the signer inherit it
 * blocked: they end when the run does); taken only inside supervise()'s
 * ppoll(2). The sandbox unblocks it (sandbox.c: init forwards it to the
 * payload); the collector, the caller's, ends with the run. The caller's own signals stop at the uid check of
 * kill(2) once the supervisor is root in all three uids.
 */
static volatile sig_atomic_t terminated;
static void on_term(int sig)
{
	(void)sig;
	terminated = 1;
}
static sigset_t term_unblocked; /* the mask inside ppoll */

static void block_term(void)
{
	struct sigaction sa;
	sigset_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&t);
	sigaddset(&t, SIGTERM);
	sigprocmask(SIG_BLOCK, &t, &term_unblocked);
	sigdelset(&term_unblocked, SIGTERM);
}

struct sup {
	struct run *r;
	int ctl;             /* recorder (proto.h SBX_REC_FD_CONTROL) */
	int art;             /* our end of the artifact channel, for the collector */
	pid_t recorder;
	struct cgroup *cg;
	pid_t child;
	int pipe_w[2];       /* write ends of the payload's stdout/stderr pipes, until the sandbox has them */
	int pidfd, sync, outdir, tmpdir, shmdir; /* O_PATH fds of the sandbox's /out, /tmp, /dev/shm */
	int wsupper;         /* O_PATH fd of --workspace's upper layer (workspace.c), or -1 */
	struct sbx_run_end end;
	bool have_status;
	int status;
	enum kill_cause killed;  /* what made us kill the sandbox first */
	int killed_limit;        /* with KILL_LIMIT: enum sbx_limit */
	bool client_open;        /* no EOF on the result socket yet */
	int live_ch;             /* --live: the recorder's end of the call channel, until it has it */
	bool start_pending;      /* the recorder is READY, its verdict on START not read yet */
	uint64_t sigkill_ms;     /* when kill_sandbox first sent SIGKILL (sbx_mono_ms) */
	bool unreaped;           /* the sandbox init did not die within HELPER_REAP_MS of it */
};

static struct sup sup;

static void kill_sandbox(struct sup *s, enum kill_cause why, int limit)
{
	if (s->killed == KILL_NONE) {
		s->killed = why;
		s->killed_limit = limit;
	}
	if (s->child > 0)
		kill(s->child, SIGKILL);
	if (s->sigkill_ms == 0)
		s->sigkill_ms = (uint64_t)sbx_mono_ms();
}

/*
 * SIGKILL to the sandbox init and a bounded wait for it. The caller can
 * move its own-uid sandbox processes into a frozen cgroup v1 freezer it was
 * delegated, and a frozen task does not die until thawed: after
 * HELPER_REAP_MS the sandbox is left unreaped (s->unreaped), and the run
 * ends without it (docs/threat-model.md row 28).
 */
static void reap_sandbox(struct sup *s)
{
	if (s->child <= 0 || s->unreaped)
		return;
	wait_timeout(s->child, 0);
	/* 0: still there; -1 (ECHILD): reaped */
	s->unreaped = waitpid(s->child, NULL, WNOHANG) == 0;
}

/*
 * In the recorder's child, still root: the signer's own child, with its
 * socket at fd 3 (signwire.h) and nothing else, _sbxsign for good, exec of
 * the signer binary opened before the fork. It is the recorder's child
 * after the exec and ends at EOF on the socket, when the recorder ends.
 */
static void start_signer(const struct run *r, int sexe, int sock)
{
	static char *const argv[] = {"sbx-signer", NULL};
	pid_t pid = fork();

	if (pid < 0)
		_exit(SBX_EXIT_FAILURE);
	if (pid == 0)
		exec_dropped(r->sign_uid, r->sign_gid, sexe, &sock, 1, SBX_SIGNER_FD, argv, false);
}

/*
 * In the recorder's child, still root: the descriptors at their fixed
 * numbers (proto.h enum sbx_recorder_fd), everything else closed, then
 * _sbx for good and exec of the recorder binary opened (and checked, like
 * sbx.conf) before the fork. Nothing of this address space survives the
 * exec.
 */
static _Noreturn void exec_recorder(const struct run *r, int exe, const int *fds, size_t n,
				    int sexe, int sign_sock)
{
	static char *const argv[] = {"sbx-recorder", NULL};

	start_signer(r, sexe, sign_sock);
	exec_dropped(r->sbx_uid, r->sbx_gid, exe, fds, n, SBX_REC_FD_CONTROL, argv, true);
}

static pid_t start_recorder(struct sup *s, int *out_w, int *err_w)
{
	struct run *r = s->r;
	int ctl[2], out[2], errp[2], art[2], sign[2], exe, sexe, devnull;
	int fds[SBX_REC_FD_INPUT0 - SBX_REC_FD_CONTROL + SBX_MAX_INPUTS];
	size_t n = 0;
	char err[HELPER_ERR_LEN];
	struct sbx_run_desc d;
	pid_t pid;

	exe = open_trusted(SBX_RECORDER_PATH, err, sizeof(err));
	if (exe < 0)
		die_status(SBX_EXIT_AUDIT, "audit log unavailable: the recorder: %s; the run was not started", err);
	sexe = open_trusted(SBX_SIGNER_PATH, err, sizeof(err));
	if (sexe < 0)
		die_status(SBX_EXIT_AUDIT, "audit log unavailable: the signer: %s; the run was not started", err);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, art) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sign) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		die("pipes: %s", strerror(errno));
	describe_run(r, &d);
	/* --live: the payload's stdin is one end of the call channel, the
	 * recorder holds the other; we never read it */
	if (r->live) {
		int ch[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch) < 0)
			die("pipes: %s", strerror(errno));
		r->stdin_fd = ch[1];
		s->live_ch = ch[0];
	}
	/* in the order of enum sbx_recorder_fd; a refused run's fds are never
	 * read (a refused --code-fd may not even be a memfd) */
	fds[n++] = ctl[1];
	fds[n++] = r->result_fd;
	fds[n++] = out[0];
	fds[n++] = errp[0];
	fds[n++] = art[1];
	/* a refused run's code goes too once its seals were checked: the
	 * recorder hashes it (refused_code_sha256) but records no text */
	fds[n++] = r->refused && !r->code_checked ? devnull : r->code_fd;
	fds[n++] = r->egress.report >= 0 ? r->egress.report : devnull;
	fds[n++] = r->live ? s->live_ch : r->stdin_fd >= 0 && !r->refused ? r->stdin_fd : devnull;
	fds[n++] = sign[0];
	fds[n++] = r->policy_fd >= 0 ? r->policy_fd : devnull;
	for (size_t i = 0; i < d.n_inputs; i++)
		fds[n++] = r->inputs[i].fd;
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		exec_recorder(r, exe, fds, n, sexe, sign[1]);
	/* the recorder writes the result socket from now until it is reaped */
	msg_hold();
	close(exe);
	close(sexe);
	if (r->policy_fd >= 0)
		close(r->policy_fd); /* the recorder's now */
	r->policy_fd = -1;
	close(sign[0]);
	close(sign[1]);
	close(devnull);
	close(ctl[1]);
	close(art[1]);
	close(out[0]);
	close(errp[0]);
	if (s->live_ch >= 0)
		close(s->live_ch);
	egress_recorder_started(s->r);
	s->ctl = ctl[0];
	s->art = art[0];
	*out_w = out[1];
	*err_w = errp[1];
	/* a lost description shows as the recorder's failure in await_start */
	(void)!send(s->ctl, &d, sizeof(d), MSG_NOSIGNAL);
	return pid;
}

/* Wait for the recorder's reply `want` (READY, then the verdict on the
 * START record: no commit, no run). Returns 0, or the reply the recorder
 * sent instead (-1 if none). */
static int await_reply(struct sup *s, enum sbx_rec_reply want)
{
	struct pollfd p = {.fd = s->ctl, .events = POLLIN};
	unsigned char c = 0;

	if (poll(&p, 1, 60000) != 1 || read(s->ctl, &c, 1) != 1)
		return -1;
	return c == want ? 0 : c;
}

static void recorder_gone(struct sup *s, int timeout_ms)
{
	wait_timeout(s->recorder, timeout_ms);
	s->recorder = -1;
	msg_release();
}

/* START was not committed: the run does not start. The sandbox (when
 * there is one yet) has not exec'd the payload: it waits for
 * SBX_SANDBOX_EXEC, which is never sent; it dies with its cgroup. */
static _Noreturn void start_refused(struct sup *s, int verdict)
{
	if (s->child > 0) {
		reap_sandbox(s);
		s->child = -1;
	}
	if (s->cg) {
		cgroup_kill(s->cg);
		cgroup_destroy(s->cg);
		s->cg = NULL;
	}
	egress_stop(s->r);
	if (verdict == SBX_REPLY_START_FAIL) {
		recorder_gone(s, 2000); /* it told the client why */
		_exit(SBX_EXIT_AUDIT);
	}
	recorder_gone(s, 0);
	die_status(SBX_EXIT_AUDIT, "audit log unavailable: the recorder died; the run was not started");
}

/* The recorder is gone (or killed): the socket is ours again. */
static int wait_recorder(struct sup *s)
{
	/* two SQLite commits, each with a 10 s busy timeout, and the result */
	int st = wait_timeout(s->recorder, 60000);

	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* No collector is due: the artifact list is complete as it is (proto.h
 * SBX_COLLECT_DONE). One byte into an empty socket buffer, MSG_DONTWAIT:
 * a recorder that died meanwhile shows in finish(). */
static void artifacts_complete(struct sup *s)
{
	if (s->art < 0)
		return;
	(void)!send(s->art, &(char){SBX_COLLECT_DONE}, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(s->art);
	s->art = -1;
}

/* Tell the recorder how the run ended and let it finish; our exit status.
 * The recorder tells the client s->end.error. */
static _Noreturn void finish(struct sup *s, int code)
{
	int rc;

	sbx_msg_hdr_init(&s->end.hdr, SBX_REC_MSG_END, sizeof(s->end));
	if (send(s->ctl, &s->end, sizeof(s->end), MSG_NOSIGNAL) < 0)
		warnx1("recorder gone before the END record");
	/* still open: no collector ran, none was due (a run that failed or
	 * was refused before its payload ran, or a sandbox that died before
	 * it passed /out) */
	artifacts_complete(s);
	rc = wait_recorder(s);
	s->recorder = -1;
	msg_release();
	if (rc < 0) {
		warnx1("audit: the %s record of %s %s was not written", s->r->apply ? "APPLY" : "END",
		       s->r->apply ? "apply" : "run", s->r->run_id);
		_exit(SBX_EXIT_AUDIT);
	}
	egress_reap(s->r);
	_exit(code);
}

/* --live: the session's memory accounting, read-only, to the recorder
 * (rundesc.h struct sbx_live_cgroup): files of the cgroup we made, which
 * the recorder cannot open itself (only root enters sbx/). */
static void send_live_cgroup(struct sup *s)
{
	struct sbx_live_cgroup g;
	bool v2;
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	int fds[2] = {cgroup_open_memory(s->cg, false, &v2), cgroup_open_memory(s->cg, true, &v2)};
	struct iovec iov = {.iov_base = &g, .iov_len = sizeof(g)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};

	sbx_msg_hdr_init(&g.hdr, SBX_REC_MSG_CGROUP, sizeof(g));
	g.v2 = v2;
	if (fds[0] >= 0 && fds[1] >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(h), fds, sizeof(fds));
		(void)!sendmsg(s->ctl, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static _Noreturn void fail_run_code(struct sup *s, const char *code, const char *msg)
{
	const struct sbx_errcode *ec = sbx_errcode_find(code);

	/* a set-up failure while START commits: a START that fails is the
	 * run's one error (the recorder said why), as when it came first */
	if (s->start_pending) {
		int verdict = await_reply(s, SBX_REPLY_START_OK);
		s->start_pending = false;
		if (verdict != 0)
			start_refused(s, verdict);
	}

	/* the recorder reads the payload's output pipes to their end before
	 * it takes the END record: our write ends must go first */
	for (int i = 0; i < 2; i++)
		if (s->pipe_w[i] >= 0) {
			close(s->pipe_w[i]);
			s->pipe_w[i] = -1;
		}
	if (s->cg) {
		cgroup_kill(s->cg);
		cgroup_destroy(s->cg);
		s->cg = NULL;
	}
	egress_stop(s->r);
	memset(&s->end, 0, sizeof(s->end));
	s->end.outcome = SBX_OUTCOME_SANDBOX_ERROR;
	s->end.limit = SBX_LIMIT_NONE;
	strlcpy(s->end.error, msg, sizeof(s->end.error));
	strlcpy(s->end.error_code, code != NULL ? code : "", sizeof(s->end.error_code));
	s->end.exit_code = -1;
	finish(s, ec != NULL && ec->exit_status > 0 ? ec->exit_status : SBX_EXIT_FAILURE);
}

static _Noreturn void fail_run(struct sup *s, const char *msg)
{
	fail_run_code(s, NULL, msg);
}

/* The sandbox init, in its namespaces; on cgroup v2 (cgfd >= 0) born in
 * the run's cgroup (CLONE_INTO_CGROUP, clone(2), Linux 5.7): *placed is
 * then true. Should the kernel refuse that (EINVAL before 5.7, or any
 * reason clone(2) gives for it), a plain clone follows and the pid goes
 * to cgroup.procs afterwards (cgroup_attach), which says what is wrong. */
static pid_t clone_sandbox(int *pidfd, int cgfd, bool *placed)
{
	struct clone_args args;
	pid_t pid;

	memset(&args, 0, sizeof(args));
	args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
		     CLONE_NEWUTS | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)pidfd;
	args.exit_signal = SIGCHLD;
	*placed = false;
	if (cgfd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (__u64)cgfd;
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (pid >= 0) {
			*placed = true;
			return pid;
		}
		args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		args.cgroup = 0;
	}
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/* uid and gid maps: the caller's ids mapped to themselves, nothing else,
 * never root (user_namespaces(7)); setgroups denied first. */
static int map_ids(const struct run *r, pid_t pid, char *err, size_t errlen)
{
	char path[64], map[64];

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	if (write_file(path, "deny", err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)r->uid, (unsigned)r->uid);
	if (write_file(path, map, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)r->gid, (unsigned)r->gid);
	return write_file(path, map, err, errlen);
}

/* Read one message from the sandbox init; false on EOF. */
static bool sandbox_msg(struct sup *s, char *errbuf, size_t errlen)
{
	char buf[HELPER_ERR_LEN + 8];
	int fd = -1;
	int n = sbx_recv_fd(s->sync, buf, sizeof(buf) - 1, &fd);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (buf[0] == SBX_SANDBOX_OUTDIR && fd >= 0 && s->outdir < 0) {
		s->outdir = fd;
		return true;
	}
	if (buf[0] == SBX_SANDBOX_TMPDIR && fd >= 0 && s->tmpdir < 0) {
		s->tmpdir = fd;
		return true;
	}
	if (buf[0] == SBX_SANDBOX_WSUPPER && fd >= 0 && s->wsupper < 0) {
		s->wsupper = fd;
		return true;
	}
	if (buf[0] == SBX_SANDBOX_SHMDIR && fd >= 0 && s->shmdir < 0) {
		s->shmdir = fd;
		return true;
	}
	if (fd >= 0)
		close(fd);
	if (buf[0] == SBX_SANDBOX_STATUS && n == 1 + (int)sizeof(int)) {
		memcpy(&s->status, buf + 1, sizeof(int));
		s->have_status = true;
	} else if (buf[0] == SBX_SANDBOX_ERROR) {
		snprintf(errbuf, errlen, "sandbox set-up: %.200s", buf + 1);
	}
	return true;
}

/* The sandbox init's word that it is in the run's cgroup, before it may
 * go on; -1 with its reason (or ours) in err. It has run nothing of the
 * caller's yet; 10 s covers the hooked build's pause (testhook.h). */
static int await_joined(struct sup *s, char *err, size_t errlen)
{
	struct pollfd p = {.fd = s->sync, .events = POLLIN};
	char buf[HELPER_ERR_LEN + 8];
	ssize_t n;

	if (poll(&p, 1, 10000) != 1 || (n = recv(s->sync, buf, sizeof(buf) - 1, 0)) <= 0) {
		snprintf(err, errlen, "sandbox set-up: the sandbox init did not start");
		return -1;
	}
	buf[n] = '\0';
	if (buf[0] == SBX_SANDBOX_JOINED && n == 1)
		return 0;
	snprintf(err, errlen, "sandbox set-up: %.200s", buf[0] == SBX_SANDBOX_ERROR ? buf + 1 : "unexpected message");
	return -1;
}

/*
 * Control bytes from the client on the result socket (proto.h enum
 * sbx_control). MSG_DONTWAIT: the socket is the caller's, and a copy of it
 * the caller kept may take the bytes poll(2) announced before we read.
 */
static void client_control(struct sup *s, uint64_t *grace)
{
	unsigned char buf[64];
	ssize_t n = recv(s->r->result_fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		/* the client is gone: nobody wants this run any more (a live
		 * session's starter leaves; its calls come through the recorder) */
		s->client_open = false;
		if (!s->r->live)
			kill_sandbox(s, KILL_CLIENT, SBX_LIMIT_NONE);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != SBX_CONTROL_INTERRUPT && buf[i] != SBX_CONTROL_TERMINATE)
			continue;
		kill(s->child, buf[i] == SBX_CONTROL_INTERRUPT ? SIGINT : SIGTERM);
		if (!*grace)
			*grace = (uint64_t)sbx_mono_ms() + CONTROL_GRACE_MS;
	}
}

static void supervise(struct sup *s, uint64_t start_ms, char *setup_err, size_t errlen)
{
	const struct sbx_limits *l = &s->r->limits;
	uint64_t deadline = start_ms + (s->r->live ? l->live_lifetime_ms : l->wall_ms), grace = 0, hard = 0;
	bool ctl_open = true, sync_open = true;

	for (;;) {
		struct pollfd p[4] = {
			{.fd = s->pidfd, .events = POLLIN},
			{.fd = sync_open ? s->sync : -1, .events = POLLIN},
			{.fd = s->client_open ? s->r->result_fd : -1, .events = POLLIN},
			{.fd = ctl_open ? s->ctl : -1, .events = POLLIN},
		};
		struct cgroup_usage u;
		uint64_t now = (uint64_t)sbx_mono_ms();
		int wait = 100;

		/* SIGKILL sent and no exit: frozen (reap_sandbox) */
		if (s->sigkill_ms && now >= s->sigkill_ms + HELPER_REAP_MS) {
			s->unreaped = true;
			return;
		}

		if (now >= deadline && hard == 0) {
			/* Interrupt first, so an interpreter can say where it was
			 * stuck (Python's KeyboardInterrupt traceback); the kill
			 * follows WALL_GRACE_MS later whatever the payload does. */
			if (s->killed == KILL_NONE) {
				s->killed = KILL_LIMIT;
				s->killed_limit = s->r->live ? SBX_LIMIT_LIVE_LIFETIME : SBX_LIMIT_WALL_TIME;
			}
			kill(s->child, SIGINT);
			hard = now + WALL_GRACE_MS;
		}
		if (hard && now >= hard)
			kill_sandbox(s, KILL_LIMIT, s->r->live ? SBX_LIMIT_LIVE_LIFETIME : SBX_LIMIT_WALL_TIME);
		if (grace && now >= grace)
			kill_sandbox(s, KILL_GRACE, SBX_LIMIT_NONE);
		if (deadline > now && deadline - now < (uint64_t)wait)
			wait = (int)(deadline - now);
		if (hard > now && hard - now < (uint64_t)wait)
			wait = (int)(hard - now);
		struct timespec ts = {wait / 1000, (long)(wait % 1000) * 1000000};
		if (ppoll(p, 4, &ts, &term_unblocked) < 0 && errno != EINTR)
			kill_sandbox(s, KILL_POLL, SBX_LIMIT_NONE);
		if (terminated)
			kill_sandbox(s, KILL_TERM, SBX_LIMIT_NONE);
		if (p[0].revents)
			return;
		if (p[1].revents && !sandbox_msg(s, setup_err, errlen))
			sync_open = false;
		if (p[2].revents)
			client_control(s, &grace);
		if (p[3].revents) {
			unsigned char c;
			ssize_t n = read(s->ctl, &c, 1);
			if (n <= 0) {
				ctl_open = false;
				kill_sandbox(s, KILL_RECORDER, SBX_LIMIT_NONE);
			} else if (c == SBX_REPLY_KILL_OUTPUT)
				kill_sandbox(s, KILL_LIMIT, SBX_LIMIT_OUTPUT);
			else if (c == SBX_REPLY_KILL_CALL && s->r->live)
				kill_sandbox(s, KILL_LIMIT, SBX_LIMIT_WALL_TIME);
		}
		/* limits the kernel does not end the run for by itself */
		cgroup_usage(s->cg, &u);
		if (u.cpu_ms >= l->cpu_ms && !s->r->live)
			kill_sandbox(s, KILL_LIMIT, SBX_LIMIT_CPU_TIME);
		if (u.pids_max_hits >= PIDS_REFUSED)
			kill_sandbox(s, KILL_LIMIT, SBX_LIMIT_PIDS);
		if (u.oom_kills > 0)
			kill_sandbox(s, KILL_LIMIT, SBX_LIMIT_MEMORY);
	}
}

/* The outcome of a limit that fired: the table's row for it. */
static const struct sbx_outcome_def *outcome_of_limit(int limit)
{
	/* a live session's lifetime is its wall-clock limit (the END's limit
	 * field says which) */
	if (limit == SBX_LIMIT_LIVE_LIFETIME)
		limit = SBX_LIMIT_WALL_TIME;
	for (size_t i = 0; i < SBX_OUTCOME_N; i++)
		if (sbx_outcome_defs[i].limit == limit)
			return &sbx_outcome_defs[i];
	return &sbx_outcome_defs[SBX_OUTCOME_SANDBOX_ERROR];
}

/* The run's outcome (outcome.h) from how it ended; our exit status. */
static int classify(struct sup *s, const struct cgroup_usage *u, const char *setup_err)
{
	struct sbx_run_end *e = &s->end;
	enum kill_cause k = s->killed;
	int limit = s->killed_limit, sig = 0, code = -1;

	if (s->have_status) {
		if (WIFEXITED(s->status))
			code = WEXITSTATUS(s->status);
		else if (WIFSIGNALED(s->status))
			sig = WTERMSIG(s->status);
	}
	/* A limit the kernel enforced shows in the counters even when our
	 * poll did not see it first. */
	if (k == KILL_NONE && u->oom_kills > 0 && (sig == SIGKILL || !s->have_status))
		k = KILL_LIMIT, limit = SBX_LIMIT_MEMORY;
	if (k == KILL_NONE && (sig == SIGXCPU || (sig == SIGKILL && u->cpu_ms >= s->r->limits.cpu_ms && !s->r->live)))
		k = KILL_LIMIT, limit = SBX_LIMIT_CPU_TIME;
	/* RLIMIT_FSIZE, the policy's file_size (setrlimit(2)) */
	if (k == KILL_NONE && s->have_status && sig == SIGXFSZ)
		k = KILL_LIMIT, limit = SBX_LIMIT_FILE_SIZE;
	e->exit_code = code;
	e->signal = sig;
	e->limit = SBX_LIMIT_NONE;
	if (s->unreaped) {
		/* its own outcome is unknown: its processes did not end */
		e->outcome = SBX_OUTCOME_SANDBOX_ERROR;
		e->limit = k == KILL_LIMIT ? limit : SBX_LIMIT_NONE;
		e->exit_code = -1;
		e->signal = 0;
		snprintf(e->error, sizeof(e->error),
			 "run stopped: the sandbox's processes did not die within %d ms of SIGKILL (frozen: "
			 "moved out of the run's cgroup into a frozen cgroup v1 freezer?); they are left, "
			 "the caller's own, and die when thawed", HELPER_REAP_MS);
		return SBX_EXIT_FAILURE;
	}
	if (k == KILL_LIMIT) {
		const struct sbx_outcome_def *o = outcome_of_limit(limit);

		e->outcome = o->id;
		e->limit = limit;
		if (o->status == SBX_STATUS_SIGNAL)
			return 128 + sig;
		/* killed by us with SIGKILL; the time limits keep what the
		 * payload did with its SIGINT (or SIGXCPU) */
		if (o->status != SBX_EXIT_TIMEOUT) {
			e->signal = SIGKILL;
			e->exit_code = -1;
		}
		return o->status;
	}
	if (k == KILL_RECORDER || k == KILL_POLL) {
		e->outcome = SBX_OUTCOME_SANDBOX_ERROR;
		snprintf(e->error, sizeof(e->error), "run stopped: %s failed", k == KILL_RECORDER ? "recorder" : "poll");
		return SBX_EXIT_FAILURE;
	}
	if (!s->have_status) {
		if (k != KILL_NONE) { /* client went away or ignored an interrupt, SIGTERM */
			e->outcome = SBX_OUTCOME_SIGNAL;
			e->signal = SIGKILL;
			if (k == KILL_TERM)
				strlcpy(e->error, "run stopped: sbx-helper received SIGTERM (a job cancelled, "
					"a shutdown)", sizeof(e->error));
			return 128 + SIGKILL;
		}
		e->outcome = SBX_OUTCOME_SANDBOX_ERROR;
		strlcpy(e->error, setup_err[0] ? setup_err : "sandbox init died", sizeof(e->error));
		return SBX_EXIT_FAILURE;
	}
	if (sig) {
		e->outcome = SBX_OUTCOME_SIGNAL;
		return 128 + sig;
	}
	e->outcome = code == 0 ? SBX_OUTCOME_OK : SBX_OUTCOME_ERROR;
	return code;
}

/* Which of the size-capped tmpfs mounts /tmp, /dev/shm and /out the
 * sandbox left without a free block or inode: the program met ENOSPC there
 * (or stopped just short of it). Read once every sandboxed process is dead,
 * through the O_PATH fds the sandbox init passed before the payload
 * started, so a killed run is covered too. A full mount does not end the
 * run: the program sees ENOSPC and its outcome stays its own. When no
 * other limit fired, the recorder names the cap it ran into in the limit
 * field (result JSON and the audit END record). */
static void note_disk_full(struct sup *s)
{
	int *const mnt[] = {&s->tmpdir, &s->outdir, &s->shmdir};
	const uint8_t bits[] = {SBX_DISK_FULL_TMP, SBX_DISK_FULL_OUT, SBX_DISK_FULL_SHM};
	struct sbx_run_end *e = &s->end;
	struct statfs sf;

	for (int i = 0; i < 3; i++) {
		int *fd = mnt[i];
		if (*fd < 0)
			continue;
		if (fstatfs(*fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC && (sf.f_bavail == 0 || sf.f_ffree == 0))
			e->disk_full |= bits[i];
		if (fd != &s->outdir) { /* that one stays open for the collector */
			close(*fd);
			*fd = -1;
		}
	}
}

/* /out holds nothing but its root directory: its tmpfs has one inode in
 * use (mounts.c gives it nr_inodes, so f_files is not 0; statfs(2)). No
 * collector is forked then: the recorder sees the artifact channel's EOF,
 * as after a collector that found nothing. The hooked helper always forks
 * it, so that the escape tests can attack the collector at its pause point
 * whatever the payload left (tests/escape/02-ptrace.t, 03-privdrop.t). */
static bool out_empty(int outdir)
{
#ifdef SBX_TEST_HOOKS
	(void)outdir;
	return false;
#else
	struct statfs sf;

	return fstatfs(outdir, &sf) == 0 && sf.f_type == TMPFS_MAGIC && sf.f_files > 0 &&
	       sf.f_files - sf.f_ffree <= 1;
#endif
}

static void start_collector(struct sup *s)
{
	char err[HELPER_ERR_LEN];
	struct stat st;
	pid_t pid;
	int exe;

	if (s->outdir < 0 && s->wsupper < 0)
		return;
	if (s->outdir >= 0 && out_empty(s->outdir)) {
		close(s->outdir);
		s->outdir = -1;
		if (s->wsupper < 0) {
			artifacts_complete(s);
			return;
		}
	}
	TEST_HOOK("supervisor-collect");
	/* a collector that cannot start leaves the list without
	 * SBX_COLLECT_DONE: the recorder reports it incomplete */
	exe = open_trusted(SBX_COLLECTOR_PATH, err, sizeof(err));
	/* one the caller could read would run dumpable: the caller could
	 * ptrace it and forge what the recorder signs (proto.h "collector") */
	if (exe >= 0 && (fstat(exe, &st) < 0 || (st.st_mode & 0066) != 0)) {
		snprintf(err, sizeof(err), "%s is readable by others (want mode 0711: %s)",
			 SBX_COLLECTOR_PATH, "sbx-helper --check");
		close(exe);
		exe = -1;
	}
	pid = exe < 0 ? -1 : fork();
	if (exe < 0)
		warnx1("artifact collector: %s", err);
	if (pid == 0)
		collector_exec(s->r, exe, s->outdir, s->wsupper, s->art);
	if (exe >= 0)
		close(exe);
	if (s->outdir >= 0)
		close(s->outdir);
	s->outdir = -1;
	/* the upper layer's tmpfs is freed with its last fd */
	if (s->wsupper >= 0)
		close(s->wsupper);
	s->wsupper = -1;
	close(s->art);
	s->art = -1;
	if (pid < 0)
		return;
	/* the collector only copies bounded files out of a tmpfs; it runs as
	 * the caller, who may kill it: whether it finished is its
	 * SBX_COLLECT_DONE to the recorder, not its exit status */
	wait_timeout(pid, 30000);
}

/* At most what the caller's cgroups allow, once the request is within the
 * policy (cgcaller.c): the limits START records are the ones enforced. No
 * allocation found is no allocation; a level of the caller's cgroup path
 * gone since it was read refuses the run (err). */
static int cap_by_allocation(struct run *r, char *err, size_t errlen)
{
	if (cgroup_caller_cap(&r->conf, &r->limits, &r->alloc_tightened, err, errlen) < 0)
		return -1;
	cgroup_nest_names(&r->conf, r->alloc_nested, sizeof(r->alloc_nested));
	return 0;
}

static void prepare(struct run *r, int argc, char **argv)
{
	char err[SBX_ERR_LEN] = "", err2[SBX_ERR_LEN];
	unsigned char rnd[SBX_ID_LEN / 2];
	struct passwd *pw;
	int rc;

	r->uid = getuid();
	r->gid = getgid();
	if (geteuid() == 0) {
		/* All three uids 0 from here: the caller can no longer signal,
		 * stop or ptrace this process (kill(2), ptrace(2) access rules). */
		if (setresuid(0, 0, 0) < 0 || setresgid(0, 0, 0) < 0)
			die("setresuid: %s", strerror(errno));
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		reset_oom_score();
	}
	if (parse_args(argc, argv, r, err, sizeof(err)) < 0)
		die("%s", err);
	int keep[2 + RUN_EXTRA_FDS] = {r->result_fd};
	size_t nk = 1;
	if (r->stdin_fd >= 0)
		keep[nk++] = r->stdin_fd;
	keep_fds(keep, nk + run_extra_fds(r, keep + nk, RUN_EXTRA_FDS));
	if (check_result_socket(r, err, sizeof(err)) < 0)
		die("%s", err);
	/* from here on the helper's messages are frames on the socket */
	msg_use_socket(r->result_fd);
	sup.client_open = true;
	if (geteuid() != 0)
		die("not installed setuid root (see sbx-postinst)");
	/* none of the helper's processes keeps the caller's keyrings */
	if (new_session_keyring(NULL, err, sizeof(err)) < 0)
		die("%s", err);
	if (raise_rlimits(r->caller_rlimits, err, sizeof(err)) < 0 || lookup_caller(r, err, sizeof(err)) < 0)
		die("%s", err);
	pw = getpwnam("_sbx");
	if (pw == NULL || pw->pw_uid == 0)
		die("system user _sbx is missing: run sbx-postinst");
	/* die() does not return; cppcheck 2.10 ignores _Noreturn here. */
	// cppcheck-suppress nullPointerRedundantCheck
	r->sbx_uid = pw->pw_uid;
	// cppcheck-suppress nullPointerRedundantCheck
	r->sbx_gid = pw->pw_gid;
	pw = getpwnam("_sbxsign");
	if (pw == NULL || pw->pw_uid == 0 || pw->pw_uid == r->sbx_uid)
		die("system user _sbxsign is missing: run sbx-postinst");
	// cppcheck-suppress nullPointerRedundantCheck
	r->sign_uid = pw->pw_uid;
	// cppcheck-suppress nullPointerRedundantCheck
	r->sign_gid = pw->pw_gid;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		die("getrandom: %s", strerror(errno));
	sbx_hex(rnd, sizeof(rnd), r->run_id);
	r->realtime_ns = sbx_clock_ns(CLOCK_REALTIME);
	r->boottime_ns = sbx_clock_ns(CLOCK_BOOTTIME);
	if (load_config(r, err, sizeof(err)) < 0)
		die("%s", err);
	/* held until this process and its children are gone (slots.c) */
	r->slot_fd = take_run_slot(r->uid, r->user, r->conf.max_runs_per_user, err, sizeof(err));
	/* past the rate, refused before anything is read or recorded (a dry
	 * run records nothing, so it is not counted) */
	if (r->slot_fd < 0 || (!r->dry_run && quota_request(r, err, sizeof(err)) < 0))
		die("%s", err);
	/* sbx apply's record (sbx(1) WORKSPACES): no policy, no sandbox; the
	 * report in the code memfd is read by the recorder, never by root */
	if (r->apply) {
		if (check_code(r, err, sizeof(err)) < 0)
			die("%s", err);
		if (setgroups(0, NULL) < 0)
			die("setgroups: %s", strerror(errno));
		strlcpy(r->code_path, "sbx-apply", sizeof(r->code_path));
		return;
	}
	/* From here on every refusal is audited: before a policy loaded as one
	 * REFUSED record (the recorder), after it as START and END. A missing
	 * policy and one that does not allow the caller get the same words
	 * and status (policy_refused, escape 05). */
	if (resolve_language(r, err, sizeof(err)) < 0)
		r->error_code = "unknown_language";
	else if ((rc = load_policy(r, err, sizeof(err))) < 0)
		r->error_code = rc == -2 ? "policy_denied" : "setup";
	else
		r->policy_loaded = true;
	r->limits = r->policy.limits;
	/* the code says which: a refusal by policy (exit 77) or sbx's own
	 * failure (125), sbx(1) EXIT STATUS */
	if (!r->policy_loaded)
		(void)check_code(r, err2, sizeof(err2)); /* for the digest of what was sent */
	else if (caller_may_use(r, err, sizeof(err)) < 0 || egress_narrow(r, err, sizeof(err)) < 0)
		r->error_code = "policy_denied";
	else if (sbx_limits_tighten(&r->limits, &r->request, r->policy_name, err, sizeof(err)) < 0 ||
		 check_attempt(r, err, sizeof(err)) < 0)
		r->error_code = "limit_above_policy";
	else if (cap_by_allocation(r, err, sizeof(err)) < 0 || check_code(r, err, sizeof(err)) < 0 ||
		 image_open(r, err, sizeof(err)) < 0 || open_policy_paths(r, err, sizeof(err)) < 0)
		r->error_code = "setup"; /* an image missing, modified or not mounted, a policy path another
					  * user could swap: the administrator's to fix */
	else if (check_inputs(r, err, sizeof(err)) < 0)
		r->error_code = r->inputs_bytes > r->limits.input_bytes ? "input_too_large" : "setup";
	else if (check_work(r, err, sizeof(err)) < 0)
		r->error_code = r->policy.sessions ? "setup" : "policy_denied";
	else if (check_workspace(r, err, sizeof(err)) < 0)
		r->error_code = r->policy.workspaces ? "setup" : "policy_denied";
	else if (r->live && !r->policy.sessions) {
		snprintf(err, sizeof(err), "policy '%s' does not allow sessions (sessions = no)", r->policy.name);
		r->error_code = "policy_denied";
	}
	/* past sbx.conf's audit_code_per_day for this user (quota.c) */
	if (r->error_code == NULL && !r->dry_run && quota_code(r, err, sizeof(err)) < 0)
		r->error_code = "policy_denied";
	if (r->error_code != NULL) {
		r->refused = true;
		/* never an empty reason (rundesc.h) */
		strlcpy(r->error, err[0] ? err : "request refused", sizeof(r->error));
		/* recorded by size (and digest, by the recorder), never by text */
		if (!r->code_checked)
			r->code_len = 0;
	}
	if (setgroups(0, NULL) < 0)
		die("setgroups: %s", strerror(errno));
	if (r->code_name[0] == '\0')
		snprintf(r->code_name, sizeof(r->code_name), "main%s", r->lang ? r->lang->extension : "");
	snprintf(r->code_path, sizeof(r->code_path), "/code/%s", r->code_name);
	size_t i;
	for (i = 0; r->lang != NULL && i < r->lang->argc; i++)
		r->argv[i] = sbx_unconst(r->lang->argv[i]);
	r->argv[i++] = r->code_path;
	r->argv[i] = NULL;
}

/* Out of the caller's reach through its cgroups (cgleave.c), before this
 * process becomes root in all three uids and before anything else: the
 * caller can signal it until then anyway. sbx.conf only says where sbx's
 * cgroups are; if it does not load, the run reports that later. */
static void leave_caller_cgroups(void)
{
	static struct sbx_config conf;
	char err[SBX_ERR_LEN];

	if (geteuid() != 0)
		return; /* nothing to protect: prepare() and --check say why */
	if (load_sbx_conf(&conf, err, sizeof(err)) < 0)
		memset(&conf, 0, sizeof(conf));
	if (cgroup_leave_caller(&conf, err, sizeof(err)) < 0)
		die("%s", err);
}

int main(int argc, char **argv)
{
	static struct run run;
	struct sup *s = &sup;
	struct sandbox_fds f;
	struct cgroup_usage u;
	char err[HELPER_ERR_LEN] = "";
	uint64_t start;
	int code;

	msg_init();
	sanitize_process(argc, argv);
	leave_caller_cgroups();
	if (argc >= 2 && strcmp(argv[1], "--check") == 0) {
		if (argc != 2)
			die("usage: sbx-helper --check (no other argument)");
		check_main();
	}
	TEST_HOOK_INIT();
	TEST_MARK("supervisor-sanitized");
	s->r = &run;
	egress_init(&run);
	s->pidfd = s->sync = s->outdir = s->tmpdir = s->shmdir = s->art = s->live_ch = s->wsupper = -1;
	s->pipe_w[0] = s->pipe_w[1] = -1;
	prepare(&run, argc, argv);
	TEST_HOOK("supervisor-prepared");
	if (run.dry_run) {
		/* nothing runs, so nothing is recorded (sbx-helper(8)) */
		if (run.refused)
			die("%s", run.error);
		dry_run_send(&run);
	}

	block_term();
	if (run.apply) {
		/* one APPLY record (recorder/workspace.c), then its result */
		s->recorder = start_recorder(s, &f.out_w, &f.err_w);
		close(f.out_w);
		close(f.err_w);
		memset(&s->end, 0, sizeof(s->end));
		s->end.limit = SBX_LIMIT_NONE;
		finish(s, 0);
	}
	/* names resolved by sbx-relay (_sbxnet) before START, which lists them */
	if (!run.refused && run.policy.net == SBX_NET_ALLOW && egress_start(&run, err, sizeof(err)) < 0) {
		run.refused = true;
		strlcpy(run.error, err[0] ? err : "egress set-up failed", sizeof(run.error));
	}
	s->recorder = start_recorder(s, &f.out_w, &f.err_w);
	s->pipe_w[0] = f.out_w;
	s->pipe_w[1] = f.err_w;
	if (run.refused)
		fail_run_code(s, run.error_code, run.error);
	/* The recorder commits START while the cgroup, the namespaces and the
	 * mounts are built; the payload's exec waits for the commit (below). */
	int verdict = await_reply(s, SBX_REPLY_READY);
	if (verdict != 0)
		start_refused(s, verdict);
	s->start_pending = true;

	if (cgroup_create(&run.conf, run.run_id, &run.limits, run.alloc_nested, &s->cg, err, sizeof(err)) < 0)
		fail_run(s, err);
	TEST_HOOK("supervisor-cgroup");
	int sv[2], cgfd;
	bool placed;
	err[0] = '\0';
	cgfd = cgroup_clone_fd(s->cg, err, sizeof(err));
	if (cgfd < 0 && err[0])
		fail_run(s, err);
	f.n_cg_tasks = cgfd >= 0 ? 0 : cgroup_tasks_fds(s->cg, f.cg_tasks, err, sizeof(err));
	if (f.n_cg_tasks < 0)
		fail_run(s, err);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		fail_run(s, "socketpair failed");
	s->child = clone_sandbox(&s->pidfd, cgfd, &placed);
	if (s->child < 0) {
		snprintf(err, sizeof(err), "clone: %s", strerror(errno));
		fail_run(s, err);
	}
	if (s->child == 0) {
		close(sv[0]);
		f.sync = sv[1];
		sandbox_main(&run, &f);
	}
	close(sv[1]);
	if (cgfd >= 0)
		close(cgfd);
	for (int i = 0; i < f.n_cg_tasks; i++)
		close(f.cg_tasks[i]);
	egress_sandbox_started(&run);
	close(f.out_w);
	close(f.err_w);
	s->pipe_w[0] = s->pipe_w[1] = -1;
	close_run_extra_fds(&run); /* the sandbox child has its copies */
	if (run.stdin_fd >= 0) {
		close(run.stdin_fd);
		run.stdin_fd = -1;
	}
	s->sync = sv[0];
	int mapped = map_ids(&run, s->child, err, sizeof(err));
	TEST_MARK("supervisor-ids-mapped");
	/* v1: the sandbox joins by itself (cgroup_join_self); v2: it was born there */
	if (mapped < 0 || (!placed && f.n_cg_tasks == 0 && cgroup_attach(s->cg, s->child, err, sizeof(err)) < 0) ||
	    await_joined(s, err, sizeof(err)) < 0) {
		reap_sandbox(s);
		fail_run(s, err);
	}
	TEST_HOOK("supervisor-mapped");
	if (write(s->sync, &(char){SBX_SANDBOX_GO}, 1) != 1)
		kill_sandbox(s, KILL_POLL, SBX_LIMIT_NONE);
	/* no commit, no run: the payload starts only on SBX_SANDBOX_EXEC */
	verdict = await_reply(s, SBX_REPLY_START_OK);
	s->start_pending = false;
	TEST_MARK("supervisor-start-ok");
	if (verdict != 0)
		start_refused(s, verdict);
	if (run.live)
		send_live_cgroup(s);
	/* a sandbox whose set-up failed meanwhile is gone: its message says
	 * why (read after supervise), not a failed write */
	if (write(s->sync, &(char){SBX_SANDBOX_EXEC}, 1) != 1)
		kill(s->child, SIGKILL);
	start = (uint64_t)sbx_mono_ms();
	err[0] = '\0';
	supervise(s, start, err, sizeof(err));
	TEST_MARK("supervisor-payload-exit");
	/* pid 1 is gone, so is every process of its namespace (unless frozen) */
	reap_sandbox(s);
	egress_stop(&run);
	/* a frozen sandbox init holds its end: nothing to read, no EOF */
	while (!s->unreaped && s->sync >= 0 && sandbox_msg(s, err, sizeof(err)))
		; /* a status sent just before init exited */
	s->end.wall_ms = (uint64_t)sbx_mono_ms() - start;
	cgroup_usage(s->cg, &u);
	code = classify(s, &u, err);
	/* refused starts the program lived with (fewer than PIDS_REFUSED) */
	if (s->end.limit == SBX_LIMIT_NONE && u.pids_max_hits > 0)
		s->end.limit = SBX_LIMIT_PIDS;
	note_disk_full(s);
	s->end.cpu_ms = u.cpu_ms;
	s->end.memory_peak_bytes = u.memory_peak_bytes;
	s->end.pids_peak = u.pids_peak;
	if (cgroup_destroy(s->cg) < 0 && s->end.outcome == SBX_OUTCOME_OK)
		strlcpy(s->end.error, "cgroup could not be removed", sizeof(s->end.error));
	s->cg = NULL;
	TEST_MARK("supervisor-accounted");
	start_collector(s);
	finish(s, code);
}
