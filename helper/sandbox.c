/* SPDX-License-Identifier: ISC */
/*
 * The cloned child: pid 1 of the sandbox's pid namespace. It builds the
 * filesystem, gives up every privilege, installs the seccomp filter, then
 * forks the payload and stays as a minimal init: it reaps every process
 * re-parented to it and reports the payload's wait status to the
 * supervisor. When it exits the kernel kills everything left in the
 * namespace (pid_namespaces(7)).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <sched.h>

#include "helper.h"
#include "paths.h"
#include "proto.h"
#include "runenv.h"
#include "testhook.h"

static volatile pid_t payload_pid;
static unsigned run_cpus; /* CPUs the run may use (cpus.c) */

static _Noreturn void fail(int sync, const char *msg)
{
	char buf[HELPER_ERR_LEN + 1];

	buf[0] = SBX_SANDBOX_ERROR;
	snprintf(buf + 1, sizeof(buf) - 1, "%s", msg);
	(void)send(sync, buf, 1 + strlen(buf + 1), MSG_NOSIGNAL);
	_exit(SBX_EXIT_FAILURE);
}

/* pid 1 only receives the signals it has handlers for: pass the ones the
 * client asked for to the payload's process group. */
static void forward(int sig)
{
	if (payload_pid > 0)
		kill(-payload_pid, sig);
}

static int loopback_up(char *err, size_t errlen)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		snprintf(err, errlen, "network: bringing lo up: %s", strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* Every capability set emptied: bounding (needs CAP_SETPCAP, so first),
 * then the ids, then permitted/effective/inheritable and ambient. Inside a
 * user namespace where uid 0 is unmapped, setresuid() does not clear
 * capabilities by itself (capabilities(7)), so this is not optional. */
static int drop_privileges(const struct run *r, char *err, size_t errlen)
{
	cap_t none;

	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "dropping capability %d from the bounding set: %s", c, strerror(errno));
			return -1;
		}
	if (setresgid(r->gid, r->gid, r->gid) < 0 || setresuid(r->uid, r->uid, r->uid) < 0) {
		snprintf(err, errlen, "setting ids %u:%u: %s", (unsigned)r->uid, (unsigned)r->gid, strerror(errno));
		return -1;
	}
	none = cap_init();
	if (none == NULL || cap_set_proc(none) < 0 || cap_reset_ambient() < 0) {
		snprintf(err, errlen, "clearing capabilities: %s", strerror(errno));
		cap_free(none);
		return -1;
	}
	cap_free(none);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The supervisor only closes its end of the socket by dying. */
static bool supervisor_gone(int sync)
{
	char c;

	return recv(sync, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static int become_caller(const struct run *r, char *err, size_t errlen)
{
	cap_t caps;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid(r->gid, r->gid, r->gid) < 0 ||
	    setresuid(r->uid, r->uid, r->uid) < 0 || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) {
		snprintf(err, errlen, "setting ids %u:%u: %s", (unsigned)r->uid, (unsigned)r->gid, strerror(errno));
		return -1;
	}
	/* effective = permitted: setresuid(2) may have emptied the effective set */
	caps = cap_get_proc();
	if (caps == NULL || cap_fill(caps, CAP_EFFECTIVE, CAP_PERMITTED) < 0 || cap_set_proc(caps) < 0) {
		snprintf(err, errlen, "raising capabilities: %s", strerror(errno));
		cap_free(caps);
		return -1;
	}
	cap_free(caps);
	return 0;
}

static _Noreturn void exec_payload(const struct run *r, const struct sandbox_fds *f)
{
	char err[HELPER_ERR_LEN];
	static struct sbx_runenv env;
	sigset_t none;
	int devnull;

	TEST_MARK("payload-forked");

	/* ignored signals stay ignored across execve(2) */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	/* stdin: the caller's, read to its end into a sealed memfd by the
	 * client (sbx(1)), from its start for every attempt; else /dev/null */
	devnull = r->stdin_fd >= 0 ? r->stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (r->stdin_fd >= 0)
		(void)lseek(r->stdin_fd, 0, SEEK_SET);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(f->out_w, 1) < 0 || dup2(f->err_w, 2) < 0)
		_exit(SBX_EXIT_CANNOT_EXEC);
	TEST_MARK("payload-exec");
	close_range(3, ~0U, 0);
	/* a live session's cpu_time is per call (the driver's ITIMER_PROF):
	 * RLIMIT_CPU would count the whole session */
	struct sbx_limits pl = r->limits;
	if (r->live)
		pl.cpu_ms = UINT64_MAX - 2000;
	if (payload_rlimits(r->caller_rlimits, &pl, err, sizeof(err)) < 0) {
		dprintf(2, "sbx: %s\n", err);
		_exit(SBX_EXIT_CANNOT_EXEC);
	}
	sbx_runenv_build(&env, &r->policy, r->lang, run_cpus);
	/* a session's files are where the payload starts */
	if (chdir(r->work_tree >= 0 ? "/work" : "/tmp") < 0)
		_exit(SBX_EXIT_CANNOT_EXEC);
	execve(r->argv[0], r->argv, env.envp);
	int e = errno;
	dprintf(2, "sbx: cannot execute %s: %s", r->argv[0], strerror(e));
	if (r->policy.image[0] && e == ENOENT)
		dprintf(2, " (not in image '%s': sbx-image show %s lists its packages)", r->policy.image,
			r->policy.image);
	dprintf(2, "\n");
	errno = e;
	_exit(errno == ENOENT ? SBX_EXIT_NOT_FOUND : SBX_EXIT_CANNOT_EXEC);
}

/*
 * pid 1's loop: reap everything, report the payload's status, and end the
 * sandbox if the supervisor's socket hangs up (belt and braces with
 * PR_SET_PDEATHSIG: pid 1 exiting kills the whole namespace).
 */
static _Noreturn void init_loop(int sync, pid_t payload)
{
	sigset_t chld;
	int sfd, status;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		_exit(SBX_EXIT_FAILURE);
	for (;;) {
		struct pollfd p[3] = {{.fd = sfd, .events = POLLIN}, {.fd = sync, .events = POLLIN},
				      {.fd = egress_notify_fd(), .events = POLLIN}};
		struct signalfd_siginfo si;
		pid_t w;

		/* reap first: SIGCHLD may have arrived before the mask */
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == payload) {
				char msg[1 + sizeof(int)];
				msg[0] = SBX_SANDBOX_STATUS;
				memcpy(msg + 1, &status, sizeof(int));
				(void)send(sync, msg, sizeof(msg), MSG_NOSIGNAL);
				_exit(0);
			}
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			_exit(SBX_EXIT_FAILURE);
		if (p[2].revents & POLLIN)
			egress_notify_handle(); /* a connect(2) of the payload's */
		if (p[1].revents & (POLLHUP | POLLERR) || (p[1].revents & POLLIN && supervisor_gone(sync)))
			_exit(SBX_EXIT_FAILURE);
		while (read(sfd, &si, sizeof(si)) > 0)
			;
	}
}

void sandbox_main(const struct run *r, const struct sandbox_fds *f)
{
	char err[HELPER_ERR_LEN], go;
	struct sigaction sa;
	int outdir;
	pid_t pid;

	/* the supervisor dying must take the sandbox with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* SIGTERM is the supervisor's to take (main.c block_term); init
	 * forwards it to the payload */
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
	/* v1: into the run's cgroup before anything else (cgroup.c: the
	 * single-thread path, without the global lock) */
	if (cgroup_join_self(f->cg_tasks, f->n_cg_tasks, err, sizeof(err)) < 0)
		fail(f->sync, err);
	for (int i = 0; i < f->n_cg_tasks; i++)
		close(f->cg_tasks[i]);
	/* nothing of the caller's (terminal included) reaches the sandbox */
	{
		int keep[4 + RUN_EXTRA_FDS + 1] = {f->sync, f->out_w, f->err_w, r->stdin_fd};
		size_t nk = r->stdin_fd >= 0 ? 4 : 3;
		nk += run_extra_fds(r, keep + nk, RUN_EXTRA_FDS);
		nk += egress_keep_fd(r, keep + nk);
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
			_exit(SBX_EXIT_FAILURE);
		keep_fds(keep, nk);
	}
	TEST_HOOK("sandbox-cloned");
	if (send(f->sync, &(char){SBX_SANDBOX_JOINED}, 1, MSG_NOSIGNAL) != 1)
		_exit(SBX_EXIT_FAILURE);
	if (read(f->sync, &go, 1) != 1 || go != SBX_SANDBOX_GO)
		_exit(SBX_EXIT_FAILURE);
	/* Take the caller's ids now: files we create on the sandbox's tmpfs
	 * need an owner mapped in the user namespace (EOVERFLOW otherwise).
	 * Capabilities in the namespace are kept for the set-up below. */
	if (become_caller(r, err, sizeof(err)) < 0)
		fail(f->sync, err);
	/* The payload's keys are its own: a fresh, empty session keyring,
	 * owned (and charged to the quota of) the caller's uid, named after
	 * the run. The user and persistent keyrings are per user namespace
	 * already, and keyctl(2) is denied by the seccomp filter besides. */
	{
		char name[8 + SBX_ID_LEN + 1];
		snprintf(name, sizeof(name), "sbx-run-%s", r->run_id);
		if (new_session_keyring(name, err, sizeof(err)) < 0)
			fail(f->sync, err);
	}
	TEST_HOOK("sandbox-caller");
	/* The id change cleared PR_SET_PDEATHSIG (prctl(2)); set it again and
	 * make sure the supervisor did not die in between. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (supervisor_gone(f->sync))
		_exit(SBX_EXIT_FAILURE);
	/* the supervisor has moved us into the run's cgroup: make it our root */
	if (unshare(CLONE_NEWCGROUP) < 0) {
		snprintf(err, sizeof(err), "cgroup namespace: %s", strerror(errno));
		fail(f->sync, err);
	}
	if (sethostname("sbx", 3) < 0 || setdomainname("sbx", 3) < 0) {
		snprintf(err, sizeof(err), "hostname: %s", strerror(errno));
		fail(f->sync, err);
	}
	if (setup_mounts(r, err, sizeof(err)) < 0)
		fail(f->sync, err);
	{
		/* copied to /code and /in, moved to /work; r->work_tree stays as
		 * the marker that /work exists */
		int fds[RUN_EXTRA_FDS];
		size_t n = run_extra_fds(r, fds, RUN_EXTRA_FDS);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
	}
	TEST_HOOK("sandbox-mounted");
	if (r->policy.net != SBX_NET_NONE && loopback_up(err, sizeof(err)) < 0)
		fail(f->sync, err);
	if (r->policy.net == SBX_NET_ALLOW && egress_sandbox_setup(r, err, sizeof(err)) < 0)
		fail(f->sync, err);
	/* The supervisor keeps /out's tmpfs alive through this fd and hands it
	 * to the artifact collector once everything in here is dead. */
	outdir = open("/out", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (outdir < 0 || sbx_send_fd(f->sync, &(char){SBX_SANDBOX_OUTDIR}, 1, outdir, 0) < 0) {
		snprintf(err, sizeof(err), "passing /out: %s", strerror(errno));
		fail(f->sync, err);
	}
	close(outdir);
	/* the workspace's upper layer, for the changeset (changeset.c) */
	if (sandbox_ws_upper >= 0) {
		if (sbx_send_fd(f->sync, &(char){SBX_SANDBOX_WSUPPER}, 1, sandbox_ws_upper, 0) < 0) {
			snprintf(err, sizeof(err), "passing the workspace: %s", strerror(errno));
			fail(f->sync, err);
		}
		close(sandbox_ws_upper);
		sandbox_ws_upper = -1;
	}
	/* and /tmp's and /dev/shm's, so it can tell whether the payload
	 * filled them (fstatfs) */
	{
		static const struct { const char *path; char msg; } scratch[] = {
			{"/tmp", SBX_SANDBOX_TMPDIR}, {"/dev/shm", SBX_SANDBOX_SHMDIR}};
		for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++) {
			outdir = open(scratch[i].path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (outdir < 0 || sbx_send_fd(f->sync, &scratch[i].msg, 1, outdir, 0) < 0) {
				snprintf(err, sizeof(err), "passing %s: %s", scratch[i].path, strerror(errno));
				fail(f->sync, err);
			}
			close(outdir);
		}
	}
	{
		cpu_set_t cpus;
		run_cpus = run_cpu_set(r, &cpus);
		if (CPU_COUNT(&cpus) > 0 && sched_setaffinity(0, sizeof(cpus), &cpus) < 0) {
			snprintf(err, sizeof(err), "CPU affinity: %s", strerror(errno));
			fail(f->sync, err);
		}
	}
	if (drop_privileges(r, err, sizeof(err)) < 0)
		fail(f->sync, err);
	TEST_HOOK("sandbox-dropped");
	/* cleared again by the credential change (PR_SET_PDEATHSIG in prctl(2)) */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (supervisor_gone(f->sync))
		_exit(SBX_EXIT_FAILURE);
	setsid();
	{
		int listener;
		if (install_seccomp(&r->policy, &listener, err, sizeof(err)) < 0)
			fail(f->sync, err);
		if (r->policy.net == SBX_NET_ALLOW && egress_notify_listen(listener) < 0) {
			snprintf(err, sizeof(err), "seccomp: load: %s", strerror(ENOTSUP));
			fail(f->sync, err);
		}
	}
	TEST_HOOK("sandbox-seccomp");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* no commit, no run: the supervisor says when START is committed */
	if (read(f->sync, &go, 1) != 1 || go != SBX_SANDBOX_EXEC)
		_exit(SBX_EXIT_FAILURE);
	TEST_MARK("sandbox-exec-go");
	pid = fork();
	if (pid < 0) {
		snprintf(err, sizeof(err), "fork: %s", strerror(errno));
		fail(f->sync, err);
	}
	if (pid == 0)
		exec_payload(r, f);
	payload_pid = pid;
	close(f->out_w);
	close(f->err_w);
	init_loop(f->sync, pid);
}
