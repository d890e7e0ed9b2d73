/* SPDX-License-Identifier: ISC */
/*
 * The one way sbx drops a const qualifier (-Wcast-qual flags every other):
 * for interfaces older than const that never write through the pointer
 * (struct iovec's iov_base for sendmsg(2), execve(2)'s argv and envp, a
 * callback's context).
 */
#ifndef SBX_UNCONST_H
#define SBX_UNCONST_H

static inline void *sbx_unconst(const void *p)
{
	union {
		const void *c;
		void *v;
	} u = {.c = p};

	return u.v;
}

#endif
