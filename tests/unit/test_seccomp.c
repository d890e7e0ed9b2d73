/* SPDX-License-Identifier: ISC */
/*
 * The setuid helper's precompiled seccomp programs (helper/seccomp.c, data
 * generated at build time by seccomp/gen.c) are exactly what libseccomp
 * compiles at run time from the same rules (seccomp/rules.c), byte for
 * byte, for every seccomp profile and network mode, on this machine's
 * architecture (the only one a program accepts); and a loaded program
 * denies what it must.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <cmocka.h>

#include "helper.h"
#include "rules.h"
#include "seccomp_bpf.h"

static struct sbx_policy policy_of(int profile, int net)
{
	struct sbx_policy p;

	memset(&p, 0, sizeof(p));
	p.seccomp = (enum sbx_seccomp_profile)profile;
	p.net = (enum sbx_net_mode)net;
	return p;
}

static void each_program_is_libseccomps(void **state)
{
	(void)state;
	for (int pr = 0; pr < SBX_SECCOMP_PROFILES; pr++)
		for (int n = 0; n < SBX_NET_MODES; n++) {
			struct sbx_policy p = policy_of(pr, n);
			const struct sbx_bpf *b = seccomp_program(&p);
			char err[256] = "";
			scmp_filter_ctx ctx = sbx_seccomp_build((enum sbx_seccomp_profile)pr, (enum sbx_net_mode)n,
								err, sizeof(err));
			unsigned char *bytes = NULL;
			size_t len = 0;

			assert_non_null(b);
			assert_non_null(ctx);
			assert_int_equal(sbx_seccomp_export(ctx, &bytes, &len, err, sizeof(err)), 0);
			seccomp_release(ctx);
			print_message("profile %d, network mode %d: %u instructions\n", pr, n, (unsigned)b->len);
			assert_int_equal(len, (size_t)b->len * sizeof(struct sock_filter));
			assert_memory_equal(bytes, b->insns, len);
			free(bytes);
		}
}

/* Only mode = allow notifies (connect(2)), so only its program is
 * loaded with a listener. */
static void only_allow_has_a_listener(void **state)
{
	(void)state;
	for (int pr = 0; pr < SBX_SECCOMP_PROFILES; pr++)
		for (int n = 0; n < SBX_NET_MODES; n++) {
			struct sbx_policy p = policy_of(pr, n);
			const struct sbx_bpf *b = seccomp_program(&p);
			bool notify = false;

			for (size_t i = 0; i < b->len; i++)
				if (b->insns[i].code == (BPF_RET | BPF_K) &&
				    (b->insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
					notify = true;
			assert_int_equal(b->listener, notify);
			assert_int_equal(b->listener, n == SBX_NET_ALLOW);
		}
}

/* The programs accept this machine's architecture only: the first check
 * is seccomp_data.arch against it, everything else is killed. */
static void native_architecture_only(void **state)
{
	struct sbx_policy p = policy_of(SBX_SECCOMP_DEFAULT, SBX_NET_NONE);
	const struct sbx_bpf *b = seccomp_program(&p);

	(void)state;
	assert_int_equal(SBX_SECCOMP_ARCH, seccomp_arch_native());
	assert_true(b->len > 2);
	assert_int_equal(b->insns[0].code, BPF_LD | BPF_W | BPF_ABS);
	assert_int_equal(b->insns[0].k, offsetof(struct seccomp_data, arch));
	assert_int_equal(b->insns[1].code, BPF_JMP | BPF_JEQ | BPF_K);
	assert_int_equal(b->insns[1].k, SBX_SECCOMP_ARCH);
}

/* Each variant is its own program where the rules differ, and the same
 * where docs/seccomp.md says they are (strict allows no inet socket even
 * with a loopback). */
static void variants_differ_where_the_rules_do(void **state)
{
	struct sbx_policy a, b;

	(void)state;
	a = policy_of(SBX_SECCOMP_DEFAULT, SBX_NET_NONE);
	b = policy_of(SBX_SECCOMP_STRICT, SBX_NET_NONE);
	assert_int_not_equal(seccomp_program(&a)->len, seccomp_program(&b)->len);
	b = policy_of(SBX_SECCOMP_DEFAULT, SBX_NET_LOOPBACK);
	assert_true(seccomp_program(&a)->len != seccomp_program(&b)->len ||
		    memcmp(seccomp_program(&a)->insns, seccomp_program(&b)->insns,
			   seccomp_program(&a)->len * sizeof(struct sock_filter)) != 0);
	a = policy_of(SBX_SECCOMP_STRICT, SBX_NET_NONE);
	b = policy_of(SBX_SECCOMP_STRICT, SBX_NET_LOOPBACK);
	assert_int_equal(seccomp_program(&a)->len, seccomp_program(&b)->len);
	assert_memory_equal(seccomp_program(&a)->insns, seccomp_program(&b)->insns,
			    seccomp_program(&a)->len * sizeof(struct sock_filter));
}

static void out_of_range_has_no_program(void **state)
{
	struct sbx_policy p = policy_of(SBX_SECCOMP_PROFILES, SBX_NET_NONE);
	char err[256] = "";
	int fd;

	(void)state;
	assert_null(seccomp_program(&p));
	assert_int_equal(install_seccomp(&p, &fd, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no filter"));
	p = policy_of(SBX_SECCOMP_DEFAULT, SBX_NET_MODES);
	assert_null(seccomp_program(&p));
}

/* Loaded in a child (a filter cannot be removed): the calls that must
 * fail do, with the filter's errno, and the rest works. Exit status: the
 * number of the first check that failed. */
static int loaded_child(int pr, int n)
{
	struct sbx_policy p = policy_of(pr, n);
	char err[256];
	int listener;

	if (install_seccomp(&p, &listener, err, sizeof(err)) < 0)
		return 1;
	if ((listener >= 0) != (n == SBX_NET_ALLOW))
		return 2;
	if (unshare(0) != -1 || errno != EPERM)
		return 3;
	if (personality(READ_IMPLIES_EXEC) != -1 || errno != EPERM)
		return 4;
	if (socket(AF_NETLINK, SOCK_RAW, 0) != -1 || errno != EAFNOSUPPORT)
		return 5;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 6;
	if (pr == SBX_SECCOMP_STRICT && (syscall(SYS_vmsplice, -1, NULL, 0, 0) != -1 || errno != EPERM))
		return 7;
	if (pr == SBX_SECCOMP_DEFAULT && (syscall(SYS_vmsplice, -1, NULL, 0, 0) != -1 || errno != EBADF))
		return 8;
	if (getppid() <= 0)
		return 9;
	return 0;
}

static void loaded_programs_deny(void **state)
{
	(void)state;
	for (int pr = 0; pr < SBX_SECCOMP_PROFILES; pr++)
		for (int n = 0; n < SBX_NET_MODES; n++) {
			int status = -1;
			pid_t pid = fork();

			assert_true(pid >= 0);
			if (pid == 0)
				_exit(loaded_child(pr, n));
			assert_int_equal(waitpid(pid, &status, 0), pid);
			print_message("profile %d, network mode %d: status %d\n", pr, n, status);
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_program_is_libseccomps),
		cmocka_unit_test(only_allow_has_a_listener),
		cmocka_unit_test(native_architecture_only),
		cmocka_unit_test(variants_differ_where_the_rules_do),
		cmocka_unit_test(out_of_range_has_no_program),
		cmocka_unit_test(loaded_programs_deny),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
