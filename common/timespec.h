/*
 * Points in time and ages given on the command line (sbx-audit report,
 * rotate; meant to be shared with search). All in UTC, as the log's own
 * `time` column is: a given date is the same instant for every reader.
 */
#ifndef SBX_TIMESPEC_H
#define SBX_TIMESPEC_H
#include <stdint.h>

/*
 * Parse a point in time into nanoseconds since the epoch (UTC):
 *   ISO 8601: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM", "YYYY-MM-DDTHH:MM:SS" with
 *     optional ".fraction" (up to 9 digits) and zone "Z" or "+HH:MM" /
 *     "-HH:MM" (none: UTC); a space may replace the "T".
 *   keywords: "now"; "today", "yesterday" (00:00 UTC of that day);
 *   "this-week" (Monday 00:00 UTC of the current ISO week); "this-month"
 *   (the 1st, 00:00 UTC).
 * now_ns is the current time (passed in so that tests are reproducible).
 * A date or keyword names the start of its period, so "--since yesterday
 * --until today" is the whole of yesterday when --until is exclusive.
 * Returns 0 and *out, or -1 for anything else (junk, out-of-range fields,
 * a year outside 1970..9999).
 */
int sbx_parse_when(const char *s, int64_t now_ns, int64_t *out);

/*
 * Parse an age: a positive decimal integer and a unit s, m, h, d (86400 s)
 * or w (7 d): "90d", "12h". Returns 0 and *out in seconds, or -1 (no unit,
 * zero, junk, overflow past 100 years).
 */
int sbx_parse_age(const char *s, int64_t *out);

#endif
