/* SPDX-License-Identifier: ISC */
/* Command-line times for sbx-audit search and report (see auditwhen.h). */
#include "auditwhen.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define NS 1000000000LL

/* n decimal digits at *p (exactly n), advancing *p. -1 if not digits. */
static int digits(const char **p, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

/* Midnight, local time, of the day of now shifted by `days` (and moved back
 * to Monday / the 1st / 1 January when asked). */
static int local_midnight(time_t now, int days, char what, int64_t *ns)
{
	struct tm tm;
	time_t t;

	if (localtime_r(&now, &tm) == NULL)
		return -1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday += days;
	if (what == 'w')
		tm.tm_mday -= (tm.tm_wday + 6) % 7;
	else if (what == 'm')
		tm.tm_mday = 1;
	else if (what == 'y') {
		tm.tm_mday = 1;
		tm.tm_mon = 0;
	}
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*ns = (int64_t)t * NS;
	return 0;
}

static int keyword(const char *s, time_t now, int64_t *ns)
{
	if (strcmp(s, "now") == 0) {
		*ns = (int64_t)now * NS;
		return 0;
	}
	if (strcmp(s, "recent") == 0) {
		*ns = ((int64_t)now - 600) * NS;
		return 0;
	}
	if (strcmp(s, "today") == 0)
		return local_midnight(now, 0, 'd', ns);
	if (strcmp(s, "yesterday") == 0)
		return local_midnight(now, -1, 'd', ns);
	if (strcmp(s, "this-week") == 0)
		return local_midnight(now, 0, 'w', ns);
	if (strcmp(s, "this-month") == 0)
		return local_midnight(now, 0, 'm', ns);
	if (strcmp(s, "this-year") == 0)
		return local_midnight(now, 0, 'y', ns);
	return 1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

static int iso(const char *s, int64_t *ns, const char **why)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0, frac_ns = 0, off = 0, have_off = 0;
	struct tm tm;
	time_t t;

	*why = "not a keyword (now, recent, today, yesterday, this-week, this-month, "
	       "this-year) or ISO 8601 date (YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM])";
	if ((y = digits(&p, 4)) < 0 || *p++ != '-' || (mo = digits(&p, 2)) < 0 ||
	    *p++ != '-' || (d = digits(&p, 2)) < 0)
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) {
		*why = "no such date (years from 1970)";
		return -1;
	}
	if (*p == 'T' || *p == ' ') {
		p++;
		if ((h = digits(&p, 2)) < 0 || *p++ != ':' || (mi = digits(&p, 2)) < 0)
			return -1;
		if (*p == ':') {
			p++;
			if ((sec = digits(&p, 2)) < 0)
				return -1;
			if (*p == '.' || *p == ',') {
				int scale = 100000000, n = 0;
				p++;
				while (isdigit((unsigned char)*p)) {
					frac_ns += (*p++ - '0') * scale;
					scale /= 10;
					n++;
				}
				if (n == 0 || n > 9)
					return -1;
			}
		}
		if (h > 23 || mi > 59 || sec > 59) {
			*why = "no such time of day";
			return -1;
		}
		if (*p == 'Z') {
			p++;
			have_off = 1;
		} else if (*p == '+' || *p == '-') {
			int sign = *p++ == '-' ? -1 : 1, oh, om;
			if ((oh = digits(&p, 2)) < 0)
				return -1;
			if (*p == ':')
				p++;
			if ((om = digits(&p, 2)) < 0 || oh > 23 || om > 59)
				return -1;
			off = sign * (oh * 3600 + om * 60);
			have_off = 1;
		}
	}
	if (*p != '\0')
		return -1;
	if (have_off) {
		*ns = ((days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + sec) - off) * NS + frac_ns;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1) {
		*why = "cannot be represented in local time";
		return -1;
	}
	*ns = (int64_t)t * NS + frac_ns;
	return 0;
}

int sbx_when_parse(const char *s, time_t now, int64_t *ns, char *err, size_t errlen)
{
	const char *why = "not a time";
	int64_t v;
	int rc;

	if (s == NULL || s[0] == '\0' || strlen(s) > 64) {
		snprintf(err, errlen, "empty or longer than 64 bytes");
		return -1;
	}
	rc = keyword(s, now, &v);
	if (rc < 0)
		why = "local time cannot be represented";
	else if (rc > 0)
		rc = iso(s, &v, &why);
	if (rc == 0 && v < 0) {
		rc = -1;
		why = "before 1970-01-01T00:00Z";
	}
	if (rc != 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	*ns = v;
	return 0;
}
