/* SPDX-License-Identifier: ISC */
/*
 * Test hooks: pause points at each privileged phase, so the escape tests
 * (tests/escape/02-ptrace.t) can attack the helper while it is there.
 * They exist only in the separate test binary sbx-helper-hooked, built with
 * -DSBX_TEST_HOOKS; in the release sbx-helper TEST_HOOK() expands to
 * nothing, so there is no code, symbol or string to reach (the test checks
 * the release binary with nm and strings).
 *
 * Protocol (hooked binary only): at each phase the process writes
 * "sbx-test-hook: PHASE PID\n" to the fd that was the caller's stderr and
 * waits (at most 10 s) for one byte on the fd that was the caller's stdin.
 * PID is getpid() as the process sees it (1 in the sandbox).
 */
#ifndef SBX_TESTHOOK_H
#define SBX_TESTHOOK_H

#ifdef SBX_TEST_HOOKS
void test_hook_init(void);
void test_hook(const char *phase);
int test_hook_fds(int fds[2]);
#define TEST_HOOK(phase) test_hook(phase)
#define TEST_HOOK_INIT() test_hook_init()
#else
#define TEST_HOOK(phase) ((void)0)
#define TEST_HOOK_INIT() ((void)0)
#endif

#endif
