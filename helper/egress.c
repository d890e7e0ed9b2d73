/* SPDX-License-Identifier: ISC */
/*
 * Egress, the supervisor's part (root). It adds as little as it can to
 * root code: the allow list comes from the root-owned policy, --allow may
 * only pick entries of it, and the names are resolved by sbx-relay after
 * it dropped to _sbxnet. Root reads back fixed-size records and checks
 * each field; it never sees a DNS message. docs/egress.md has the design.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <bsd/string.h>

#include "helper.h"
#include "paths.h"
#include "testhook.h"
#include "clock.h"

void egress_init(struct run *r)
{
	r->egress.relay = -1;
	r->egress.ctl = r->egress.sandbox = r->egress.report = -1;
}

void egress_policy_path(const struct run *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s/sbx/policies.d/%s.policy", SBX_SYSCONFDIR, r->policy_name);
}

int egress_narrow(struct run *r, char *err, size_t errlen)
{
	struct sbx_egress *pe = &r->policy.egress;
	const struct egress_run *e = &r->egress;
	struct sbx_egress_rule kept[SBX_EGRESS_MAX];
	size_t n = 0;

	if (e->n_want == 0)
		return 0;
	if (r->policy.net != SBX_NET_ALLOW) {
		snprintf(err, errlen, "--allow: policy '%s' allows no network services (its [network] mode is %s)",
			 r->policy_name, sbx_net_mode_name(r->policy.net));
		return -1;
	}
	for (size_t w = 0; w < e->n_want; w++) {
		bool found = false;
		for (size_t i = 0; i < pe->n_allow; i++)
			found |= pe->allow[i].port == e->want[w].port && strcmp(pe->allow[i].host, e->want[w].host) == 0;
		if (!found) {
			char hp[SBX_HOSTPORT_LEN];
			sbx_hostport_format(e->want[w].host, e->want[w].port, hp, sizeof(hp));
			snprintf(err, errlen, "--allow: %s is not in the allow list of policy '%s' (sbx policies shows it)",
				 hp, r->policy_name);
			return -1;
		}
	}
	/* policy order, so that a rule's index means the same everywhere */
	for (size_t i = 0; i < pe->n_allow; i++)
		for (size_t w = 0; w < e->n_want; w++)
			if (pe->allow[i].port == e->want[w].port && strcmp(pe->allow[i].host, e->want[w].host) == 0)
				kept[n++] = pe->allow[i];
	memcpy(pe->allow, kept, n * sizeof(kept[0]));
	pe->n_allow = n;
	return 0;
}


/* The relay's argv, from the root-owned policy only. */
struct relay_argv {
	char start[24], conns[24], out[24], in[24];
	char hp[SBX_EGRESS_MAX][SBX_HOSTPORT_LEN];
	char *argv[10 + SBX_EGRESS_MAX];
};

static void build_argv(const struct run *r, struct relay_argv *a)
{
	const struct sbx_egress *pe = &r->policy.egress;
	size_t n = 0;

	snprintf(a->start, sizeof(a->start), "%lld", (long long)r->boottime_ns);
	snprintf(a->conns, sizeof(a->conns), "%llu", (unsigned long long)pe->connections);
	snprintf(a->out, sizeof(a->out), "%llu", (unsigned long long)pe->bytes_out);
	snprintf(a->in, sizeof(a->in), "%llu", (unsigned long long)pe->bytes_in);
	a->argv[n++] = (char *)"sbx-relay";
	a->argv[n++] = (char *)"--run-start-ns";
	a->argv[n++] = a->start;
	a->argv[n++] = (char *)"--connections";
	a->argv[n++] = a->conns;
	a->argv[n++] = (char *)"--bytes-out";
	a->argv[n++] = a->out;
	a->argv[n++] = (char *)"--bytes-in";
	a->argv[n++] = a->in;
	for (size_t i = 0; i < pe->n_allow; i++) {
		sbx_hostport_format(pe->allow[i].host, pe->allow[i].port, a->hp[i], sizeof(a->hp[i]));
		a->argv[n++] = a->hp[i];
	}
	a->argv[n] = NULL;
}

/* In the child: fds 3, 4, 5 as common/egress_proto.h says, 0-2 /dev/null,
 * the binary at 6; then _sbxnet and exec. Never returns. */
static _Noreturn void exec_relay(int exe, const int ends[3], uid_t uid, gid_t gid, char **argv)
{
	static char *const envp[] = {NULL};
	char err[HELPER_ERR_LEN];
	int moved[4], devnull;

	/* above every target first, so no dup2 overwrites a source */
	for (int i = 0; i < 3; i++)
		moved[i] = fcntl(ends[i], F_DUPFD_CLOEXEC, 10);
	moved[3] = fcntl(exe, F_DUPFD_CLOEXEC, 10);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || moved[0] < 0 || moved[1] < 0 || moved[2] < 0 || moved[3] < 0 ||
	    dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
	    dup2(moved[0], SBX_RELAY_FD_CTL) < 0 || dup2(moved[1], SBX_RELAY_FD_SANDBOX) < 0 ||
	    dup2(moved[2], SBX_RELAY_FD_REPORT) < 0 || dup3(moved[3], 6, O_CLOEXEC) < 0)
		_exit(127);
	close_range(7, ~0U, 0);
	if (drop_to(uid, gid, err, sizeof(err)) < 0)
		_exit(127);
	/* cleared by the id change; survives execve(2) of a non-setuid file */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() == 1)
		_exit(127);
	TEST_HOOK("relay-dropped");
	fexecve(6, argv, envp);
	_exit(127);
}

/* "FILE:LINE: allow: 'NAME' ..." for a record that says why rule has no address. */
static void resolve_error(const struct run *r, const struct sbx_egress_resolved *rec, char *err, size_t errlen)
{
	const struct sbx_egress_rule *ru = &r->policy.egress.allow[rec->rule];
	char path[SBX_PATH_LEN + 64], why[160];

	egress_policy_path(r, path, sizeof(path));
	if (rec->status == SBX_RESOLVE_GAI && rec->gai == EAI_SYSTEM)
		snprintf(why, sizeof(why), "cannot be resolved: %s", strerror(rec->err));
	else if (rec->status == SBX_RESOLVE_GAI)
		snprintf(why, sizeof(why), "does not resolve: %s", gai_strerror(rec->gai));
	else if (rec->status == SBX_RESOLVE_NOROUTE)
		snprintf(why, sizeof(why), "resolves only to addresses this host has no route to (%s)",
			 strerror(rec->err));
	else
		snprintf(why, sizeof(why), "resolves only to addresses no connection can go to "
			 "(unspecified, multicast or broadcast)");
	snprintf(err, errlen, "%s:%d: allow: '%s' %s", path, ru->line, ru->host, why);
}

/* Check one record from the relay (a less privileged process): every
 * field against what it may hold. -1 with err if it is not well-formed. */
static int take_record(struct run *r, const struct sbx_egress_resolved *rec, ssize_t n, size_t *next_rule,
		       char *err, size_t errlen)
{
	struct egress_run *e = &r->egress;
	struct egress_pair *p;

	if (n != (ssize_t)sizeof(*rec) || rec->magic != SBX_EGRESS_MAGIC ||
	    (rec->rule != SBX_EGRESS_RULE_END && (rec->rule < *next_rule || rec->rule >= r->policy.egress.n_allow))) {
		snprintf(err, errlen, "network: sbx-relay sent a malformed address record");
		return -1;
	}
	if (rec->rule == SBX_EGRESS_RULE_END)
		return 0;
	*next_rule = rec->rule;
	if (rec->status != SBX_RESOLVE_OK) {
		if (rec->status > SBX_RESOLVE_UNUSABLE) {
			snprintf(err, errlen, "network: sbx-relay sent a malformed address record");
			return -1;
		}
		resolve_error(r, rec, err, errlen);
		return -1;
	}
	if ((rec->family != AF_INET && rec->family != AF_INET6) || e->n_pairs == SBX_EGRESS_PAIRS_MAX) {
		snprintf(err, errlen, "network: sbx-relay sent a malformed address record");
		return -1;
	}
	if (rec->family == AF_INET) {
		static const uint8_t zero[12];
		if (memcmp(rec->addr + 4, zero, 12) != 0) {
			snprintf(err, errlen, "network: sbx-relay sent a malformed address record");
			return -1;
		}
	}
	p = &e->pairs[e->n_pairs++];
	p->family = rec->family;
	p->rule = rec->rule;
	p->port = r->policy.egress.allow[rec->rule].port;
	memcpy(p->addr, rec->addr, 16);
	return 1;
}

/* Read the relay's records until the end one, within SBX_EGRESS_RESOLVE_MS. */
static int read_resolution(struct run *r, char *err, size_t errlen)
{
	int64_t deadline = sbx_mono_ms() + SBX_EGRESS_RESOLVE_MS;
	size_t next_rule = 0;
	bool have[SBX_EGRESS_MAX] = {false};

	for (;;) {
		struct pollfd p = {.fd = r->egress.ctl, .events = POLLIN};
		struct sbx_egress_resolved rec;
		int64_t left = deadline - sbx_mono_ms();
		ssize_t n;
		int rc;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			char path[SBX_PATH_LEN + 64];
			size_t i = next_rule + (have[next_rule] ? 1 : 0);
			egress_policy_path(r, path, sizeof(path));
			if (i >= r->policy.egress.n_allow)
				i = r->policy.egress.n_allow - 1;
			snprintf(err, errlen, "%s:%d: allow: '%s' does not resolve: no answer within %d s", path,
				 r->policy.egress.allow[i].line, r->policy.egress.allow[i].host, SBX_EGRESS_RESOLVE_MS / 1000);
			return -1;
		}
		n = recv(r->egress.ctl, &rec, sizeof(rec), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "network: sbx-relay exited while resolving the allow list");
			return -1;
		}
		rc = take_record(r, &rec, n, &next_rule, err, errlen);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
		have[rec.rule] = true;
	}
	for (size_t i = 0; i < r->policy.egress.n_allow; i++)
		if (!have[i]) {
			snprintf(err, errlen, "network: sbx-relay sent no address for allow entry %zu", i + 1);
			return -1;
		}
	return 0;
}

static void relay_kill(struct run *r)
{
	struct egress_run *e = &r->egress;

	if (e->relay > 0) {
		kill(e->relay, SIGKILL);
		waitpid(e->relay, NULL, 0);
		e->relay = -1;
	}
	for (int *fd = &e->ctl; fd <= &e->report; fd++)
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
}

int egress_start(struct run *r, char *err, size_t errlen)
{
	struct egress_run *e = &r->egress;
	static struct relay_argv a;
	int ctl[2], sbx[2], rep[2], exe;
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	pw = getpwnam("_sbxnet");
	if (pw == NULL || pw->pw_uid == 0 || pw->pw_uid == r->sbx_uid) {
		snprintf(err, errlen, "network: system user _sbxnet is missing: run sbx-postinst");
		return -1;
	}
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	exe = open_trusted(SBX_LIBEXECDIR "/sbx/sbx-relay", err, errlen);
	if (exe < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0) {
		snprintf(err, errlen, "network: socketpair: %s", strerror(errno));
		close(exe);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sbx) < 0) {
		snprintf(err, errlen, "network: socketpair: %s", strerror(errno));
		close(exe);
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rep) < 0) {
		snprintf(err, errlen, "network: socketpair: %s", strerror(errno));
		close(exe);
		for (int i = 0; i < 2; i++) {
			close(ctl[i]);
			close(sbx[i]);
		}
		return -1;
	}
	build_argv(r, &a);
	e->relay = fork();
	if (e->relay == 0) {
		const int ends[3] = {ctl[1], sbx[1], rep[1]};
		exec_relay(exe, ends, uid, gid, a.argv);
	}
	close(exe);
	close(ctl[1]);
	close(sbx[1]);
	close(rep[1]);
	e->ctl = ctl[0];
	e->sandbox = sbx[0];
	e->report = rep[0];
	if (e->relay < 0) {
		snprintf(err, errlen, "network: fork: %s", strerror(errno));
		relay_kill(r);
		return -1;
	}
	if (read_resolution(r, err, errlen) < 0) {
		relay_kill(r);
		return -1;
	}
	return 0;
}

void egress_close_in_child(struct run *r, int keep_report)
{
	struct egress_run *e = &r->egress;

	if (e->ctl >= 0)
		close(e->ctl);
	if (e->sandbox >= 0)
		close(e->sandbox);
	if (!keep_report && e->report >= 0)
		close(e->report);
	e->ctl = e->sandbox = -1;
	if (!keep_report)
		e->report = -1;
}

void egress_recorder_started(struct run *r)
{
	if (r->egress.report >= 0)
		close(r->egress.report);
	r->egress.report = -1;
}

void egress_sandbox_started(struct run *r)
{
	if (r->egress.sandbox >= 0)
		close(r->egress.sandbox);
	r->egress.sandbox = -1;
}

void egress_stop(struct run *r)
{
	struct egress_run *e = &r->egress;

	/* EOF on its control socket: the relay ends every connection, sends
	 * the report to the recorder and exits; PR_SET_PDEATHSIG ends it
	 * if we exit first */
	if (e->ctl >= 0)
		close(e->ctl);
	e->ctl = -1;
	egress_sandbox_started(r);
}

void egress_reap(struct run *r)
{
	struct egress_run *e = &r->egress;
	int pfd, st;

	if (e->relay <= 0)
		return;
	egress_stop(r);
	/* it has sent its report (the recorder is done): it exits at once */
	pfd = (int)syscall(SYS_pidfd_open, e->relay, 0);
	if (pfd >= 0) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		while (poll(&p, 1, 5000) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	if (waitpid(e->relay, &st, WNOHANG) != e->relay) {
		kill(e->relay, SIGKILL);
		waitpid(e->relay, &st, 0);
	}
	e->relay = -1;
}
