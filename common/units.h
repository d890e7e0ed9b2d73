/* SPDX-License-Identifier: ISC */
/* Size and duration parsing (and size formatting) shared by the policy parser and the client. */
#ifndef SBX_UNITS_H
#define SBX_UNITS_H
#include <stddef.h>
#include <stdint.h>

/*
 * Parse a size: a decimal integer with an optional suffix K, M, G or T
 * (powers of 1024; a trailing "B" or "iB" is accepted: "512M", "64MiB").
 * Returns 0 and stores bytes in *out; -1 on empty input, junk, or overflow.
 */
int sbx_parse_size(const char *s, uint64_t *out);

/*
 * Parse a duration: a decimal number (fractions allowed: "1.5s") with a
 * unit ms, s, m or h; a bare number means seconds.
 * Returns 0 and stores milliseconds in *out; -1 on bad input or overflow.
 */
int sbx_parse_duration_ms(const char *s, uint64_t *out);

/*
 * Parse an age (sbx-audit rotate --older-than): a positive decimal integer
 * and a unit s, m, h, d (86400 s) or w (7 d): "90d", "12h". No bare number
 * (a forgotten unit must not mean seconds) and no fraction.
 * Returns 0 and *out in seconds, or -1 (no unit, zero, junk, past 100 years).
 */
int sbx_parse_age(const char *s, int64_t *out);

/*
 * Parse a non-negative decimal integer with no suffix, at most max.
 * Returns 0 and stores the value; -1 on junk or out of range.
 */
int sbx_parse_uint(const char *s, uint64_t max, uint64_t *out);

/*
 * Format bytes the way a policy writes them, the inverse of sbx_parse_size
 * for exact multiples: 67108864 -> "64M", 1000 -> "1000". buf gets at most
 * 21 characters plus the NUL.
 */
void sbx_format_size(uint64_t bytes, char *buf, size_t len);

/*
 * Format milliseconds the way a policy and --timeout write them, in the
 * largest unit that is exact (h, m, s, else ms): 30000 -> "30s", 600000
 * -> "10m", 1500 -> "1500ms". buf gets at most 22 characters plus the NUL.
 */
void sbx_format_duration_ms(uint64_t ms, char *buf, size_t len);

#endif
