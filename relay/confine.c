/* SPDX-License-Identifier: ISC */
/*
 * The relay's own seccomp filter, installed once the names are resolved
 * (getaddrinfo(3) opens files and sockets of its own). From then on the
 * relay only accepts, connects, splices and reports; a relay taken over
 * through a kernel or libc bug in that path could still not start a
 * program, create a process, open, create or change a file, listen on a
 * port, or open a socket of another family: those calls fail with EPERM
 * (EAFNOSUPPORT for the families). A deny list, like the sandbox's
 * (docs/seccomp.md): the relay's own calls are few, but glibc's are not
 * ours to enumerate, and a missing entry must not cut a run's
 * connections.
 */
#include <errno.h>
#include <seccomp.h>
#include <sys/socket.h>

#include "relay.h"

int relay_confine(void)
{
	static const char *const denied[] = {
		"execve", "execveat", "fork", "vfork", "clone", "clone3", "ptrace",
		"process_vm_readv", "process_vm_writev", "pidfd_getfd", "pidfd_open",
		"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
		"mkdir", "mkdirat", "mknod", "mknodat", "unlink", "unlinkat", "rmdir",
		"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
		"chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
		"truncate", "ftruncate", "chdir", "fchdir", "chroot",
		"bind", "listen", "socketpair", "mount", "umount2", "unshare", "setns",
		"memfd_create", "memfd_secret", "userfaultfd", "bpf", "perf_event_open", "keyctl",
		"add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register",
		"kill", "tkill", "tgkill", "prctl", "personality", "setuid", "setgid",
		"setreuid", "setregid", "setresuid", "setresgid", "setgroups",
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx == NULL ? -ENOMEM : 0;

	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; rc == 0 && i < sizeof(denied) / sizeof(denied[0]); i++) {
		int sys = seccomp_syscall_resolve_name(denied[i]);
		if (sys != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sys, 0);
	}
	/* sockets: the TCP connections to the services only */
	for (int f = 0; rc == 0 && f < AF_MAX; f++)
		if (f != AF_INET && f != AF_INET6)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (scmp_datum_t)f));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_GE, AF_MAX));
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}
