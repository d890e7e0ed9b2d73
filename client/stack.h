/* SPDX-License-Identifier: ISC */
#ifndef SBX_CLIENT_STACK_H
#define SBX_CLIENT_STACK_H

/* The stack sbx itself needs (bytes): its buffers and policy structures
 * live on the stack, and a caller's `ulimit -s 64` crashed it. */
#define SBX_CLIENT_STACK_MIN (1024ul * 1024ul)

/*
 * Raise the soft RLIMIT_STACK of this process to SBX_CLIENT_STACK_MIN when
 * it is lower (setrlimit(2); the kernel checks the limit as the main
 * thread's stack grows, so raising it now takes effect). A hard limit
 * below it: one line naming it, exit 125 (SBX_EXIT_FAILURE).
 */
void cli_stack_floor(void);

/* Put back the caller's soft RLIMIT_STACK before an exec (the helper, a
 * fixer): what runs next sees the limit the caller set. Async-signal-safe. */
void cli_stack_restore(void);

#endif
