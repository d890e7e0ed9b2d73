/* SPDX-License-Identifier: ISC */
/* The clocks sbx reads (clock_gettime(2)): one function each. */
#ifndef SBX_CLOCK_H
#define SBX_CLOCK_H
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds: deadlines and durations. */
int64_t sbx_mono_ms(void);

/* clock c in nanoseconds (CLOCK_REALTIME, CLOCK_BOOTTIME: the records' times). */
int64_t sbx_clock_ns(clockid_t c);

#endif
