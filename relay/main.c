/* SPDX-License-Identifier: ISC */
/*
 * sbx-relay: the only process of a run that talks to the network outside
 * the sandbox. Exec'd by sbx-helper after it dropped to _sbxnet; argv and
 * fds: common/egress_proto.h; design: docs/egress.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "relay.h"
#include "units.h"

void relay_warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dprintf(2, "sbx-relay: %s\n", buf);
}

void relay_die(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dprintf(2, "sbx-relay: %s\n", buf);
	_exit(1);
}

static uint64_t num(const char *opt, const char *v, uint64_t max)
{
	uint64_t n;

	if (v == NULL || sbx_parse_uint(v, max, &n) < 0)
		relay_die("%s: bad value", opt);
	return n;
}

static void parse_argv(struct relay *r, int argc, char **argv)
{
	int i;

	for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];
		if (strcmp(o, "--run-start-ns") == 0)
			r->run_start_ms = num(o, v, UINT64_MAX) / 1000000;
		else if (strcmp(o, "--connections") == 0)
			r->max_conns = num(o, v, SBX_EGRESS_CONNECTIONS_MAX);
		else if (strcmp(o, "--bytes-out") == 0)
			r->limit[0] = num(o, v, UINT64_MAX);
		else if (strcmp(o, "--bytes-in") == 0)
			r->limit[1] = num(o, v, UINT64_MAX);
		else
			relay_die("unknown option %s", o);
	}
	if (r->max_conns == 0 || r->limit[0] == 0 || r->limit[1] == 0)
		relay_die("--connections, --bytes-out and --bytes-in are required");
	for (; i < argc; i++) {
		const char *why;
		if (r->n_rules == SBX_EGRESS_MAX)
			relay_die("more than %d services", SBX_EGRESS_MAX);
		if (sbx_hostport_parse(argv[i], r->rules[r->n_rules].host, &r->rules[r->n_rules].port, &why) < 0)
			relay_die("'%s': %s", argv[i], why);
		r->n_rules++;
	}
	if (r->n_rules == 0)
		relay_die("no HOST:PORT");
}

/* The three fds are what the supervisor said they are. */
static void check_fds(void)
{
	static const struct { int fd, type; } want[] = {
		{SBX_RELAY_FD_CTL, SOCK_SEQPACKET},
		{SBX_RELAY_FD_SANDBOX, SOCK_SEQPACKET},
		{SBX_RELAY_FD_REPORT, SOCK_STREAM},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int type = 0;
		socklen_t len = sizeof(type);
		if (getsockopt(want[i].fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != want[i].type)
			relay_die("fd %d is not the socket it should be (see common/egress_proto.h)", want[i].fd);
		fcntl(want[i].fd, F_SETFD, FD_CLOEXEC);
	}
}

int main(int argc, char **argv)
{
	static struct relay r;
	struct rlimit nofile;

	/* the payload's bytes pass through here: nothing may attach */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (getuid() == 0 || geteuid() == 0)
		relay_die("refusing to run as root");
	signal(SIGPIPE, SIG_IGN);
	check_fds();
	close_range(SBX_RELAY_FD_REPORT + 1, ~0U, 0);
	/* six descriptors a connection (two sockets, two pipes) */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	parse_argv(&r, argc, argv);
	if (relay_resolve(&r) < 0)
		return 1;
	relay_loop(&r);
	report_finish(&r);
	return 0;
}
