/* SPDX-License-Identifier: ISC */
/*
 * The payload's rlimits (helper/rlimits.c, payload_rlimit): the policy's
 * value, never above the caller's original hard limit, and the caller's own
 * limits for every resource the policy does not set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>

#include "helper.h"
#include "units.h"

static const struct sbx_limits policy = {
	.file_size_bytes = 64u << 20, .open_files = 256, .pids = 64, .cpu_ms = 30000,
};

static struct rlimit get(int res, rlim_t soft, rlim_t hard)
{
	const struct rlimit caller = {soft, hard};
	struct rlimit out;

	payload_rlimit(res, &caller, &policy, &out);
	return out;
}

static void policy_values_below_the_callers(void **state)
{
	struct rlimit r;

	(void)state;
	r = get(RLIMIT_NOFILE, 1024, 524288);
	assert_int_equal(r.rlim_cur, 256);
	assert_int_equal(r.rlim_max, 256);
	r = get(RLIMIT_NPROC, RLIM_INFINITY, RLIM_INFINITY);
	assert_int_equal(r.rlim_cur, 72);
	assert_int_equal(r.rlim_max, 72);
	r = get(RLIMIT_CPU, 1, RLIM_INFINITY); /* the caller's soft CPU limit is not the payload's */
	assert_int_equal(r.rlim_cur, 31);
	assert_int_equal(r.rlim_max, 32);
	r = get(RLIMIT_FSIZE, 0, RLIM_INFINITY);
	assert_int_equal(r.rlim_cur, 64u << 20);
	r = get(RLIMIT_CORE, RLIM_INFINITY, RLIM_INFINITY);
	assert_int_equal(r.rlim_cur, 0);
	assert_int_equal(r.rlim_max, 0);
}

static void never_above_the_callers_hard_limit(void **state)
{
	struct rlimit r;

	(void)state;
	r = get(RLIMIT_NOFILE, 180, 200);
	assert_int_equal(r.rlim_cur, 200);
	assert_int_equal(r.rlim_max, 200);
	r = get(RLIMIT_NPROC, 40, 50);
	assert_int_equal(r.rlim_cur, 50);
	assert_int_equal(r.rlim_max, 50);
	r = get(RLIMIT_FSIZE, 1024, 4096);
	assert_int_equal(r.rlim_max, 4096);
}

static void the_rest_is_the_callers(void **state)
{
	static const int res[] = {RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_MEMLOCK, RLIMIT_MSGQUEUE,
				  RLIMIT_SIGPENDING, RLIMIT_LOCKS, RLIMIT_NICE, RLIMIT_RTPRIO, RLIMIT_RTTIME, RLIMIT_RSS};
	struct rlimit r;

	(void)state;
	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		r = get(res[i], 1000, 3000);
		/* a stack soft limit too small for an interpreter: up to 8 MiB,
		 * never above the caller's hard limit */
		assert_int_equal(r.rlim_cur, res[i] == RLIMIT_STACK ? 3000 : 1000);
		assert_int_equal(r.rlim_max, 3000);
		r = get(res[i], 2u << 20, 3u << 20);
		assert_int_equal(r.rlim_cur, 2u << 20);
		r = get(res[i], 64u << 10, RLIM_INFINITY);
		assert_int_equal(r.rlim_cur, res[i] == RLIMIT_STACK ? 8u << 20 : 64u << 10);
		r = get(res[i], 8u << 20, RLIM_INFINITY);
		assert_int_equal(r.rlim_cur, 8u << 20);
		assert_true(r.rlim_max == RLIM_INFINITY);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(policy_values_below_the_callers),
		cmocka_unit_test(never_above_the_callers_hard_limit),
		cmocka_unit_test(the_rest_is_the_callers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
