/* --since/--until points in time and --older-than ages (common/timespec.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "timespec.h"

#define S 1000000000LL
/* Wednesday 2026-01-07T15:30:45.5Z */
#define NOW (1767799845LL * S + S / 2)

static int64_t when(const char *s)
{
	int64_t v = -1;

	assert_int_equal(sbx_parse_when(s, NOW, &v), 0);
	return v;
}

static void test_iso(void **state)
{
	(void)state;
	assert_true(when("1970-01-01") == 0);
	assert_true(when("2026-01-07") == 1767744000LL * S);
	assert_true(when("2026-01-07T15:30") == 1767799800LL * S);
	assert_true(when("2026-01-07 15:30:45") == 1767799845LL * S);
	assert_true(when("2026-01-07T15:30:45Z") == 1767799845LL * S);
	assert_true(when("2026-01-07T15:30:45.25Z") == 1767799845LL * S + S / 4);
	assert_true(when("2026-01-07T15:30:45.123456789Z") == 1767799845LL * S + 123456789);
	assert_true(when("2026-01-07T16:30:45+01:00") == 1767799845LL * S);
	assert_true(when("2026-01-07T14:00:45-01:30") == 1767799845LL * S);
	assert_true(when("2024-02-29") == 1709164800LL * S); /* leap day */
}

static void test_keywords(void **state)
{
	(void)state;
	assert_true(when("now") == NOW);
	assert_true(when("today") == 1767744000LL * S);
	assert_true(when("yesterday") == (1767744000LL - 86400) * S);
	assert_true(when("this-week") == (1767744000LL - 2 * 86400) * S); /* Monday 5th */
	assert_true(when("this-month") == 1767225600LL * S);
}

static void test_when_rejects(void **state)
{
	static const char *const bad[] = {
		"", "tomorrow", "2026-1-07", "2026-13-01", "2026-02-29", "2026-01-32",
		"2026-01-07T24:00", "2026-01-07T12:60", "2026-01-07T12:00:60", "2026-01-07T12",
		"2026-01-07T12:00:00.", "2026-01-07T12:00:00.1234567890", "2026-01-07T12:00+1",
		"2026-01-07x", "1969-12-31", "2026-01-07T12:00:00ZZ", " 2026-01-07", "NOW",
	};
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sbx_parse_when(bad[i], NOW, &v) == 0)
			fail_msg("accepted '%s'", bad[i]);
}

static void test_age(void **state)
{
	static const char *const bad[] = {"", "90", "0d", "d", "1y", "1.5d", "-1d", "1dd",
					  "99999999999999999999s", "40000d"};
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
			fail_msg("accepted '%s'", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iso),
		cmocka_unit_test(test_keywords),
		cmocka_unit_test(test_when_rejects),
		cmocka_unit_test(test_age),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
