/* SPDX-License-Identifier: ISC */
/*
 * Test hooks: pause points at each privileged phase, so the escape tests
 * (tests/escape/02-ptrace.t) can attack the helper's processes while they
 * are there. They exist only in the separate test binaries
 * sbx-helper-hooked and sbx-recorder-hooked, built with -DSBX_TEST_HOOKS
 * (the hooked helper execs the hooked recorder); in the release programs
 * TEST_HOOK() expands to nothing, so there is no code, symbol or string to
 * reach (the test checks the release binaries with nm and strings).
 *
 * Protocol (hooked binaries only): at each phase the process writes
 * "sbx-test-hook: PHASE PID\n" to the fd that was the caller's stderr and
 * waits (at most 10 s) for one byte on the fd that was the caller's stdin.
 * PID is getpid() as the process sees it (1 in the sandbox). The two fds
 * live at SBX_HOOK_FD_IN and SBX_HOOK_FD_OUT, close-on-exec except across
 * the recorder's exec.
 *
 * Marks (hooked binaries only, for bench/startup's phase breakdown):
 * TEST_MARK(name) writes "sbx-test-mark: NAME PID\n" to the same fd and
 * does not wait. The reader timestamps each line as it arrives; marks sit
 * where no pause point is (the payload's exec, the commits), so the order
 * of the pause points the escape tests check is unchanged.
 */
#ifndef SBX_TESTHOOK_H
#define SBX_TESTHOOK_H

#define SBX_HOOK_FD_IN  900
#define SBX_HOOK_FD_OUT 901

#ifdef SBX_TEST_HOOKS
void test_hook_init(void);
void test_hook_inherit(void);
void test_hook(const char *phase);
int test_hook_fds(int fds[2]);
void test_mark(const char *phase);
#define TEST_HOOK(phase) test_hook(phase)
#define TEST_MARK(phase) test_mark(phase)
#define TEST_HOOK_INIT() test_hook_init()
#define TEST_HOOK_INHERIT() test_hook_inherit()
#else
#define TEST_HOOK(phase) ((void)0)
#define TEST_MARK(phase) ((void)0)
#define TEST_HOOK_INIT() ((void)0)
#define TEST_HOOK_INHERIT() ((void)0)
#endif

#endif
