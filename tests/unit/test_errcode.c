/* SPDX-License-Identifier: ISC */
/*
 * The error-code table (common/errcode.c) through each of its consumers:
 * the result schema's error.code enum and outcome enum
 * (docs/result.schema.json, built into sbx), sbx(1)'s ERROR CODES list, the
 * result of a failure (every member the schema requires), and the MCP
 * form of the schema (no $ref, no type arrays: anyOf for nullables).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errcode.h"
#include "errobj.h"
#include "resultschema.h"
#include "hint.h"

static json_t *schema_prop(json_t *s, const char *name)
{
	return json_object_get(json_object_get(s, "properties"), name);
}

static bool in_array(json_t *a, const char *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x)
		if (json_is_string(x) && strcmp(json_string_value(x), v) == 0)
			return true;
	return false;
}

static void test_schema_codes_are_the_table(void **state)
{
	json_t *s = result_schema();
	json_t *codes, *outcomes;

	(void)state;
	assert_non_null(s);
	codes = json_object_get(json_object_get(json_object_get(json_object_get(s, "$defs"), "error"), "properties"), "code");
	codes = json_object_get(codes, "enum");
	outcomes = json_object_get(schema_prop(s, "outcome"), "enum");
	assert_int_equal(json_array_size(codes), sbx_errcode_count());
	for (size_t i = 0; i < sbx_errcode_count(); i++) {
		assert_true(in_array(codes, sbx_errcode_at(i)->code));
		assert_true(in_array(outcomes, sbx_errcode_at(i)->outcome));
		assert_true(sbx_errcode_at(i)->exit_status != 0);
	}
	assert_null(sbx_errcode_at(sbx_errcode_count()));
	/* every non-ok outcome has its row */
	for (size_t i = 0; i < json_array_size(outcomes); i++) {
		const char *o = json_string_value(json_array_get(outcomes, i));
		if (strcmp(o, "ok") != 0 && strcmp(o, "sandbox_error") != 0)
			assert_non_null(sbx_errcode_of_outcome(o));
	}
	assert_null(sbx_errcode_of_outcome("usage"));
	assert_null(sbx_errcode_find("nope"));
	json_decref(s);
}

static void test_version(void **state)
{
	(void)state;
	assert_string_equal(result_schema_version(), "1.0");
}

static void test_failure_has_every_member(void **state)
{
	json_t *s = result_schema(), *r = result_of_failure("usage", "sbx: run: bad \xff"), *req;
	size_t i;
	json_t *k;

	(void)state;
	req = json_object_get(s, "required");
	assert_true(json_array_size(req) > 20);
	json_array_foreach(req, i, k)
		assert_non_null(json_object_get(r, json_string_value(k)));
	assert_int_equal(json_object_size(r), json_array_size(req));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "code")), "usage");
	assert_string_equal(json_string_value(json_object_get(r, "outcome")), "sandbox_error");
	json_decref(r);
	json_decref(s);
}

/* no "$ref" and no "type": [...] anywhere in v */
static void assert_portable(json_t *v) // NOLINT(misc-no-recursion): the schema nests a few levels
{
	const char *k;
	json_t *x;
	size_t i;

	(void)k;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			assert_portable(x);
		return;
	}
	if (!json_is_object(v))
		return;
	assert_null(json_object_get(v, "$ref"));
	assert_false(json_is_array(json_object_get(v, "type")));
	json_object_foreach(v, k, x)
		assert_portable(x);
}

static void test_inline_for_mcp(void **state)
{
	json_t *s = result_schema_inline();
	json_t *err;

	(void)state;
	assert_non_null(s);
	assert_null(json_object_get(s, "$defs"));
	assert_null(json_object_get(s, "$schema"));
	assert_portable(s);
	/* limits, audit, inputs, disk_full typed (issue 16) */
	assert_non_null(json_object_get(json_array_get(json_object_get(schema_prop(s, "limits"), "anyOf"), 0), "properties"));
	assert_non_null(json_object_get(json_array_get(json_object_get(schema_prop(s, "audit"), "anyOf"), 0), "properties"));
	assert_non_null(json_object_get(json_object_get(schema_prop(s, "inputs"), "items"), "properties"));
	assert_non_null(json_object_get(json_object_get(schema_prop(s, "disk_full"), "items"), "enum"));
	err = json_array_get(json_object_get(schema_prop(s, "error"), "anyOf"), 0);
	assert_non_null(json_object_get(json_object_get(err, "properties"), "code"));
	json_decref(s);
}

/* sbx(1) lists every code (ERROR CODES) */
static void test_man_page_lists_every_code(void **state)
{
	FILE *f = fopen(SBX_SRCDIR "/man/sbx.1", "r");
	char *page = calloc(1, 1 << 20);
	size_t n;

	(void)state;
	assert_non_null(f);
	assert_non_null(page);
	n = fread(page, 1, (1 << 20) - 1, f);
	fclose(f);
	page[n] = '\0';
	assert_non_null(strstr(page, ".Sh ERROR CODES"));
	for (size_t i = 0; i < sbx_errcode_count(); i++) {
		char item[64];
		snprintf(item, sizeof(item), "\n.It Cm %s", sbx_errcode_at(i)->code);
		if (strstr(strstr(page, ".Sh ERROR CODES"), item) == NULL)
			fail_msg("sbx(1) ERROR CODES lacks %s", sbx_errcode_at(i)->code);
	}
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema_codes_are_the_table),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_failure_has_every_member),
		cmocka_unit_test(test_inline_for_mcp),
		cmocka_unit_test(test_man_page_lists_every_code),
	};
	return cmocka_run_group_tests_name("errcode", tests, NULL, NULL);
}
