/* SPDX-License-Identifier: ISC */
/*
 * The sandbox's seccomp filter, loaded from the programs libseccomp
 * compiled at build time (seccomp/rules.c, exported by seccomp/gen.c into
 * $(B)/seccomp_bpf.h): the setuid helper does not link libseccomp and
 * compiles nothing per run. tests/unit/test_seccomp.c checks every
 * program here byte for byte against libseccomp's run-time compilation of
 * the same rules; docs/seccomp.md lists what each profile denies.
 *
 * A program is chosen by the policy's profile and network mode only: no
 * part of the filter depends on a run's own values.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "helper.h"
#include "seccomp_bpf.h"

_Static_assert(sizeof(sbx_bpf_programs) / sizeof(sbx_bpf_programs[0]) == SBX_SECCOMP_PROFILES,
	       "one row of programs per seccomp profile");
_Static_assert(sizeof(sbx_bpf_programs[0]) / sizeof(sbx_bpf_programs[0][0]) == SBX_NET_MODES,
	       "one program per network mode");

/* struct sock_fprog with a const pointer: the kernel only reads the
 * program, which stays in read-only memory (no cast drops the const) */
struct ro_fprog {
	unsigned short len;
	const struct sock_filter *filter;
};
_Static_assert(sizeof(struct ro_fprog) == sizeof(struct sock_fprog) &&
		       offsetof(struct ro_fprog, filter) == offsetof(struct sock_fprog, filter),
	       "the layout of struct sock_fprog");

const struct sbx_bpf *seccomp_program(const struct sbx_policy *p)
{
	if ((unsigned)p->seccomp >= SBX_SECCOMP_PROFILES || (unsigned)p->net >= SBX_NET_MODES)
		return NULL;
	return &sbx_bpf_programs[p->seccomp][p->net];
}

int install_seccomp(const struct sbx_policy *p, int *listener, char *err, size_t errlen)
{
	const struct sbx_bpf *b = seccomp_program(p);
	struct ro_fprog prog;
	long rc;

	*listener = -1;
	if (b == NULL) {
		snprintf(err, errlen, "seccomp: no filter for profile %d, network mode %d", (int)p->seccomp, (int)p->net);
		return -1;
	}
	/* As libseccomp's seccomp_load (SCMP_FLTATR_CTL_NNP): the filter of
	 * an unprivileged task needs no_new_privs, already set by
	 * drop_privileges() */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "seccomp: no_new_privs: %s", strerror(errno));
		return -1;
	}
	prog.len = b->len;
	prog.filter = b->insns;
	/* the flags libseccomp 2.5 sets for these attributes: a listener
	 * descriptor for a program that returns SECCOMP_RET_USER_NOTIF,
	 * nothing else (no TSYNC: the sandbox init has one thread) */
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, b->listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &prog);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp: load: %s", strerror(errno));
		return -1;
	}
	if (b->listener)
		*listener = (int)rc;
	return 0;
}
