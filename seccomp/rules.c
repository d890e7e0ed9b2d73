/* SPDX-License-Identifier: ISC */
/*
 * The sandbox's seccomp filter, as libseccomp rules: allow by default,
 * deny what a payload has no business doing and what sandbox escapes have
 * used (see DESIGN.md "Security invariants", docs/seccomp.md and
 * sbx-helper(8)). Native architecture only: other ABIs (i386 int 0x80,
 * x32) kill the process (SCMP_FLTATR_ACT_BADARCH), so a denied call cannot
 * be reached through a second syscall table.
 *
 * Built at build time only (seccomp/gen.c) and by the unit test that
 * checks the precompiled programs against it; see rules.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <linux/sched.h>

#include "rules.h"

static const char *const denied[] = {
	/* debugging other processes, reading their memory */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	/* mount table and namespaces: the sandbox's layout is final */
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
	/* kernel objects shared with the host: keyrings, BPF, perf, io_uring */
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
	/* the machine itself */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct", "syslog", "vhangup", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm", "quotactl",
	"quotactl_fd", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "lookup_dcookie",
	/* file handles bypass path permissions (the "shocker" escape) */
	"open_by_handle_at", "name_to_handle_at",
	/* the run's CPUs are fixed before the filter (helper/cpus.c): a
	 * payload could only widen its affinity mask back to the host's */
	"sched_setaffinity",
};

/* The strict profile adds calls an interpreter rarely needs whose kernel
 * code has a history of exploitable bugs or that reach state shared with
 * the host (docs/seccomp.md says why each is here). */
static const char *const strict_denied[] = {
	/* moving pipe pages: page-cache write bugs lived here (Dirty Pipe) */
	"splice", "vmsplice", "tee",
	/* legacy kernel AIO, a large, rarely used surface */
	"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
	/* NUMA placement of memory the host shares */
	"mbind", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages", "move_pages",
	/* advice on another process's memory */
	"process_madvise",
};

/* EPERM for each call of names[] that exists on this architecture. */
static int deny_calls(scmp_filter_ctx ctx, const char *const *names, size_t n, const char **what)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		int sys = seccomp_syscall_resolve_name(names[i]);
		*what = names[i];
		if (sys == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sys, 0);
	}
	return rc;
}

static int deny_family(scmp_filter_ctx ctx, int sys, int family)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), sys, 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)family));
}

static int socket_rules(scmp_filter_ctx ctx, bool inet)
{
	static const char *const calls[] = {"socket", "socketpair"};
	int rc = 0;

	for (size_t c = 0; c < 2 && rc == 0; c++) {
		int sys = seccomp_syscall_resolve_name(calls[c]);
		for (int f = 0; f < AF_MAX && rc == 0; f++) {
			if (f == AF_UNIX || (inet && c == 0 && (f == AF_INET || f == AF_INET6)))
				continue;
			rc = deny_family(ctx, sys, f);
		}
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), sys, 1,
					      SCMP_A0(SCMP_CMP_GE, AF_MAX));
	}
	return rc;
}

/*
 * [network] mode = allow (helper/egress_notify.c is the listener): AF_INET
 * and AF_INET6 sockets only of type SOCK_STREAM with protocol 0 or
 * IPPROTO_TCP (UDP, ICMP, raw, SCTP and MPTCP fail with EPROTONOSUPPORT;
 * AF_PACKET and AF_NETLINK are denied with every other family); no TCP
 * Fast Open data on sendto/sendmsg/sendmmsg (EOPNOTSUPP), so every
 * connection starts with a connect(2); and connect(2) is SCMP_ACT_NOTIFY.
 */
static int egress_rules(scmp_filter_ctx ctx)
{
	static const int fams[] = {AF_INET, AF_INET6};
	int rc = 0;

	for (size_t f = 0; f < 2 && rc == 0; f++) {
		/* type: the low four bits (SOCK_TYPE_MASK); NONBLOCK/CLOEXEC above */
		for (int t = 0; t < 16 && rc == 0; t++)
			if (t != SOCK_STREAM)
				rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
						      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)fams[f]),
						      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xfu, (scmp_datum_t)t));
		/* protocol: 0 or IPPROTO_TCP (6), compared on all 64 bits so
		 * that high bits the kernel would ignore cannot pass */
		for (int pr = 1; pr < IPPROTO_TCP && rc == 0; pr++)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)fams[f]),
					      SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)pr));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)fams[f]),
					      SCMP_A2(SCMP_CMP_GT, (scmp_datum_t)IPPROTO_TCP));
	}
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(sendto), 1,
				      SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(sendmsg), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(sendmmsg), 1,
				      SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	return rc;
}

static int add_rules(scmp_filter_ctx ctx, enum sbx_seccomp_profile profile, enum sbx_net_mode net,
		     const char **what)
{
	static const unsigned long ns_flags[] = {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
						 CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};
	/* Only the bits a terminal attack needs; the high 32 bits of the
	 * request are ignored by the kernel, so the mask ignores them too. */
	static const unsigned long bad_ioctls[] = {TIOCSTI, TIOCLINUX, TIOCCONS, TIOCSETD};
	int rc;

	*what = "attributes";
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = deny_calls(ctx, denied, sizeof(denied) / sizeof(denied[0]), what);
	if (rc == 0 && profile == SBX_SECCOMP_STRICT)
		rc = deny_calls(ctx, strict_denied, sizeof(strict_denied) / sizeof(strict_denied[0]), what);
	if (rc != 0)
		return rc;
	*what = "clone";
	for (size_t i = 0; rc == 0 && i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	if (rc != 0)
		return rc;
	/* clone3 passes flags in memory a filter cannot read: ENOSYS makes
	 * glibc fall back to clone(2), which the rules above can check. */
	*what = "clone3";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc != 0)
		return rc;
	*what = "ioctl";
	for (size_t i = 0; rc == 0 && i < sizeof(bad_ioctls) / sizeof(bad_ioctls[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, bad_ioctls[i]));
	if (rc != 0)
		return rc;
	/* Only PER_LINUX: other personalities turn off ASLR or make data
	 * executable (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC...). The query
	 * value 0xffffffff is refused too: libseccomp compares an argument
	 * once per rule, and no interpreter here needs it. */
	*what = "personality";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1, SCMP_A0(SCMP_CMP_NE, 0));
	if (rc != 0)
		return rc;
	*what = "socket";
	rc = socket_rules(ctx, (net == SBX_NET_LOOPBACK && profile != SBX_SECCOMP_STRICT) || net == SBX_NET_ALLOW);
	if (rc != 0)
		return rc;
	/* mode = allow: TCP streams only, every connect(2) recorded */
	*what = "network";
	if (net == SBX_NET_ALLOW)
		rc = egress_rules(ctx);
	return rc;
}

scmp_filter_ctx sbx_seccomp_build(enum sbx_seccomp_profile profile, enum sbx_net_mode net,
				  char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	const char *what = "init";
	int rc;

	if (ctx == NULL) {
		snprintf(err, errlen, "seccomp: cannot create filter");
		return NULL;
	}
	rc = add_rules(ctx, profile, net, &what);
	if (rc != 0) {
		snprintf(err, errlen, "seccomp: %s: %s", what, strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

int sbx_seccomp_export(scmp_filter_ctx ctx, unsigned char **prog, size_t *len, char *err, size_t errlen)
{
	/* libseccomp 2.5 exports to a descriptor only (seccomp_export_bpf_mem
	 * is 2.6): a memory file, read back */
	int fd = memfd_create("sbx-bpf", MFD_CLOEXEC);
	unsigned char *buf = NULL;
	off_t end;
	int rc;

	*prog = NULL;
	*len = 0;
	if (fd < 0) {
		snprintf(err, errlen, "seccomp: memfd_create: %s", strerror(errno));
		return -1;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc != 0) {
		snprintf(err, errlen, "seccomp: export: %s", strerror(-rc));
		close(fd);
		return -1;
	}
	end = lseek(fd, 0, SEEK_END);
	if (end <= 0 || (buf = malloc((size_t)end)) == NULL || pread(fd, buf, (size_t)end, 0) != (ssize_t)end) {
		snprintf(err, errlen, "seccomp: reading the exported program: %s", end <= 0 ? "empty" : strerror(errno));
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	*prog = buf;
	*len = (size_t)end;
	return 0;
}
