/* SPDX-License-Identifier: ISC */
/* sbx's own stack, whatever the caller's ulimit -s (stack.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "proto.h"
#include "stack.h"

static struct rlimit caller; /* as sbx was started */
static bool raised;

void cli_stack_floor(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_STACK, &caller) < 0 || caller.rlim_cur == RLIM_INFINITY ||
	    caller.rlim_cur >= SBX_CLIENT_STACK_MIN)
		return;
	if (caller.rlim_max != RLIM_INFINITY && caller.rlim_max < SBX_CLIENT_STACK_MIN) {
		fprintf(stderr, "sbx: the stack limit is %llu KiB (hard), below the %lu KiB sbx needs (ulimit -H -s)\n",
			(unsigned long long)(caller.rlim_max / 1024), SBX_CLIENT_STACK_MIN / 1024);
		exit(SBX_EXIT_FAILURE);
	}
	r.rlim_cur = SBX_CLIENT_STACK_MIN;
	r.rlim_max = caller.rlim_max;
	if (setrlimit(RLIMIT_STACK, &r) == 0)
		raised = true;
}

void cli_stack_restore(void)
{
	if (raised)
		(void)setrlimit(RLIMIT_STACK, &caller);
}
