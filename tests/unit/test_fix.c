/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the retry loop's pieces that need no helper: excerpts of
 * long output, the fixer's input document, reading its answer (raw or
 * JSON), and running it (exit status, timeout with its process group
 * killed, large input without deadlock, an oversized answer). The client
 * is not in libsbx.a, so its sources are compiled in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "fixdoc.h"
#include "fixer.h"
#include "signals.h"
#include "textutil.h"

static void test_excerpt_short_kept(void **state)
{
	bool cut = true;
	char *s = fix_excerpt("hello", 5, 4, 4, &cut);

	(void)state;
	assert_false(cut);
	assert_string_equal(s, "hello");
	free(s);
	s = fix_excerpt("12345678", 8, 4, 4, &cut); /* exactly head + tail */
	assert_false(cut);
	assert_string_equal(s, "12345678");
	free(s);
}

static void test_excerpt_head_and_tail(void **state)
{
	bool cut = false;
	char *s = fix_excerpt("0123456789abcdef", 16, 4, 3, &cut);

	(void)state;
	assert_true(cut);
	assert_string_equal(s, "0123\n[... 9 bytes omitted ...]\ndef");
	free(s);
}

static void test_excerpt_utf8_boundaries(void **state)
{
	/* "aé" + 10 x + "éb": cutting at byte 2 or 3 from either end would
	 * split an é (c3 a9). */
	const char *in = "a\xc3\xa9xxxxxxxxxx\xc3\xa9" "b";
	bool cut = false;
	char *s = fix_excerpt(in, strlen(in), 2, 2, &cut);
	char *clean;

	(void)state;
	assert_true(cut);
	assert_string_equal(s, "a\n[... 12 bytes omitted ...]\n\xc3\xa9" "b");
	clean = sbx_utf8_sanitize(s, strlen(s));
	assert_string_equal(clean, s); /* still valid UTF-8 */
	free(clean);
	free(s);
}

/* --jsonl: a chunk ending inside a character keeps those bytes back. */
static void test_utf8_incomplete_tail(void **state)
{
	(void)state;
	assert_int_equal(utf8_incomplete_tail("abc", 3), 0);
	assert_int_equal(utf8_incomplete_tail("a\xc3", 2), 1);
	assert_int_equal(utf8_incomplete_tail("a\xc3\xa9", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xe2\x82", 2), 2);      /* 2 of the 3 bytes of the euro sign */
	assert_int_equal(utf8_incomplete_tail("\xe2\x82\xac", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xf0\x9f\x98", 3), 3);  /* 3 of 4 */
	assert_int_equal(utf8_incomplete_tail("x\x80\x80\x80", 4), 0); /* garbage: passed on, replaced later */
	assert_int_equal(utf8_incomplete_tail("a\xf5", 2), 0);         /* never a lead byte: nothing to wait for */
	assert_int_equal(utf8_incomplete_tail("a\xff\x80", 3), 0);
	assert_int_equal(utf8_incomplete_tail("", 0), 0);
}

static void test_answer_forms(void **state)
{
	char why[160];
	size_t n = 0;
	char *c;

	(void)state;
	c = fixer_answer_code("print(1)\n", 9, &n, why, sizeof(why));
	assert_string_equal(c, "print(1)\n");
	assert_int_equal(n, 9);
	free(c);
	c = fixer_answer_code(" \n{\"code\": \"print(2)\\n\", \"note\": 1}", 35, &n, why, sizeof(why));
	assert_string_equal(c, "print(2)\n");
	free(c);
	/* Python that starts with '{' and is not JSON: raw code. */
	c = fixer_answer_code("{1: 2}[1]\n", 10, &n, why, sizeof(why));
	assert_string_equal(c, "{1: 2}[1]\n");
	free(c);
	/* A JSON object without "code": the fixer got the protocol wrong. */
	assert_null(fixer_answer_code("{\"fix\": \"x\"}", 12, &n, why, sizeof(why)));
	assert_string_equal(why, "it answered a JSON object without a string \"code\"");
	assert_null(fixer_answer_code(" \n\t", 3, &n, why, sizeof(why)));
	assert_string_equal(why, "it answered no code");
	assert_null(fixer_answer_code("{\"code\": \"  \"}", 14, &n, why, sizeof(why)));
	assert_string_equal(why, "it answered no code");
	assert_null(fixer_answer_code("a\0b", 3, &n, why, sizeof(why)));
	assert_string_equal(why, "its code contains a NUL byte");
}

static void test_document(void **state)
{
	json_t *res = json_pack("{s:s,s:i,s:s#,s:s,s:{s:s,s:i,s:[{s:s,s:i},{s:s,s:i}]}}", "outcome", "error",
				"exit_code", 1, "stdout", "", 0, "stderr", "Boom",
				"traceback", "type", "ValueError", "line", 2, "frames",
				"file", "/code/job.py", "line", 2, "file", "/usr/lib/python3/x.py", "line", 9);
	json_t *hist = json_array(), *doc, *big, *dres;
	struct fix_ctx c = {.attempt = 2, .max_attempts = 4, .language = "python", .name = NULL,
			    .session = "fix-0011223344556677", .code = "x = 1\n\xff\n", .code_len = 8,
			    .history = hist};
	char *text, *longs;

	(void)state;
	longs = malloc(100000);
	memset(longs, 'y', 100000);
	json_object_set_new(res, "stdout", json_stringn(longs, 100000));
	text = fix_document(&c, res);
	assert_non_null(text);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "protocol")), "sbx-fix-1");
	assert_int_equal(json_integer_value(json_object_get(doc, "attempt")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "max_attempts")), 4);
	assert_true(json_is_null(json_object_get(doc, "name")));
	/* Invalid UTF-8 in the code is replaced, not a reason to fail. */
	assert_string_equal(json_string_value(json_object_get(doc, "code")), "x = 1\n\xef\xbf\xbd\n");
	dres = json_object_get(doc, "result");
	big = json_object_get(dres, "stdout");
	assert_true(json_is_true(json_object_get(dres, "stdout_excerpted")));
	assert_true(json_is_false(json_object_get(dres, "stderr_excerpted")));
	assert_true(json_string_length(big) < FIX_EXCERPT_HEAD + FIX_EXCERPT_TAIL + 64);
	assert_non_null(strstr(json_string_value(big), "[... 87712 bytes omitted ...]"));
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(json_object_get(dres, "traceback"), "frames"), 0), "in_code")));
	assert_true(json_is_false(json_object_get(json_array_get(json_object_get(json_object_get(dres, "traceback"), "frames"), 1), "in_code")));
	free(text);
	free(longs);
	json_decref(doc);
	json_decref(res);
	json_decref(hist);
}

static void test_run_ok_and_status(void **state)
{
	struct fix_run r;
	char err[256];

	(void)state;
	assert_int_equal(fixer_run("tr a-z A-Z", "print(1)\n", 9, 5000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_OK);
	assert_string_equal(r.out, "PRINT(1)\n");
	free(r.out);
	assert_int_equal(fixer_run("cat >/dev/null; echo partial; exit 3", "x", 1, 5000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_FAILED);
	assert_string_equal(r.detail, "exited with status 3");
	free(r.out);
	assert_int_equal(fixer_run("kill -9 $$", "", 0, 5000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_FAILED);
	assert_string_equal(r.detail, "killed by signal 9");
	free(r.out);
}

static void test_run_large_input_no_deadlock(void **state)
{
	/* 4 MiB both ways: more than any pipe buffer. */
	size_t n = 4u << 20;
	char *in = malloc(n), err[256];
	struct fix_run r;

	(void)state;
	memset(in, 'a', n);
	assert_int_equal(fixer_run("cat", in, n, 20000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_OK);
	assert_int_equal(r.out_len, n);
	assert_memory_equal(r.out, in, n);
	free(r.out);
	/* A fixer that answers without reading its input. */
	assert_int_equal(fixer_run("echo early", in, n, 20000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_OK);
	assert_string_equal(r.out, "early\n");
	free(r.out);
	free(in);
}

static bool process_dead(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && (p[2] == 'Z' || p[2] == 'X');
}

static void test_run_timeout_kills_group(void **state)
{
	struct fix_run r;
	char err[256], cmd[128];
	pid_t bg;
	FILE *f;

	(void)state;
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! >/tmp/sbx-fix-test.%d; wait", (int)getpid());
	assert_int_equal(fixer_run(cmd, "", 0, 300, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_TIMEOUT);
	assert_true(r.wall_ms >= 300 && r.wall_ms < 5000);
	free(r.out);
	snprintf(cmd, sizeof(cmd), "/tmp/sbx-fix-test.%d", (int)getpid());
	f = fopen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &bg), 1);
	fclose(f);
	unlink(cmd);
	usleep(200000);
	/* The background sleep was in the fixer's group: killed. It is gone,
	 * or a zombie where init is slow to reap (containers). */
	assert_true(process_dead(bg));
}

static void test_run_too_big(void **state)
{
	struct fix_run r;
	char err[256];

	(void)state;
	assert_int_equal(fixer_run("head -c 5000000 /dev/zero", "", 0, 20000, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, FIX_TOO_BIG);
	free(r.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_excerpt_short_kept),
		cmocka_unit_test(test_excerpt_head_and_tail),
		cmocka_unit_test(test_excerpt_utf8_boundaries),
		cmocka_unit_test(test_utf8_incomplete_tail),
		cmocka_unit_test(test_answer_forms),
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_run_ok_and_status),
		cmocka_unit_test(test_run_large_input_no_deadlock),
		cmocka_unit_test(test_run_timeout_kills_group),
		cmocka_unit_test(test_run_too_big),
	};

	signal(SIGPIPE, SIG_IGN); /* as signals_forward() does in sbx */
	return cmocka_run_group_tests_name("fix", tests, NULL, NULL);
}
