/* SPDX-License-Identifier: ISC */
#include "clock.h"

int64_t sbx_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sbx_mono_ms(void)
{
	return sbx_clock_ns(CLOCK_MONOTONIC) / 1000000;
}
