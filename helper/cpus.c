/* SPDX-License-Identifier: ISC */
/*
 * The CPUs a run may use (sbx.policy(5) cpus). The cgroup's CPU quota
 * bounds the time; the affinity mask set here bounds where, so that what
 * sizes a thread pool from the mask (os.sched_getaffinity, nproc(1),
 * OpenBLAS, OpenMP, joblib) sees ceil(cpus) CPUs instead of every CPU of
 * the host. The seccomp filter refuses sched_setaffinity(2) afterwards, so
 * the payload cannot widen it again.
 */
#include <sched.h>
#include <string.h>

#include "helper.h"

unsigned run_cpu_set(const struct run *r, cpu_set_t *set)
{
	unsigned want = (unsigned)((r->limits.cpus_milli + 999) / 1000), have = 0, start = 0;
	unsigned cpus[CPU_SETSIZE];
	cpu_set_t now;

	if (want == 0)
		want = 1;
	CPU_ZERO(set);
	/* The helper's own mask comes from the caller, who may have narrowed
	 * it (taskset(1)): a run never gets more than that. */
	if (sched_getaffinity(0, sizeof(now), &now) < 0)
		return want; /* more CPUs than cpu_set_t holds: quota only */
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &now))
			cpus[have++] = c;
	if (have == 0)
		return want;
	if (want > have)
		want = have;
	/* Consecutive CPUs from a start the run id picks, so that
	 * concurrent runs spread over the host. */
	for (size_t i = 0; r->run_id[i] != '\0'; i++)
		start = start * 31u + (unsigned char)r->run_id[i];
	start %= have;
	for (unsigned i = 0; i < want; i++)
		CPU_SET(cpus[(start + i) % have], set);
	return want;
}
