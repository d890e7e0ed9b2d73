/* SPDX-License-Identifier: ISC */
#include "units.h"

#include <stdio.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sbx_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Split "12.5xyz" into the number (scaled by 1000 to keep three decimals,
 * enough for milliseconds and for fractional cpus) and the suffix. */
static int parse_milli(const char *s, uint64_t *milli, const char **suffix)
{
	uint64_t whole = 0, frac = 0;
	int fdigits = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX / 1000 - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			if (fdigits == 3)
				return -1; /* finer than a thousandth: reject rather than round */
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdigits++;
		}
		while (fdigits++ < 3)
			frac *= 10;
	}
	*milli = whole * 1000 + frac;
	*suffix = p;
	return 0;
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b != 0 && a > UINT64_MAX / b)
		return -1;
	*out = a * b;
	return 0;
}

int sbx_parse_size(const char *s, uint64_t *out)
{
	uint64_t milli, mult, v;
	const char *suf;

	if (s == NULL || parse_milli(s, &milli, &suf) < 0)
		return -1;
	switch (toupper((unsigned char)*suf)) {
	case '\0': mult = 1; break;
	case 'K': mult = 1ULL << 10; suf++; break;
	case 'M': mult = 1ULL << 20; suf++; break;
	case 'G': mult = 1ULL << 30; suf++; break;
	case 'T': mult = 1ULL << 40; suf++; break;
	case 'B': mult = 1; break;
	default: return -1;
	}
	if (strcmp(suf, "") != 0 && strcmp(suf, "B") != 0 && strcmp(suf, "iB") != 0)
		return -1;
	if (mul_ok(milli, mult, &v) < 0)
		return -1;
	if (v % 1000 != 0)
		return -1; /* a fraction of a byte */
	*out = v / 1000;
	return 0;
}

int sbx_parse_duration_ms(const char *s, uint64_t *out)
{
	uint64_t milli, v;
	const char *suf;

	if (s == NULL || parse_milli(s, &milli, &suf) < 0)
		return -1;
	if (strcmp(suf, "ms") == 0) {
		if (milli % 1000 != 0)
			return -1;
		*out = milli / 1000;
		return 0;
	}
	if (strcmp(suf, "") == 0 || strcmp(suf, "s") == 0)
		v = milli;
	else if (strcmp(suf, "m") == 0 || strcmp(suf, "min") == 0) {
		if (mul_ok(milli, 60, &v) < 0)
			return -1;
	} else if (strcmp(suf, "h") == 0) {
		if (mul_ok(milli, 3600, &v) < 0)
			return -1;
	} else
		return -1;
	*out = v;
	return 0;
}

int sbx_parse_age(const char *s, int64_t *out)
{
	const uint64_t max = 100ULL * 366 * 86400;
	uint64_t milli, unit;
	const char *suf;

	if (s == NULL || parse_milli(s, &milli, &suf) < 0 || milli % 1000 != 0)
		return -1;
	switch (*suf) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 604800; break;
	default: return -1;
	}
	milli /= 1000;
	if (suf[1] != '\0' || milli == 0 || milli > max / unit)
		return -1;
	*out = (int64_t)(milli * unit);
	return 0;
}

void sbx_format_duration_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms != 0 && ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms != 0 && ms % 60000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
	else if (ms != 0 && ms % 1000 == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, len, "%llums", (unsigned long long)ms);
}

void sbx_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (bytes >= 1024 && bytes % 1024 == 0 && u < 3) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[u]);
}
