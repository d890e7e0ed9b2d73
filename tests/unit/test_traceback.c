/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for recorder/traceback.c. Fixtures in data/traceback/ are real
 * stderr captured from CPython 3.11, bash and dash (script paths rewritten
 * to /code/, as they appear inside the sandbox).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "traceback.h"

#ifndef SBX_SRCDIR
#define SBX_SRCDIR "."
#endif
#define FIXTURES SBX_SRCDIR "/tests/unit/data/traceback/"

static char *load(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open fixture %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static json_t *parse_fixture(const char *name, const char *lang)
{
	size_t len;
	char *text = load(name, &len);
	json_t *tb = sbx_traceback_parse(text, len, lang);

	free(text);
	return tb;
}

static json_t *parse_str(const char *s, const char *lang)
{
	return sbx_traceback_parse(s, strlen(s), lang);
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	return json_is_null(v) ? NULL : json_string_value(v);
}

static json_int_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static json_t *frame(json_t *tb, size_t i)
{
	json_t *f = json_array_get(json_object_get(tb, "frames"), i);

	assert_non_null(f);
	return f;
}

static size_t nframes(json_t *tb)
{
	json_t *a = json_object_get(tb, "frames");

	assert_true(json_is_array(a));
	return json_array_size(a);
}

/* Every result must serialise: json_dumps() fails on invalid UTF-8. */
static void assert_serialisable(json_t *tb)
{
	char *s = json_dumps(tb, 0);

	assert_non_null(s);
	assert_null(strstr(s, "\\u0000")); /* NULs were replaced */
	free(s);
}

static void test_simple(void **state)
{
	json_t *tb = parse_fixture("py-simple.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "ZeroDivisionError");
	assert_string_equal(str(tb, "message"), "division by zero");
	assert_int_equal(num(tb, "line"), 2);
	assert_int_equal(nframes(tb), 3);
	assert_string_equal(str(frame(tb, 0), "file"), "/code/simple.py");
	assert_int_equal(num(frame(tb, 0), "line"), 8);
	assert_string_equal(str(frame(tb, 0), "function"), "<module>");
	assert_string_equal(str(frame(tb, 0), "text"), "print(average([]))");
	assert_string_equal(str(frame(tb, 2), "function"), "divide");
	assert_string_equal(str(frame(tb, 2), "text"), "return a / b"); /* not the ~~^~~ line */
	assert_int_equal(json_array_size(json_object_get(tb, "chain")), 0);
	assert_non_null(strstr(str(tb, "text"), "Traceback (most recent call last):"));
	assert_non_null(strstr(str(tb, "text"), "ZeroDivisionError: division by zero"));
	assert_null(json_object_get(tb, "frames_omitted"));
	json_decref(tb);
}

static void test_chained(void **state)
{
	json_t *tb = parse_fixture("py-chained.txt", "python"), *chain;

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "KeyError");
	assert_string_equal(str(tb, "message"), "'missing'");
	assert_int_equal(num(tb, "line"), 13);
	assert_int_equal(nframes(tb), 2);
	chain = json_object_get(tb, "chain");
	assert_int_equal(json_array_size(chain), 2);
	assert_string_equal(str(json_array_get(chain, 0), "type"), "json.decoder.JSONDecodeError");
	assert_string_equal(str(json_array_get(chain, 0), "message"),
			    "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)");
	assert_string_equal(str(json_array_get(chain, 1), "type"), "RuntimeError");
	assert_string_equal(str(json_array_get(chain, 1), "message"), "config is not valid JSON");
	/* text is the whole chain */
	assert_non_null(strstr(str(tb, "text"), "JSONDecodeError"));
	assert_non_null(strstr(str(tb, "text"), "KeyError: 'missing'"));
	json_decref(tb);
}

static void test_syntax_error_caret(void **state)
{
	json_t *tb = parse_fixture("py-syntax.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "SyntaxError");
	assert_string_equal(str(tb, "message"), "'(' was never closed");
	assert_int_equal(num(tb, "line"), 2);
	assert_int_equal(nframes(tb), 1);
	assert_null(str(frame(tb, 0), "function"));
	assert_string_equal(str(frame(tb, 0), "text"), "print(\"hello\"");
	json_decref(tb);
}

static void test_indentation_error(void **state)
{
	json_t *tb = parse_fixture("py-indent.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "IndentationError");
	assert_string_equal(str(tb, "message"), "unexpected indent");
	assert_int_equal(num(tb, "line"), 3);
	json_decref(tb);
}

static void test_syntax_error_in_import(void **state)
{
	json_t *tb = parse_fixture("py-importerr.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "SyntaxError");
	assert_int_equal(nframes(tb), 2);
	assert_string_equal(str(frame(tb, 1), "file"), "/code/helper_broken.py");
	assert_int_equal(num(tb, "line"), 1);
	assert_string_equal(str(frame(tb, 1), "text"), "def f(:");
	json_decref(tb);
}

static void test_dotted_type(void **state)
{
	json_t *tb = parse_fixture("py-dotted.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "numpy.linalg.LinAlgError");
	assert_string_equal(str(tb, "message"), "Singular matrix");
	assert_int_equal(num(tb, "line"), 5);
	json_decref(tb);
}

static void test_no_message(void **state)
{
	json_t *tb = parse_fixture("py-nomsg.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "ValueError");
	assert_string_equal(str(tb, "message"), "");
	assert_string_equal(str(frame(tb, 1), "text"), "raise ValueError");
	json_decref(tb);
}

static void test_keyboard_interrupt(void **state)
{
	json_t *tb = parse_fixture("py-kbint.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "KeyboardInterrupt");
	assert_string_equal(str(tb, "message"), "");
	assert_int_equal(num(tb, "line"), 3);
	json_decref(tb);
}

static void test_recursion_repeat(void **state)
{
	json_t *tb = parse_fixture("py-recursion.txt", "python"), *last;

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "RecursionError");
	assert_string_equal(str(tb, "message"), "maximum recursion depth exceeded");
	assert_int_equal(num(tb, "line"), 2);
	assert_int_equal(nframes(tb), 4);
	last = frame(tb, 3);
	assert_int_equal(num(last, "repeat"), 996);
	assert_string_equal(str(last, "text"), "return f(n + 1)");
	assert_null(json_object_get(frame(tb, 0), "repeat"));
	json_decref(tb);
}

static void test_multiline_message_after_other_output(void **state)
{
	json_t *tb = parse_fixture("py-multiline.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "AssertionError");
	assert_string_equal(str(tb, "message"), "value must be positive\ngot: -3");
	assert_int_equal(num(tb, "line"), 5);
	/* the output before the traceback is not part of it */
	assert_null(strstr(str(tb, "text"), "starting up"));
	json_decref(tb);
}

static void test_logged_traceback(void **state)
{
	json_t *tb = parse_fixture("py-logged.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "ValueError");
	/* Python does not mark where a message ends: the line printed right
	 * after it is taken as part of it (documented in traceback.h). */
	assert_memory_equal(str(tb, "message"), "invalid literal for int() with base 10: 'abc'", 45);
	assert_null(strstr(str(tb, "text"), "ERROR:root"));
	assert_int_equal(num(tb, "line"), 4);
	json_decref(tb);
}

static void test_embedded_between_paragraphs(void **state)
{
	json_t *tb = parse_str("loading data\n"
			       "Traceback (most recent call last):\n"
			       "  File \"/code/main.py\", line 4, in <module>\n"
			       "    x = d['k']\n"
			       "        ~^^^^^\n"
			       "KeyError: 'k'\n"
			       "\n"
			       "cleanup: removed 3 temporary files\n", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "KeyError");
	assert_string_equal(str(tb, "message"), "'k'");
	assert_int_equal(num(tb, "line"), 4);
	assert_string_equal(str(frame(tb, 0), "text"), "x = d['k']");
	assert_null(strstr(str(tb, "text"), "cleanup"));
	assert_null(strstr(str(tb, "text"), "loading"));
	json_decref(tb);
}

static void test_notes(void **state)
{
	json_t *tb = parse_fixture("py-notes.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "TypeError");
	assert_string_equal(str(tb, "message"), "bad type\nnote one");
	json_decref(tb);
}

static void test_exception_group(void **state)
{
	json_t *tb = parse_fixture("py-group.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "ExceptionGroup");
	assert_string_equal(str(tb, "message"), "many (2 sub-exceptions)");
	assert_int_equal(nframes(tb), 1);
	assert_int_equal(num(tb, "line"), 1);
	assert_non_null(strstr(str(tb, "text"), "TypeError: b")); /* sub-exceptions kept in text */
	json_decref(tb);
}

static void test_no_user_frame(void **state)
{
	json_t *tb = parse_fixture("py-cflag.txt", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "NameError");
	assert_true(json_is_null(json_object_get(tb, "line")));
	assert_int_equal(nframes(tb), 2);
	assert_null(str(frame(tb, 1), "text")); /* python -c shows no source */
	json_decref(tb);
}

static void test_last_traceback_wins(void **state)
{
	size_t a_len, b_len;
	char *a = load("py-simple.txt", &a_len), *b = load("py-dotted.txt", &b_len);
	char *both = malloc(a_len + b_len + 32);
	json_t *tb;

	(void)state;
	assert_non_null(both);
	memcpy(both, a, a_len);
	memcpy(both + a_len, "some output\n", 12);
	memcpy(both + a_len + 12, b, b_len);
	tb = sbx_traceback_parse(both, a_len + 12 + b_len, "python");
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "numpy.linalg.LinAlgError");
	assert_int_equal(json_array_size(json_object_get(tb, "chain")), 0); /* not chained */
	assert_null(strstr(str(tb, "text"), "ZeroDivisionError"));
	json_decref(tb);
	free(a);
	free(b);
	free(both);
}

static void test_crlf(void **state)
{
	json_t *tb = parse_str("Traceback (most recent call last):\r\n"
			       "  File \"/code/main.py\", line 9, in <module>\r\n"
			       "    boom()\r\n"
			       "OSError: [Errno 5] I/O error\r\n", "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "OSError");
	assert_string_equal(str(tb, "message"), "[Errno 5] I/O error");
	assert_string_equal(str(frame(tb, 0), "text"), "boom()");
	assert_int_equal(num(tb, "line"), 9);
	json_decref(tb);
}

static void test_shell_bash(void **state)
{
	json_t *tb = parse_fixture("sh-bash.txt", "sh");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "ShellError");
	assert_string_equal(str(tb, "message"), "foo_missing: command not found");
	assert_int_equal(num(tb, "line"), 2);
	assert_string_equal(str(frame(tb, 0), "file"), "/code/main.sh");
	assert_int_equal(num(frame(tb, 0), "line"), 2);
	assert_string_equal(str(tb, "text"), "/code/main.sh: line 2: foo_missing: command not found");
	json_decref(tb);
}

static void test_shell_dash(void **state)
{
	json_t *tb = parse_fixture("sh-dash.txt", "sh");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "message"), "foo_missing: not found");
	assert_int_equal(num(tb, "line"), 2);
	json_decref(tb);
}

static void test_shell_syntax_errors(void **state)
{
	json_t *tb = parse_fixture("sh-bashsyn.txt", "bash");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "message"), "syntax error: unexpected end of file");
	assert_int_equal(num(tb, "line"), 4);
	json_decref(tb);
	tb = parse_fixture("sh-dashsyn.txt", "dash");
	assert_non_null(tb);
	assert_string_equal(str(tb, "message"), "Syntax error: end of file unexpected (expecting \"fi\")");
	assert_int_equal(num(tb, "line"), 4);
	json_decref(tb);
}

static void test_shell_prefers_user_script(void **state)
{
	json_t *tb = parse_str("/code/main.sh: line 7: jq: command not found\n"
			       "sh: 1: convert: not found\n"
			       "ls: cannot access 'x': No such file or directory\n", "sh");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "message"), "jq: command not found");
	assert_int_equal(num(tb, "line"), 7);
	json_decref(tb);
	tb = parse_str("sh: 1: convert: not found\n", "sh");
	assert_non_null(tb);
	assert_true(json_is_null(json_object_get(tb, "line")));
	assert_int_equal(num(frame(tb, 0), "line"), 1);
	json_decref(tb);
}

static void test_no_traceback(void **state)
{
	size_t len;
	char *text;

	(void)state;
	assert_null(parse_str("", "python"));
	assert_null(parse_str("hello\nworld\n", "python"));
	assert_null(parse_str("ERROR: something: failed\n", "python"));
	assert_null(parse_str("/code/main.py:3: DeprecationWarning: old\n  f()\n", "python"));
	/* a lone File line is not a compile error report */
	assert_null(parse_str("  File \"/code/x.py\", line 3\nnot an exception line\n", "python"));
	assert_null(parse_str("  File \"/code/x.py\", line 3\nValueError: x\n", "python"));
	assert_null(parse_str("ls: cannot access 'x': No such file or directory\n", "sh"));
	assert_null(sbx_traceback_parse(NULL, 10, "python"));
	text = load("py-simple.txt", &len);
	assert_null(sbx_traceback_parse(text, len, "ruby")); /* unknown language */
	assert_null(sbx_traceback_parse(text, len, "sh"));
	free(text);
}

/* Output caps cut stderr anywhere: every prefix of every fixture must parse
 * without crashing and give serialisable JSON (run under SANITIZE=1 too). */
static void test_truncated_inputs(void **state)
{
	static const char *const names[] = {
		"py-simple.txt", "py-chained.txt", "py-syntax.txt", "py-indent.txt", "py-dotted.txt",
		"py-nomsg.txt", "py-kbint.txt", "py-recursion.txt", "py-multiline.txt", "py-importerr.txt",
		"py-group.txt", "py-logged.txt", "py-notes.txt", "py-cflag.txt", "sh-bash.txt", "sh-dash.txt",
	};
	size_t i, n, len;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *text = load(names[i], &len);
		for (n = 0; n <= len; n++) {
			/* an exact-size copy so that reading past len is caught */
			char *cut = malloc(n ? n : 1);
			json_t *tb;
			assert_non_null(cut);
			memcpy(cut, text, n);
			tb = sbx_traceback_parse(cut, n, names[i][0] == 's' ? "sh" : "python");
			if (tb != NULL) {
				assert_serialisable(tb);
				json_decref(tb);
			}
			free(cut);
		}
		free(text);
	}
	/* the header with nothing after it: a report cut before its exception */
	{
		json_t *tb = parse_str("Traceback (most recent call last):\n"
				       "  File \"/code/main.py\", line 3, in <module>\n", "python");
		assert_non_null(tb);
		assert_true(json_is_null(json_object_get(tb, "type")));
		assert_true(json_is_null(json_object_get(tb, "message")));
		assert_int_equal(num(tb, "line"), 3);
		json_decref(tb);
	}
}

static void test_garbage(void **state)
{
	static const char *const seeds[] = {
		"Traceback (most recent call last):\n",
		"  File \"/code/a.py\", line 1, in f\n",
		"  File \"\", line \n",
		"    x\n",
		"    ^^^\n",
		"  [Previous line repeated 99999999999999999999 more times]\n",
		"ValueError: \xff\xfe\xc0\x80 bad utf-8\n",
		"SyntaxError: x\n",
		"\n",
		"During handling of the above exception, another exception occurred:\n",
		"  + Exception Group Traceback (most recent call last):\n",
		"  | ValueError: y\n",
		"  +-+---- 1 ----\n",
		"/code/x.sh: line 1: y\n",
		"\0\0\0",
		"\xe2\x82",
		":",
	};
	const size_t ns = sizeof(seeds) / sizeof(seeds[0]);
	uint32_t rng = 12345;
	int round;

	(void)state;
	for (round = 0; round < 3000; round++) {
		char buf[4096];
		size_t len = 0;
		json_t *tb;
		while (len < sizeof(buf) - 128) {
			rng = rng * 1103515245u + 12345u;
			if ((rng >> 16) % 8 == 0) { /* a random byte */
				buf[len++] = (char)(rng >> 8);
			} else {
				const char *s = seeds[(rng >> 16) % ns];
				size_t k = s[0] == '\0' ? 3 : strlen(s);
				memcpy(buf + len, s, k);
				len += k;
			}
			if ((rng >> 4) % 64 == 0)
				break;
		}
		tb = sbx_traceback_parse(buf, len, (round & 1) ? "python" : "sh");
		if (tb != NULL) {
			assert_serialisable(tb);
			json_decref(tb);
		}
	}
}

static void test_invalid_utf8_replaced(void **state)
{
	static const char in[] = "Traceback (most recent call last):\n"
				 "  File \"/code/m\xffin.py\", line 1, in <module>\n"
				 "ValueError: caf\xc3 \0 ok\n";
	json_t *tb = sbx_traceback_parse(in, sizeof(in) - 1, "python");

	(void)state;
	assert_non_null(tb);
	assert_string_equal(str(tb, "message"), "caf\xef\xbf\xbd \xef\xbf\xbd ok");
	assert_string_equal(str(frame(tb, 0), "file"), "/code/m\xef\xbf\xbdin.py");
	assert_serialisable(tb);
	json_decref(tb);
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail, size_t *len)
{
	size_t h = strlen(head), u = strlen(unit), t = strlen(tail), i;
	char *buf = malloc(h + u * times + t + 1), *p;

	assert_non_null(buf);
	memcpy(buf, head, h);
	for (i = 0, p = buf + h; i < times; i++, p += u)
		memcpy(p, unit, u);
	memcpy(p, tail, t + 1);
	*len = h + u * times + t;
	return buf;
}

/* Megabytes of hostile stderr give bounded output. (Each case takes
 * milliseconds; a quadratic parser would make this test crawl.) */
static void test_bounds(void **state)
{
	size_t len;
	char *text;
	json_t *tb;

	(void)state;
	text = repeat("Traceback (most recent call last):\n", "  File \"/code/x.py\", line 7, in f\n    f()\n",
		      100000, "RecursionError: deep\n", &len);
	tb = sbx_traceback_parse(text, len, "python");
	assert_non_null(tb);
	assert_int_equal(nframes(tb), SBX_TB_MAX_FRAMES);
	assert_int_equal(num(tb, "frames_omitted"), 100000 - SBX_TB_MAX_FRAMES);
	assert_int_equal(num(tb, "line"), 7);
	assert_true(json_is_true(json_object_get(tb, "text_truncated")));
	assert_true(strlen(str(tb, "text")) <= SBX_TB_TEXT_MAX);
	assert_non_null(strstr(str(tb, "text"), "RecursionError: deep"));
	json_decref(tb);
	free(text);

	text = repeat("Traceback (most recent call last):\nValueError: ", "x", 3u << 20, "\n", &len);
	tb = sbx_traceback_parse(text, len, "python");
	assert_non_null(tb);
	assert_int_equal(strlen(str(tb, "message")), SBX_TB_MESSAGE_MAX);
	json_decref(tb);
	free(text);

	text = repeat("Traceback (most recent call last):\nValueError: a\n", "more\n", 500000, "", &len);
	tb = sbx_traceback_parse(text, len, "python");
	assert_non_null(tb);
	assert_true(strlen(str(tb, "message")) < 6 * SBX_TB_MAX_MSG_LINES);
	json_decref(tb);
	free(text);

	text = repeat("", "Traceback (most recent call last):\nValueError: a\n\n"
		      "During handling of the above exception, another exception occurred:\n\n",
		      40000, "Traceback (most recent call last):\nKeyError: b\n", &len);
	tb = sbx_traceback_parse(text, len, "python");
	assert_non_null(tb);
	assert_string_equal(str(tb, "type"), "KeyError");
	assert_int_equal(json_array_size(json_object_get(tb, "chain")), SBX_TB_MAX_CHAIN);
	json_decref(tb);
	free(text);

	text = repeat("  File \"", "\", line ", 500000, "\n", &len);
	assert_null(sbx_traceback_parse(text, len, "python"));
	free(text);

	text = repeat("", "Traceback (most recent call last):\n", 100000, "", &len);
	tb = sbx_traceback_parse(text, len, "python");
	assert_non_null(tb);
	assert_true(json_is_null(json_object_get(tb, "type")));
	json_decref(tb);
	free(text);

	text = repeat("", "/code/a.sh: line 3: x: not found\n", 100000, "", &len);
	tb = sbx_traceback_parse(text, len, "sh");
	assert_non_null(tb);
	assert_int_equal(num(tb, "line"), 3);
	json_decref(tb);
	free(text);
}

/* Found by tests/fuzz (fuzz_traceback): invalid bytes become U+FFFD, three
 * bytes each, so capping the input was not capping the output. The caps in
 * traceback.h are on the JSON strings; text keeps its tail. */
static void test_bounds_after_replacement(void **state)
{
	size_t len, flen;
	char *text, *fixture;
	json_t *tb, *fr;

	(void)state;
	fixture = load("fuzz-expanding-utf8.bin", &flen);
	tb = sbx_traceback_parse(fixture + 1, flen - 1, "python3"); /* byte 0: the fuzzer's language */
	assert_non_null(tb);
	assert_true(strlen(str(tb, "message")) <= SBX_TB_MESSAGE_MAX);
	assert_true(strlen(str(tb, "text")) <= SBX_TB_TEXT_MAX);
	assert_serialisable(tb);
	json_decref(tb);
	free(fixture);

	text = repeat("Traceback (most recent call last):\n  File \"/code/\xff", "\xff", 5000,
		      "\", line 1, in f\nValueError: ", &len);
	fixture = repeat(text, "\xfe", 3u << 20, "\n", &flen);
	tb = sbx_traceback_parse(fixture, flen, "python");
	assert_non_null(tb);
	assert_true(strlen(str(tb, "message")) <= SBX_TB_MESSAGE_MAX);
	assert_true(strlen(str(tb, "message")) > SBX_TB_MESSAGE_MAX - 3);
	assert_true(strlen(str(tb, "text")) <= SBX_TB_TEXT_MAX);
	assert_true(json_is_true(json_object_get(tb, "text_truncated")));
	fr = json_array_get(json_object_get(tb, "frames"), 0);
	assert_true(strlen(json_string_value(json_object_get(fr, "file"))) <= SBX_TB_FIELD_MAX);
	assert_serialisable(tb);
	json_decref(tb);
	free(fixture);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_chained),
		cmocka_unit_test(test_syntax_error_caret),
		cmocka_unit_test(test_indentation_error),
		cmocka_unit_test(test_syntax_error_in_import),
		cmocka_unit_test(test_dotted_type),
		cmocka_unit_test(test_no_message),
		cmocka_unit_test(test_keyboard_interrupt),
		cmocka_unit_test(test_recursion_repeat),
		cmocka_unit_test(test_multiline_message_after_other_output),
		cmocka_unit_test(test_logged_traceback),
		cmocka_unit_test(test_embedded_between_paragraphs),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_exception_group),
		cmocka_unit_test(test_no_user_frame),
		cmocka_unit_test(test_last_traceback_wins),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_shell_bash),
		cmocka_unit_test(test_shell_dash),
		cmocka_unit_test(test_shell_syntax_errors),
		cmocka_unit_test(test_shell_prefers_user_script),
		cmocka_unit_test(test_no_traceback),
		cmocka_unit_test(test_truncated_inputs),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_bounds_after_replacement),
	};

	return cmocka_run_group_tests_name("traceback", tests, NULL, NULL);
}
