#include "timespec.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

#define NS 1000000000LL

/* Exactly n digits at *p, advancing it; -1 if not. */
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

static int days_in(int y, int m)
{
	static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[m - 1];
}

static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			.tm_hour = h, .tm_min = mi, .tm_sec = s};

	return (int64_t)timegm(&tm);
}

static int parse_iso(const char *p, int64_t *out)
{
	int y, mo, d, h = 0, mi = 0, s = 0, sign, zh, zm;
	int64_t frac = 0, scale = NS / 10, secs;

	if ((y = digits(&p, 4)) < 1970 || *p++ != '-' || (mo = digits(&p, 2)) < 1 || mo > 12 ||
	    *p++ != '-' || (d = digits(&p, 2)) < 1 || d > days_in(y, mo))
		return -1;
	if (*p == 'T' || *p == ' ') {
		p++;
		if ((h = digits(&p, 2)) < 0 || h > 23 || *p++ != ':' ||
		    (mi = digits(&p, 2)) < 0 || mi > 59)
			return -1;
		if (*p == ':') {
			p++;
			if ((s = digits(&p, 2)) < 0 || s > 59)
				return -1;
			if (*p == '.') {
				p++;
				if (!isdigit((unsigned char)*p))
					return -1;
				for (; isdigit((unsigned char)*p); p++) {
					if (scale == 0)
						return -1; /* more than 9 digits */
					frac += (*p - '0') * scale;
					scale /= 10;
				}
			}
		}
	}
	secs = utc(y, mo, d, h, mi, s);
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if ((zh = digits(&p, 2)) < 0 || zh > 23 || *p++ != ':' ||
		    (zm = digits(&p, 2)) < 0 || zm > 59)
			return -1;
		secs -= sign * ((int64_t)zh * 3600 + (int64_t)zm * 60);
	}
	if (*p != '\0' || secs < 0)
		return -1;
	*out = secs * NS + frac;
	return 0;
}

int sbx_parse_when(const char *s, int64_t now_ns, int64_t *out)
{
	time_t now = (time_t)(now_ns / NS);
	struct tm tm;
	int64_t day;

	if (s == NULL || now_ns < 0 || gmtime_r(&now, &tm) == NULL)
		return -1;
	day = utc(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, 0, 0, 0);
	if (strcmp(s, "now") == 0)
		*out = now_ns;
	else if (strcmp(s, "today") == 0)
		*out = day * NS;
	else if (strcmp(s, "yesterday") == 0)
		*out = (day - 86400) * NS;
	else if (strcmp(s, "this-week") == 0)
		*out = (day - (int64_t)86400 * ((tm.tm_wday + 6) % 7)) * NS; /* back to Monday */
	else if (strcmp(s, "this-month") == 0)
		*out = utc(tm.tm_year + 1900, tm.tm_mon + 1, 1, 0, 0, 0) * NS;
	else
		return parse_iso(s, out);
	return 0;
}

int sbx_parse_age(const char *s, int64_t *out)
{
	const int64_t max = 100LL * 366 * 86400;
	int64_t v = 0, unit;
	const char *p = s;

	if (s == NULL || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -1;
	}
	switch (*p) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = (int64_t)7 * 86400; break;
	default: return -1;
	}
	if (p[1] != '\0' || v == 0 || v > max / unit)
		return -1;
	*out = v * unit;
	return 0;
}
