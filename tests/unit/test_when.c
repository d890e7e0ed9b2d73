/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit search and report --since/--until (audit/auditwhen.c), and
 * rotate --older-than ages (common/units.c): keywords relative to the local day,
 * ISO 8601 dates and date-times in local time or with an offset, and the
 * values that must be refused. Local time is fixed per test through TZ
 * (POSIX rules, so no tzdata is needed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auditwhen.h"
#include "units.h"

#define NS 1000000000LL
#define CET "CET-1CEST,M3.5.0,M10.5.0/3"

static void tz(const char *zone)
{
	setenv("TZ", zone, 1);
	tzset();
}

/* Seconds since the epoch of a UTC date-time. */
static time_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			.tm_hour = h, .tm_min = mi, .tm_sec = s};
	return timegm(&tm);
}

static int64_t parse(const char *s, time_t now)
{
	char err[256];
	int64_t ns = -42;

	if (sbx_when_parse(s, now, &ns, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", s, err);
	return ns;
}

/* A keyword at a given UTC now, and the UTC instant it must name. */
struct kcase {
	const char *s;
	int now[6], want[6];
};

static void expect_table(const struct kcase *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		time_t now = utc(c[i].now[0], c[i].now[1], c[i].now[2], c[i].now[3],
				 c[i].now[4], c[i].now[5]);
		time_t want = utc(c[i].want[0], c[i].want[1], c[i].want[2], c[i].want[3],
				  c[i].want[4], c[i].want[5]);
		if (parse(c[i].s, now) != (int64_t)want * NS)
			fail_msg("case %zu: '%s'", i, c[i].s);
	}
}

static const struct kcase utc_cases[] = {
	/* yesterday across a month and a year boundary */
	{"yesterday", {2026, 1, 1, 8, 0, 0}, {2025, 12, 31, 0, 0, 0}},
	/* weeks start on Monday: a Sunday belongs to the week before */
	{"this-week", {2026, 1, 18, 12, 0, 0}, {2026, 1, 12, 0, 0, 0}},
	/* on Monday itself, this-week is today */
	{"this-week", {2026, 1, 12, 0, 0, 1}, {2026, 1, 12, 0, 0, 0}},
};

static const struct kcase cet_cases[] = {
	/* 15:30Z is 16:30 CET: local midnight is 23:00Z the day before */
	{"today", {2026, 1, 14, 15, 30, 0}, {2026, 1, 13, 23, 0, 0}},
	/* 23:30Z on the 14th is already the 15th in CET */
	{"today", {2026, 1, 14, 23, 30, 0}, {2026, 1, 14, 23, 0, 0}},
	/* summer time: midnight CEST is 22:00Z */
	{"yesterday", {2026, 7, 2, 12, 0, 0}, {2026, 6, 30, 22, 0, 0}},
	/* this-month across the switch to summer time (29 March 2026) */
	{"this-month", {2026, 3, 30, 12, 0, 0}, {2026, 2, 28, 23, 0, 0}},
};

/* 2026-01-14 is a Wednesday. */
static void test_keywords_utc(void **state)
{
	time_t now = utc(2026, 1, 14, 15, 30, 0);

	(void)state;
	tz("UTC0");
	assert_int_equal(parse("now", now), (int64_t)now * NS);
	assert_int_equal(parse("recent", now), ((int64_t)now - 600) * NS);
	assert_int_equal(parse("today", now), (int64_t)utc(2026, 1, 14, 0, 0, 0) * NS);
	assert_int_equal(parse("yesterday", now), (int64_t)utc(2026, 1, 13, 0, 0, 0) * NS);
	assert_int_equal(parse("this-week", now), (int64_t)utc(2026, 1, 12, 0, 0, 0) * NS);
	assert_int_equal(parse("this-month", now), (int64_t)utc(2026, 1, 1, 0, 0, 0) * NS);
	assert_int_equal(parse("this-year", now), (int64_t)utc(2026, 1, 1, 0, 0, 0) * NS);
	expect_table(utc_cases, sizeof(utc_cases) / sizeof(utc_cases[0]));
}

/* Keywords follow the local day, not the UTC one. */
static void test_keywords_local(void **state)
{
	(void)state;
	tz(CET);
	expect_table(cet_cases, sizeof(cet_cases) / sizeof(cet_cases[0]));
	tz("UTC0");
}

static void test_iso(void **state)
{
	time_t now = utc(2026, 1, 14, 15, 30, 0);

	(void)state;
	tz(CET);
	assert_int_equal(parse("2026-01-14", now), (int64_t)utc(2026, 1, 13, 23, 0, 0) * NS);
	assert_int_equal(parse("2026-07-01", now), (int64_t)utc(2026, 6, 30, 22, 0, 0) * NS);
	assert_int_equal(parse("2026-01-14T10:00", now), (int64_t)utc(2026, 1, 14, 9, 0, 0) * NS);
	assert_int_equal(parse("2026-01-14 10:00:07", now), (int64_t)utc(2026, 1, 14, 9, 0, 7) * NS);
	/* an explicit offset is not local time */
	assert_int_equal(parse("2026-01-14T10:00:05Z", now), (int64_t)utc(2026, 1, 14, 10, 0, 5) * NS);
	assert_int_equal(parse("2026-01-14T10:00:05.25Z", now),
			 (int64_t)utc(2026, 1, 14, 10, 0, 5) * NS + 250000000);
	assert_int_equal(parse("2026-01-14T10:00+05:30", now), (int64_t)utc(2026, 1, 14, 4, 30, 0) * NS);
	assert_int_equal(parse("2026-01-14T10:00-0200", now), (int64_t)utc(2026, 1, 14, 12, 0, 0) * NS);
	assert_int_equal(parse("2024-02-29T00:00Z", now), (int64_t)utc(2024, 2, 29, 0, 0, 0) * NS);
	tz("UTC0");
	assert_int_equal(parse("2026-01-14", now), (int64_t)utc(2026, 1, 14, 0, 0, 0) * NS);
}

/* A second, independent set of expected values (epoch seconds worked out
 * by hand) for the same parser, in UTC. Wednesday 2026-01-07T15:30:45Z. */
#define WED 1767799845LL

static void test_utc_fixed(void **state)
{
	time_t now = (time_t)WED;

	(void)state;
	tz("UTC0");
	assert_int_equal(parse("1970-01-01", now), 0);
	assert_int_equal(parse("2026-01-07", now), 1767744000LL * NS);
	assert_int_equal(parse("2026-01-07T15:30", now), 1767799800LL * NS);
	assert_int_equal(parse("2026-01-07 15:30:45", now), WED * NS);
	assert_int_equal(parse("2026-01-07T15:30:45Z", now), WED * NS);
	assert_int_equal(parse("2026-01-07T15:30:45.25Z", now), WED * NS + NS / 4);
	assert_int_equal(parse("2026-01-07T15:30:45.123456789Z", now), WED * NS + 123456789);
	assert_int_equal(parse("2026-01-07T16:30:45+01:00", now), WED * NS);
	assert_int_equal(parse("2026-01-07T14:00:45-01:30", now), WED * NS);
	assert_int_equal(parse("2024-02-29", now), 1709164800LL * NS); /* leap day */
	assert_int_equal(parse("now", now), WED * NS);
	assert_int_equal(parse("today", now), 1767744000LL * NS);
	assert_int_equal(parse("yesterday", now), (1767744000LL - 86400) * NS);
	assert_int_equal(parse("this-week", now), (1767744000LL - 2 * 86400) * NS); /* Monday 5th */
	assert_int_equal(parse("this-month", now), 1767225600LL * NS);
	/* 1970-01-01 local in CET is 23:00Z the day before: before the epoch */
	tz(CET);
	{
		char err[256];
		int64_t ns = 7;
		assert_int_equal(sbx_when_parse("1970-01-01", now, &ns, err, sizeof(err)), -1);
		assert_int_equal(ns, 7);
	}
	tz("UTC0");
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"", "Today", "today ", " today", "tomorrow", "2026-02-30", "2025-02-29",
		"2026-13-01", "2026-00-10", "2026-1-14", "26-01-14", "2026-01-14T24:00",
		"2026-01-14T10:60", "2026-01-14T10", "2026-01-14T10:00:61", "2026-01-14X",
		"2026-01-14T10:00:00.", "2026-01-14T10:00:00.1234567890Z", "2026-01-14T10:00+5",
		"2026-01-14T10:00+24:00", "1969-12-31", "2026-01-14T10:00Z junk",
		"123456789012345678901234567890123456789012345678901234567890123456789",
		"2026-01-07T12:00:00ZZ", "NOW", "2026-01-07Z", "1970-01-01T00:00+01:00",
	};
	char err[256];
	int64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = 7;
		err[0] = '\0';
		if (sbx_when_parse(bad[i], 0, &ns, err, sizeof(err)) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(ns, 7);      /* untouched */
		assert_true(strlen(err) > 0); /* says why */
	}
	assert_int_equal(sbx_when_parse(NULL, 0, &ns, err, sizeof(err)), -1);
}

static void test_age(void **state)
{
	static const char *const bad[] = {"", "90", "0d", "d", "1y", "1.5d", "-1d", "1dd",
					  "99999999999999999999s", "40000d", NULL};
	int64_t v;
	size_t i;

	(void)state;
	assert_int_equal(sbx_parse_age("45s", &v), 0);
	assert_true(v == 45);
	assert_int_equal(sbx_parse_age("90m", &v), 0);
	assert_true(v == 5400);
	assert_int_equal(sbx_parse_age("12h", &v), 0);
	assert_true(v == 43200);
	assert_int_equal(sbx_parse_age("90d", &v), 0);
	assert_true(v == 90 * 86400);
	assert_int_equal(sbx_parse_age("2w", &v), 0);
	assert_true(v == 14 * 86400);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sbx_parse_age(bad[i], &v) == 0)
			fail_msg("accepted '%s'", bad[i] ? bad[i] : "(null)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keywords_utc),
		cmocka_unit_test(test_keywords_local),
		cmocka_unit_test(test_iso),
		cmocka_unit_test(test_utc_fixed),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_age),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
