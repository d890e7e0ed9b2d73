/* SPDX-License-Identifier: ISC */
/* Pause points for the escape tests; see testhook.h. Empty in release
 * builds. */
#include "testhook.h"

#ifdef SBX_TEST_HOOKS
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

static int hook_in = -1, hook_out = -1;

/* Called before anything closes fds: keep the caller's stdin and stderr
 * at fixed high numbers (keep_fds spares them, exec closes them). */
void test_hook_init(void)
{
	hook_in = dup3(0, SBX_HOOK_FD_IN, O_CLOEXEC);
	hook_out = dup3(2, SBX_HOOK_FD_OUT, O_CLOEXEC);
}

/* The hooked recorder: the supervisor left the two fds open across exec. */
void test_hook_inherit(void)
{
	if (fcntl(SBX_HOOK_FD_IN, F_SETFD, FD_CLOEXEC) == 0 && fcntl(SBX_HOOK_FD_OUT, F_SETFD, FD_CLOEXEC) == 0) {
		hook_in = SBX_HOOK_FD_IN;
		hook_out = SBX_HOOK_FD_OUT;
	}
}

int test_hook_fds(int fds[2])
{
	fds[0] = hook_in;
	fds[1] = hook_out;
	return hook_in >= 0 && hook_out >= 0 ? 2 : 0;
}

void test_hook(const char *phase)
{
	struct pollfd p = {.fd = hook_in, .events = POLLIN};
	char line[128], c;
	int n;

	if (hook_in < 0 || hook_out < 0)
		return;
	n = snprintf(line, sizeof(line), "sbx-test-hook: %s %d\n", phase, (int)getpid());
	if (write(hook_out, line, (size_t)n) != n)
		return;
	if (poll(&p, 1, 10000) == 1)
		(void)!read(hook_in, &c, 1);
}

void test_mark(const char *phase)
{
	char line[128];
	int n;

	if (hook_out < 0)
		return;
	n = snprintf(line, sizeof(line), "sbx-test-mark: %s %d\n", phase, (int)getpid());
	(void)!write(hook_out, line, (size_t)n);
}
#else
typedef int sbx_no_test_hooks; /* ISO C wants a declaration in every file */
#endif
