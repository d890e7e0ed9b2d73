/* SPDX-License-Identifier: ISC */
/*
 * Times on the sbx-audit command line (--since/--until of search and
 * report: one parser, so the same words name the same instant), in the
 * manner of ausearch: keywords relative to the current local day, or an
 * ISO 8601 date or date-time. Local time means the TZ of the caller.
 */
#ifndef SBX_AUDITWHEN_H
#define SBX_AUDITWHEN_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Parse s into nanoseconds since the epoch (*ns). now is the current time
 * (seconds since the epoch); every keyword is relative to it, in local
 * time:
 *   now          now
 *   recent       10 minutes before now
 *   today        00:00:00 today
 *   yesterday    00:00:00 the day before today
 *   this-week    00:00:00 on Monday of this week (ISO 8601 weeks)
 *   this-month   00:00:00 on the first of this month
 *   this-year    00:00:00 on 1 January of this year
 *   YYYY-MM-DD                    00:00:00 local time that day
 *   YYYY-MM-DDTHH:MM[:SS[.fff]]   local time ('T' or one space)
 *   ... followed by Z or +HH:MM / -HH:MM (or +HHMM): that offset, not local
 * Instants before 1970-01-01T00:00Z are refused.
 * Returns 0, or -1 with err (why, without s: the caller names and
 * escapes it); *ns is then untouched.
 */
/* What --help says about WHEN, for every command taking one. */
#define SBX_WHEN_HELP \
	"WHEN, in local time: now, recent (10 minutes ago), today, yesterday,\n" \
	"this-week (Monday), this-month, this-year (each at 00:00:00), or ISO 8601\n" \
	"YYYY-MM-DD[THH:MM[:SS[.fff]]] with an optional Z or +HH:MM offset.\n"

int sbx_when_parse(const char *s, time_t now, int64_t *ns, char *err, size_t errlen);

#endif
