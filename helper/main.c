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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <bsd/string.h>
#include <sodium.h>

#include "helper.h"
#include "proto.h"
#include "testhook.h"

/* From SIGINT at the wall-time limit to SIGKILL (milliseconds). */
#define WALL_GRACE_MS 500
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

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	return (uint64_t)now_ns(CLOCK_MONOTONIC) / 1000000;
}

struct sup {
	struct run *r;
	int ctl;             /* recorder */
	int art;             /* our end of the artifact channel, for the collector */
	pid_t recorder;
	struct cgroup *cg;
	pid_t child;
	int pipe_w[2];       /* write ends of the payload's stdout/stderr pipes, until the sandbox has them */
	int pidfd, sync, outdir, tmpdir, shmdir; /* O_PATH fds of the sandbox's /out, /tmp, /dev/shm */
	struct run_end end;
	bool have_status;
	int status;
	const char *killed_for;  /* limit or event that made us kill, or NULL */
};

static void kill_sandbox(struct sup *s, const char *why)
{
	if (s->killed_for == NULL)
		s->killed_for = why;
	if (s->child > 0)
		kill(s->child, SIGKILL);
}

static pid_t start_recorder(struct sup *s, int *out_w, int *err_w)
{
	int ctl[2], out[2], errp[2], art[2];
	char err[HELPER_ERR_LEN];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, art) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		die("pipes: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ctl[0]);
		close(art[0]);
		close(out[1]);
		close(errp[1]);
		close(s->r->control_fd);
		egress_close_in_child(s->r, 1);
		/* the inputs stay: the result lists their SHA-256 */
		if (s->r->work_tree >= 0)
			close(s->r->work_tree);
		if (s->r->work_fd >= 0)
			close(s->r->work_fd);
		image_close(s->r);
		if (drop_to(s->r->sbx_uid, s->r->sbx_gid, err, sizeof(err)) < 0)
			die("recorder: %s", err);
		TEST_HOOK("recorder-dropped");
		recorder_main(s->r, ctl[1], out[0], errp[0], art[1]);
	}
	close(ctl[1]);
	close(art[1]);
	close(out[0]);
	close(errp[0]);
	close(s->r->result_fd);
	egress_recorder_started(s->r);
	s->ctl = ctl[0];
	s->art = art[0];
	*out_w = out[1];
	*err_w = errp[1];
	return pid;
}

/* Wait for the recorder's verdict on the START record: no commit, no run.
 * Returns 0, or the byte the recorder sent instead (0 if none). */
static int await_start(struct sup *s)
{
	struct pollfd p = {.fd = s->ctl, .events = POLLIN};
	char c = 0;

	if (poll(&p, 1, 60000) != 1 || read(s->ctl, &c, 1) != 1)
		return -1;
	return c == REC_START_OK ? 0 : c;
}

/* Reap child pid within timeout_ms, killing it past that. Returns its wait
 * status, or -1 if it had to be killed. */
static int wait_timeout(pid_t pid, int timeout_ms)
{
	int st, pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = pfd, .events = POLLIN};

	if (pfd >= 0) {
		while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	if (waitpid(pid, &st, WNOHANG) == pid)
		return st;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static int wait_recorder(struct sup *s)
{
	/* two SQLite commits, each with a 10 s busy timeout, and the result */
	int st = wait_timeout(s->recorder, 60000);

	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Tell the recorder how the run ended and let it finish; our exit status. */
static _Noreturn void finish(struct sup *s, int code)
{
	s->end.magic = RUN_END_MAGIC;
	if (send(s->ctl, &s->end, sizeof(s->end), MSG_NOSIGNAL) < 0)
		warnx1("recorder gone before the END record");
	if (s->art >= 0)
		close(s->art);
	if (wait_recorder(s) < 0) {
		warnx1("audit: the END record of run %s was not written", s->r->run_id);
		_exit(SBX_EXIT_FAILURE);
	}
	egress_reap(s->r);
	if (s->end.error[0])
		warnx1("%s", s->end.error);
	_exit(code);
}

static _Noreturn void fail_run(struct sup *s, const char *msg)
{
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
	strlcpy(s->end.outcome, "sandbox_error", sizeof(s->end.outcome));
	strlcpy(s->end.error, msg, sizeof(s->end.error));
	s->end.exit_code = -1;
	finish(s, SBX_EXIT_FAILURE);
}

static pid_t clone_sandbox(int *pidfd)
{
	struct clone_args args;

	memset(&args, 0, sizeof(args));
	args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
		     CLONE_NEWUTS | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)pidfd;
	args.exit_signal = SIGCHLD;
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
	int n = recv_fd(s->sync, buf, sizeof(buf) - 1, &fd);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (buf[0] == 'O' && fd >= 0 && s->outdir < 0) {
		s->outdir = fd;
		return true;
	}
	if (buf[0] == 'T' && fd >= 0 && s->tmpdir < 0) {
		s->tmpdir = fd;
		return true;
	}
	if (buf[0] == 'S' && fd >= 0 && s->shmdir < 0) {
		s->shmdir = fd;
		return true;
	}
	if (fd >= 0)
		close(fd);
	if (buf[0] == 'X' && n == 1 + (int)sizeof(int)) {
		memcpy(&s->status, buf + 1, sizeof(int));
		s->have_status = true;
	} else if (buf[0] == 'E') {
		snprintf(errbuf, errlen, "sandbox set-up: %.200s", buf + 1);
	}
	return true;
}

static void supervise(struct sup *s, uint64_t start_ms, char *setup_err, size_t errlen)
{
	const struct sbx_limits *l = &s->r->limits;
	uint64_t deadline = start_ms + l->wall_ms, grace = 0, hard = 0;
	bool control_open = true, ctl_open = true, sync_open = true;

	for (;;) {
		struct pollfd p[4] = {
			{.fd = s->pidfd, .events = POLLIN},
			{.fd = sync_open ? s->sync : -1, .events = POLLIN},
			{.fd = control_open ? s->r->control_fd : -1, .events = POLLIN},
			{.fd = ctl_open ? s->ctl : -1, .events = POLLIN},
		};
		struct cgroup_usage u;
		uint64_t now = mono_ms();
		int wait = 100;

		if (now >= deadline && hard == 0) {
			/* Interrupt first, so an interpreter can say where it was
			 * stuck (Python's KeyboardInterrupt traceback); the kill
			 * follows WALL_GRACE_MS later whatever the payload does. */
			if (s->killed_for == NULL)
				s->killed_for = "wall";
			kill(s->child, SIGINT);
			hard = now + WALL_GRACE_MS;
		}
		if (hard && now >= hard)
			kill_sandbox(s, "wall");
		if (grace && now >= grace)
			kill_sandbox(s, "signal");
		if (deadline > now && deadline - now < (uint64_t)wait)
			wait = (int)(deadline - now);
		if (hard > now && hard - now < (uint64_t)wait)
			wait = (int)(hard - now);
		if (poll(p, 4, wait) < 0 && errno != EINTR)
			kill_sandbox(s, "poll");
		if (p[0].revents)
			return;
		if (p[1].revents && !sandbox_msg(s, setup_err, errlen))
			sync_open = false;
		if (p[2].revents) {
			char c;
			ssize_t n = read(s->r->control_fd, &c, 1);
			if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
				/* another reader of the caller's took it: nothing to do */
			} else if (n <= 0) {
				/* the client is gone: nobody wants this run any more */
				control_open = false;
				kill_sandbox(s, "client");
			} else if (c == 'I' || c == 'T') {
				kill(s->child, c == 'I' ? SIGINT : SIGTERM);
				if (!grace)
					grace = mono_ms() + 2000;
			}
		}
		if (p[3].revents) {
			char c;
			ssize_t n = read(s->ctl, &c, 1);
			if (n <= 0) {
				ctl_open = false;
				kill_sandbox(s, "recorder");
			} else if (c == REC_KILL_OUTPUT)
				kill_sandbox(s, "output");
		}
		/* limits the kernel does not end the run for by itself */
		cgroup_usage(s->cg, &u);
		if (u.cpu_ms >= l->cpu_ms)
			kill_sandbox(s, "cpu");
		if (u.pids_max_hits >= PIDS_REFUSED)
			kill_sandbox(s, "pids");
		if (u.oom_kills > 0)
			kill_sandbox(s, "memory");
	}
}

static int classify(struct sup *s, const struct cgroup_usage *u, const char *setup_err)
{
	struct run_end *e = &s->end;
	const char *k = s->killed_for;
	int sig = 0, code = -1;

	if (s->have_status) {
		if (WIFEXITED(s->status))
			code = WEXITSTATUS(s->status);
		else if (WIFSIGNALED(s->status))
			sig = WTERMSIG(s->status);
	}
	/* A limit the kernel enforced shows in the counters even when our
	 * poll did not see it first. */
	if (k == NULL && u->oom_kills > 0 && (sig == SIGKILL || !s->have_status))
		k = "memory";
	if (k == NULL && (sig == SIGXCPU || (sig == SIGKILL && u->cpu_ms >= s->r->limits.cpu_ms)))
		k = "cpu";
	e->exit_code = code;
	e->signal = sig;
	if (k != NULL && strcmp(k, "wall") == 0) {
		strlcpy(e->outcome, "timeout", sizeof(e->outcome));
		strlcpy(e->limit, "wall_time", sizeof(e->limit));
		return SBX_EXIT_TIMEOUT;
	}
	if (k != NULL && strcmp(k, "cpu") == 0) {
		strlcpy(e->outcome, "cpu_limit", sizeof(e->outcome));
		strlcpy(e->limit, "cpu_time", sizeof(e->limit));
		return SBX_EXIT_TIMEOUT;
	}
	if (k != NULL && (strcmp(k, "memory") == 0 || strcmp(k, "pids") == 0 || strcmp(k, "output") == 0)) {
		snprintf(e->outcome, sizeof(e->outcome), "%s_limit", k);
		strlcpy(e->limit, k, sizeof(e->limit));
		e->signal = SIGKILL;
		e->exit_code = -1;
		return 128 + SIGKILL;
	}
	if (k != NULL && (strcmp(k, "recorder") == 0 || strcmp(k, "poll") == 0)) {
		strlcpy(e->outcome, "sandbox_error", sizeof(e->outcome));
		snprintf(e->error, sizeof(e->error), "run stopped: %s failed", k);
		return SBX_EXIT_FAILURE;
	}
	if (!s->have_status) {
		if (k != NULL) { /* client went away or ignored an interrupt */
			strlcpy(e->outcome, "signal", sizeof(e->outcome));
			e->signal = SIGKILL;
			return 128 + SIGKILL;
		}
		strlcpy(e->outcome, "sandbox_error", sizeof(e->outcome));
		strlcpy(e->error, setup_err[0] ? setup_err : "sandbox init died", sizeof(e->error));
		return SBX_EXIT_FAILURE;
	}
	if (sig == SIGXFSZ) {
		/* RLIMIT_FSIZE, the policy's file_size (setrlimit(2)) */
		strlcpy(e->outcome, "file_size", sizeof(e->outcome));
		strlcpy(e->limit, "file_size", sizeof(e->limit));
		return 128 + sig;
	}
	if (sig) {
		strlcpy(e->outcome, "signal", sizeof(e->outcome));
		return 128 + sig;
	}
	strlcpy(e->outcome, code == 0 ? "ok" : "error", sizeof(e->outcome));
	return code;
}

/* Which of the size-capped tmpfs mounts /tmp, /dev/shm and /out the
 * sandbox left without a free block or inode: the program met ENOSPC there
 * (or stopped just short of it). Read once every sandboxed process is dead,
 * through the O_PATH fds the sandbox init passed before the payload
 * started, so a killed run is covered too. A full mount does not end the
 * run: the program sees ENOSPC and its outcome stays its own. When no
 * other limit fired, the limit field (result JSON and the audit END
 * record) names the cap it ran into: tmp_size, shm_size, out_size, two of
 * them as tmp+out_size, tmp+shm_size, shm+out_size, all three as
 * tmp+shm+out (the record's limit field holds 15 bytes). */
static void note_disk_full(struct sup *s)
{
	static const char *const names[] = {"",         "tmp_size",     "out_size",     "tmp+out_size",
					    "shm_size", "tmp+shm_size", "shm+out_size", "tmp+shm+out"};
	int *const mnt[] = {&s->tmpdir, &s->outdir, &s->shmdir};
	const uint8_t bits[] = {DISK_FULL_TMP, DISK_FULL_OUT, DISK_FULL_SHM};
	struct run_end *e = &s->end;
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
	if (e->limit[0] == '\0' && e->disk_full)
		strlcpy(e->limit, names[e->disk_full & 7], sizeof(e->limit));
}

static void start_collector(struct sup *s)
{
	pid_t pid;

	if (s->outdir < 0)
		return;
	TEST_HOOK("supervisor-collect");
	pid = fork();
	if (pid == 0) {
		close(s->ctl);
		collector_main(s->r, s->outdir, s->art);
	}
	close(s->outdir);
	s->outdir = -1;
	close(s->art);
	s->art = -1;
	if (pid < 0)
		return;
	/* the collector only copies bounded files out of a tmpfs */
	wait_timeout(pid, 30000);
}

static void prepare(struct run *r, int argc, char **argv)
{
	char err[SBX_ERR_LEN] = "";
	unsigned char rnd[16];
	struct passwd *pw;

	r->uid = getuid();
	r->gid = getgid();
	if (geteuid() != 0)
		die("not installed setuid root (see sbx-postinst)");
	/* All three uids 0 from here: the caller can no longer signal, stop or
	 * ptrace this process (kill(2), ptrace(2) access rules). */
	if (setresuid(0, 0, 0) < 0 || setresgid(0, 0, 0) < 0)
		die("setresuid: %s", strerror(errno));
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	reset_oom_score();
	if (parse_args(argc, argv, r, err, sizeof(err)) < 0)
		die("%s", err);
	int keep[4 + SBX_MAX_INPUTS + 2] = {r->code_fd, r->result_fd, r->control_fd, r->stdin_fd};
	size_t nk = r->stdin_fd >= 0 ? 4 : 3;
	keep_fds(keep, nk + run_extra_fds(r, keep + nk, SBX_MAX_INPUTS + 2));
	if (raise_rlimits(err, sizeof(err)) < 0 || lookup_caller(r, err, sizeof(err)) < 0)
		die("%s", err);
	pw = getpwnam("_sbx");
	if (pw == NULL || pw->pw_uid == 0)
		die("system user _sbx is missing: run sbx-postinst");
	/* die() does not return; cppcheck 2.10 ignores _Noreturn here. */
	// cppcheck-suppress nullPointerRedundantCheck
	r->sbx_uid = pw->pw_uid;
	// cppcheck-suppress nullPointerRedundantCheck
	r->sbx_gid = pw->pw_gid;
	if (sodium_init() < 0)
		die("libsodium init failed");
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		die("getrandom: %s", strerror(errno));
	hex(rnd, sizeof(rnd), r->run_id);
	r->realtime_ns = now_ns(CLOCK_REALTIME);
	r->boottime_ns = now_ns(CLOCK_BOOTTIME);
	if (load_config(r, err, sizeof(err)) < 0 || load_policy(r, err, sizeof(err)) < 0)
		die("%s", err);
	r->policy_loaded = true;
	/* From here on every failure is audited. */
	r->limits = r->policy.limits;
	if (caller_may_use(r, err, sizeof(err)) < 0 ||
	    sbx_limits_tighten(&r->limits, &r->request, err, sizeof(err)) < 0 ||
	    egress_narrow(r, err, sizeof(err)) < 0 ||
	    read_code(r, err, sizeof(err)) < 0 || check_inputs(r, err, sizeof(err)) < 0 ||
	    check_work(r, err, sizeof(err)) < 0 || own_control_fd(r, err, sizeof(err)) < 0 ||
	    image_open(r, err, sizeof(err)) < 0) {
		/* never an empty error: an empty one would let the run go ahead */
		strlcpy(r->error, err[0] ? err : "request refused", sizeof(r->error));
		if (r->code == NULL) {
			r->code = strdup("");
			r->code_len = 0;
		}
	}
	if (setgroups(0, NULL) < 0)
		die("setgroups: %s", strerror(errno));
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)r->code, r->code_len);
	if (r->code_name[0] == '\0')
		snprintf(r->code_name, sizeof(r->code_name), "main%s", r->lang->extension);
	snprintf(r->code_path, sizeof(r->code_path), "/code/%s", r->code_name);
	size_t i;
	for (i = 0; i < r->lang->argc; i++)
		r->argv[i] = (char *)r->lang->argv[i];
	r->argv[i++] = r->code_path;
	r->argv[i] = NULL;
}

int main(int argc, char **argv)
{
	static struct run run;
	static struct sup sup;
	struct sup *s = &sup;
	struct sandbox_fds f;
	struct cgroup_usage u;
	char err[HELPER_ERR_LEN] = "";
	uint64_t start;
	int code;

	sanitize_process(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "--check") == 0) {
		if (argc != 2)
			die("usage: sbx-helper --check (no other argument)");
		check_main();
	}
	TEST_HOOK_INIT();
	s->r = &run;
	egress_init(&run);
	s->pidfd = s->sync = s->outdir = s->tmpdir = s->shmdir = s->art = -1;
	s->pipe_w[0] = s->pipe_w[1] = -1;
	prepare(&run, argc, argv);
	TEST_HOOK("supervisor-prepared");
	if (run.dry_run) {
		/* nothing runs, so nothing is recorded (sbx-helper(8)) */
		if (run.error[0])
			die("%s", run.error);
		dry_run_print(&run);
	}

	/* names resolved by sbx-relay (_sbxnet) before START, which lists them */
	if (!run.error[0] && run.policy.net == SBX_NET_ALLOW && egress_start(&run, err, sizeof(err)) < 0)
		strlcpy(run.error, err, sizeof(run.error));
	s->recorder = start_recorder(s, &f.out_w, &f.err_w);
	s->pipe_w[0] = f.out_w;
	s->pipe_w[1] = f.err_w;
	if (run.error[0])
		fail_run(s, run.error);
	int verdict = await_start(s);
	if (verdict == REC_START_FAIL)
		_exit(SBX_EXIT_FAILURE); /* the recorder said why, in one line */
	if (verdict != 0)
		die("audit log unavailable: the recorder died; the run was not started");

	if (cgroup_create(&run.conf, run.run_id, &run.limits, &s->cg, err, sizeof(err)) < 0)
		fail_run(s, err);
	TEST_HOOK("supervisor-cgroup");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		fail_run(s, "socketpair failed");
	s->child = clone_sandbox(&s->pidfd);
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
	if (map_ids(&run, s->child, err, sizeof(err)) < 0 ||
	    cgroup_attach(s->cg, s->child, err, sizeof(err)) < 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
		fail_run(s, err);
	}
	TEST_HOOK("supervisor-mapped");
	if (write(s->sync, "G", 1) != 1)
		kill_sandbox(s, "poll");
	start = mono_ms();
	err[0] = '\0';
	supervise(s, start, err, sizeof(err));
	/* pid 1 is gone, so is every process of its namespace */
	kill(s->child, SIGKILL);
	waitpid(s->child, NULL, 0);
	egress_stop(&run);
	while (s->sync >= 0 && sandbox_msg(s, err, sizeof(err)))
		; /* a status sent just before init exited */
	s->end.wall_ms = mono_ms() - start;
	cgroup_usage(s->cg, &u);
	code = classify(s, &u, err);
	/* refused starts the program lived with (fewer than PIDS_REFUSED) */
	if (s->end.limit[0] == '\0' && u.pids_max_hits > 0)
		strlcpy(s->end.limit, "pids", sizeof(s->end.limit));
	note_disk_full(s);
	s->end.cpu_ms = u.cpu_ms;
	s->end.memory_peak_bytes = u.memory_peak_bytes;
	s->end.pids_peak = u.pids_peak;
	if (cgroup_destroy(s->cg) < 0 && strcmp(s->end.outcome, "ok") == 0)
		strlcpy(s->end.error, "cgroup could not be removed", sizeof(s->end.error));
	s->cg = NULL;
	start_collector(s);
	finish(s, code);
}
