/* SPDX-License-Identifier: ISC */
/*
 * Every row of the outcome and limit tables (common/outcome.h,
 * common/limit.h) through every consumer: a new row that a consumer does
 * not derive, or a man page or completion list that forgets one, fails
 * here. Consumers: the supervisor's exit statuses, sbx-audit search
 * --outcome, the report's palette, the MCP output schema and tool
 * description, the client's error message, bash completion, the man pages
 * (sbx(1), sbx-audit(1), sbx.policy(5)); the policy parser and its
 * defaults, the tighten-only merge, the limits JSON of the result,
 * `sbx-audit show --json`, `sbx policies --json` and the dry run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"
#include "limitjson.h"
#include "outcome.h"
#include "policy.h"
#include "proto.h"
#include "recorder.h"
#include "report.h"
#include "runs.h"
#include "show.h"
#include "../../client/dryrun.h"
#include "../../client/errobj.h"
#include "../../client/mcp/mcp.h"

static char *slurp(const char *rel)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", SBX_SRCDIR, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The text of a man page item: from the line starting with `start` to the
 * next ".It " or ".El" at its level (nested lists skipped). */
static char *item(const char *page, const char *start)
{
	const char *a = strstr(page, start), *p;
	int depth = 0;
	char *out;

	if (a == NULL) {
		fail_msg("no '%s' in the man page", start);
		return NULL;
	}
	for (p = strchr(a, '\n'); p != NULL && p[1] != '\0'; p = strchr(p + 1, '\n')) {
		const char *l = p + 1;

		if (strncmp(l, ".Bl", 3) == 0)
			depth++;
		else if (strncmp(l, ".El", 3) == 0 ? depth-- == 0 : depth == 0 && strncmp(l, ".It ", 4) == 0)
			break;
	}
	out = strndup(a, p ? (size_t)(p - a) : strlen(a));
	assert_non_null(out);
	return out;
}

/* word as a whole word (between non-identifier characters) in text */
static int has_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
		unsigned char before = p == text ? ' ' : (unsigned char)p[-1], after = (unsigned char)p[n];
		if (!(before == '_' || (before >= 'a' && before <= 'z')) && !(after == '_' || (after >= 'a' && after <= 'z')))
			return 1;
	}
	return 0;
}

/* ---- outcomes ---- */

static void test_outcome_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
		const struct sbx_outcome_def *o = &sbx_outcome_defs[i];

		assert_int_equal(o->id, i);
		assert_ptr_equal(sbx_outcome_by_name(o->name), o);
		assert_true(strlen(o->name) < 16); /* the record's outcome field */
		assert_true(strspn(o->name, "abcdefghijklmnopqrstuvwxyz_") == strlen(o->name)); /* SQL-safe */
		assert_true(o->limit == SBX_LIMIT_NONE || (o->limit >= 0 && o->limit < SBX_LIMIT_N));
		assert_true(has_word(sbx_outcome_names(true), o->name));
		assert_int_equal(has_word(sbx_outcome_names(false), o->name), sbx_outcome_of_run(o));
	}
	assert_int_equal(sbx_outcome_defs[SBX_OUTCOME_TIMEOUT].status, SBX_EXIT_TIMEOUT);
	assert_int_equal(sbx_outcome_defs[SBX_OUTCOME_SANDBOX_ERROR].status, SBX_EXIT_FAILURE);
	assert_null(sbx_outcome_by_name("nope"));
}

static void test_outcome_search_and_report(void **state)
{
	(void)state;
	for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
		const struct sbx_outcome_def *o = &sbx_outcome_defs[i];

		assert_true(runs_outcome_ok(o->name)); /* sbx-audit search --outcome */
		assert_string_equal(report_color(o->name), o->color);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(sbx_outcome_defs[j].color, o->color);
	}
	assert_false(runs_outcome_ok("nope"));
	assert_string_not_equal(report_color("nope"), sbx_outcome_defs[0].color);
}

static void test_outcome_mcp_schema(void **state)
{
	json_t *def, *en;
	const char *desc;
	size_t k = 0;

	(void)state;
	def = mcp_tool_def(&mcp_revisions[0]); /* the newest: with outputSchema */
	assert_non_null(def);
	en = json_object_get(json_object_get(json_object_get(json_object_get(def, "outputSchema"), "properties"),
					     "outcome"), "enum");
	desc = json_string_value(json_object_get(def, "description"));
	assert_non_null(desc);
	for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
		const struct sbx_outcome_def *o = &sbx_outcome_defs[i];

		if (!sbx_outcome_of_run(o)) {
			assert_false(has_word(desc, o->name));
			continue;
		}
		assert_string_equal(json_string_value(json_array_get(en, k++)), o->name);
		assert_true(has_word(desc, o->name));
	}
	assert_int_equal(json_array_size(en), k);
	json_decref(def);
}

/* The skip reasons of the result schema are proto.h's SBX_ART_SKIPS, in
 * its order, the recorder's only list of them. */
static void test_skip_reasons_schema(void **state)
{
	static const char *const names[] = {
#define SBX_ART_SKIP_NAME(sym, name, words) name,
		SBX_ART_SKIPS(SBX_ART_SKIP_NAME)
#undef SBX_ART_SKIP_NAME
	};
	char path[1024];
	json_t *schema, *en;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/result.schema.json", SBX_SRCDIR);
	schema = json_load_file(path, 0, NULL);
	assert_non_null(schema);
	en = json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
		json_object_get(schema, "properties"), "skipped"), "items"), "properties"), "reason"), "enum");
	assert_non_null(en);
	assert_int_equal(json_array_size(en), SBX_ART_SKIP_N);
	for (size_t i = 0; i < SBX_ART_SKIP_N; i++)
		assert_string_equal(json_string_value(json_array_get(en, i)), names[i]);
	json_decref(schema);
}

/* The client's error message of a limit outcome names the limit. */
static void test_outcome_error_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
		const struct sbx_outcome_def *o = &sbx_outcome_defs[i];
		json_t *res, *err;

		if (o->limit == SBX_LIMIT_NONE)
			continue;
		res = json_pack("{s:s,s:o}", "outcome", o->name, "limits", sbx_limits_json(&(struct sbx_limits){
			.wall_ms = 7, .cpu_ms = 7, .memory_bytes = 7, .pids = 7, .output_bytes = 7, .file_size_bytes = 7}));
		err = result_error(res, NULL);
		assert_non_null(err);
		assert_non_null(strstr(json_string_value(json_object_get(err, "message")), sbx_limit_defs[o->limit].what));
		assert_non_null(strstr(json_string_value(json_object_get(err, "message")), " 7"));
		json_decref(err);
		json_decref(res);
	}
}

static void test_outcome_completion_and_man(void **state)
{
	char *comp = slurp("packaging/completion/sbx-audit"), *audit = slurp("man/sbx-audit.1");
	char *sbx = slurp("man/sbx.1"), *words, *search, *columns, *result;
	const char *a;

	(void)state;
	a = strstr(comp, "--outcome)");
	assert_non_null(a);
	a = strstr(a, "compgen -W '");
	assert_non_null(a);
	words = strndup(a + 12, (size_t)(strchr(a + 12, '\'') - (a + 12)));
	search = item(audit, ".It Fl -outcome Ar name");
	columns = item(audit, ".It Outcome columns");
	result = item(sbx, ".It Cm outcome\nOne of");
	for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
		const struct sbx_outcome_def *o = &sbx_outcome_defs[i];

		if (!has_word(words, o->name))
			fail_msg("bash completion of --outcome lacks %s", o->name);
		if (!has_word(search, o->name) || !has_word(columns, o->name))
			fail_msg("sbx-audit(1) lacks outcome %s", o->name);
		if (sbx_outcome_of_run(o) && !has_word(result, o->name))
			fail_msg("sbx(1) lacks outcome %s", o->name);
	}
	free(words);
	free(search);
	free(columns);
	free(result);
	free(comp);
	free(audit);
	free(sbx);
}

/* ---- limits ---- */

static void test_limit_table(void **state)
{
	struct sbx_policy p;

	(void)state;
	sbx_policy_defaults(&p);
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];

		assert_int_equal(d->id, i);
		assert_ptr_equal(sbx_limit_by_key(d->key), d);
		assert_true(strlen(d->key) < 16); /* the record's limit field */
		assert_int_equal(sbx_limit_get(&p.limits, d->id), d->def);
		assert_true(d->def >= 1 && d->def <= d->max);
	}
}

/* Each key in a policy, in its unit, at its largest value and one above. */
static void test_limit_policy_and_tighten(void **state)
{
	(void)state;
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];
		struct sbx_policy p;
		struct sbx_limits eff, req;
		char text[128], v[32], err[512];
		uint64_t want = d->def * 2 <= d->max ? d->def * 2 : d->max;

		sbx_limit_format(d, want, v, sizeof(v));
		snprintf(text, sizeof(text), "[limits]\n%s = %s\n", d->key, v);
		memset(&p, 0, sizeof(p));
		if (sbx_policy_parse("t.policy", text, strlen(text), &p, err, sizeof(err)) < 0)
			fail_msg("%s = %s: %s", d->key, v, err);
		assert_int_equal(sbx_limit_get(&p.limits, d->id), want);
		if (d->max < UINT64_MAX / 2) {
			sbx_limit_format(d, d->max + (d->unit == SBX_UNIT_MILLICPU ? 1000 : 1), v, sizeof(v));
			snprintf(text, sizeof(text), "[limits]\n%s = %s\n", d->key, v);
			assert_int_equal(sbx_policy_parse("t.policy", text, strlen(text), &p, err, sizeof(err)), -1);
			assert_non_null(strstr(err, d->key));
		}
		/* the merge: tighter is taken, looser is refused naming the key */
		sbx_limits_default(&eff);
		memset(&req, 0, sizeof(req));
		sbx_limit_set(&req, d->id, 1);
		assert_int_equal(sbx_limits_tighten(&eff, &req, "p", err, sizeof(err)), 0);
		assert_int_equal(sbx_limit_get(&eff, d->id), 1);
		sbx_limit_set(&req, d->id, 2);
		assert_int_equal(sbx_limits_tighten(&eff, &req, "p", err, sizeof(err)), -1);
		/* "OPTION-or-KEY 2 exceeds policy p's KEY 1", in the policy's units */
		{
			char msg[128], one[32], two[32];

			sbx_limit_format(d, 1, one, sizeof(one));
			sbx_limit_format(d, 2, two, sizeof(two));
			snprintf(msg, sizeof(msg), "%s %s exceeds policy p's %s %s", d->option ? d->option : d->key,
				 two, d->key, one);
			assert_string_equal(err, msg);
		}
	}
}

/* The JSON key of every limit, with its value, wherever limits are JSON. */
static void check_limits_object(json_t *o, const struct sbx_limits *l)
{
	assert_true(json_is_object(o));
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];
		json_t *v = json_object_get(o, d->json), *want = sbx_limit_json(d, sbx_limit_get(l, d->id));

		if (v == NULL)
			fail_msg("no %s in a limits object", d->json);
		assert_true(json_equal(v, want));
		json_decref(want);
	}
}

static void test_limit_json_consumers(void **state)
{
	static struct sbx_dry_run dr;
	static struct sbx_run_desc desc;
	static struct rec c;
	static struct shown sh;
	struct sbx_limits l;
	json_t *j;

	(void)state;
	sbx_limits_default(&l);
	l.cpus_milli = 1500;
	l.input_bytes = 12345;
	/* sbx policies --json and the function itself */
	j = sbx_limits_json(&l);
	check_limits_object(j, &l);
	json_decref(j);
	/* the result */
	desc.limits = l;
	c.d = &desc;
	j = result_json(&c, NULL);
	assert_non_null(j);
	check_limits_object(json_object_get(j, "limits"), &l);
	json_decref(j);
	/* the dry run: at the top level */
	dr.run.limits = l;
	dr.run.argv_len = 1;
	j = dry_run_json(&dr);
	check_limits_object(j, &l);
	json_decref(j);
	/* sbx-audit show --json: input_size from its record field */
	sh.ok = 1;
	sh.rec.kind = SBX_REC_START;
	sh.rec.limits = l;
	sh.rec.limits.input_bytes = 0;
	assert_int_equal(sbx_rec_put_u64(&sh.rec, SBX_F_INPUT_LIMIT, l.input_bytes, NULL, 0), 0);
	j = show_json("x", &sh, 1);
	check_limits_object(json_object_get(json_object_get(j, "start"), "limits"), &l);
	assert_null(json_object_get(json_object_get(j, "start"), "input_bytes"));
	json_decref(j);
	sbx_rext_free(&sh.rec.ext);
}

/* result_json releases the caller's traceback reference on every path (the
 * contract recorder/live.c and recorder.c rely on):
 * recorder/live.c once released it again after the call's result, a use
 * after free that ASan caught as a live session dying after a call with
 * a traceback (tests/integration/80 under SANITIZE=1). */
static void test_result_json_traceback_ref(void **state)
{
	static struct sbx_run_desc desc;
	static struct rec c;
	json_t *tb = json_object(), *j;

	(void)state;
	sbx_limits_default(&desc.limits);
	c.d = &desc;
	assert_non_null(tb);
	json_incref(tb); /* the test's own reference, to watch the count */
	j = result_json(&c, tb);
	assert_non_null(j);
	assert_ptr_equal(json_object_get(j, "traceback"), tb);
	assert_int_equal(tb->refcount, 2); /* the test's and the result's */
	json_decref(j);
	assert_int_equal(tb->refcount, 1); /* the test's alone: nothing leaked */
	json_decref(tb);
}

static void test_limit_man(void **state)
{
	char *pol = slurp("man/sbx.policy.5"), *sbx = slurp("man/sbx.1"), *lim;

	(void)state;
	lim = item(sbx, ".It Cm limits\nThe effective limits");
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		char key[64];

		snprintf(key, sizeof(key), ".It Ic %s\n", sbx_limit_defs[i].key);
		if (strstr(pol, key) == NULL)
			fail_msg("sbx.policy(5) does not describe %s", sbx_limit_defs[i].key);
		if (!has_word(lim, sbx_limit_defs[i].json))
			fail_msg("sbx(1) does not list %s among the result's limits", sbx_limit_defs[i].json);
	}
	free(lim);
	free(pol);
	free(sbx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcome_table),
		cmocka_unit_test(test_outcome_search_and_report),
		cmocka_unit_test(test_outcome_mcp_schema),
		cmocka_unit_test(test_outcome_error_message),
		cmocka_unit_test(test_outcome_completion_and_man),
		cmocka_unit_test(test_limit_table),
		cmocka_unit_test(test_limit_policy_and_tighten),
		cmocka_unit_test(test_limit_json_consumers),
		cmocka_unit_test(test_result_json_traceback_ref),
		cmocka_unit_test(test_limit_man),
		cmocka_unit_test(test_skip_reasons_schema),
	};
	return cmocka_run_group_tests_name("vocab", tests, NULL, NULL);
}
