/* SPDX-License-Identifier: ISC */
/* Unit tests of `sbx mcp` (client/mcp/): version negotiation, argument
 * checking, line framing, the tool result built from a result JSON and an
 * artifact directory, and the artifact store behind resources/read. The protocol end to end is tests/integration/19-mcp.t. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The sbx mcp modules, linked from libsbxclient.a. */
#include "mcp.h"
#include "mcp_int.h"
#include "mcp_child.h"
#include "mcp_store.h"
#include "name.h"
#include "resultschema.h"
#include "access.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

	if (j == NULL)
		fail_msg("bad test JSON: %s: %s", text, e.text);
	return j;
}

static void test_negotiate(void **state)
{
	(void)state;
	/* every revision spoken is answered with itself; anything else with the newest */
	assert_string_equal(mcp_negotiate("2025-06-18")->name, "2025-06-18");
	assert_string_equal(mcp_negotiate("2025-11-25")->name, "2025-11-25");
	assert_string_equal(mcp_negotiate("2025-03-26")->name, "2025-03-26");
	assert_string_equal(mcp_negotiate("2024-11-05")->name, "2024-11-05");
	assert_string_equal(mcp_negotiate("2099-01-01")->name, "2025-11-25");
	assert_string_equal(mcp_negotiate("2024-10-07")->name, "2025-11-25");
	assert_string_equal(mcp_negotiate(NULL)->name, "2025-11-25");
	/* what each adds */
	assert_false(mcp_negotiate("2024-11-05")->annotations);
	assert_true(mcp_negotiate("2025-03-26")->batches && !mcp_negotiate("2025-03-26")->structured);
	assert_true(mcp_negotiate("2025-06-18")->structured && !mcp_negotiate("2025-06-18")->arg_tool_errors);
	assert_true(mcp_negotiate("2025-11-25")->arg_tool_errors && !mcp_negotiate("2025-11-25")->batches);
}

static void test_tool_def_per_revision(void **state)
{
	json_t *old = mcp_tool_def(mcp_negotiate("2024-11-05")), *mid = mcp_tool_def(mcp_negotiate("2025-03-26"));
	json_t *cur = mcp_tool_def(mcp_negotiate("2025-11-25"));

	(void)state;
	assert_null(json_object_get(old, "outputSchema"));
	assert_null(json_object_get(old, "title"));
	assert_null(json_object_get(old, "annotations"));
	assert_non_null(json_object_get(mid, "annotations"));
	assert_null(json_object_get(mid, "outputSchema"));
	assert_non_null(json_object_get(cur, "outputSchema"));
	assert_non_null(json_object_get(cur, "title"));
	json_decref(old);
	json_decref(mid);
	json_decref(cur);
}

static void test_args_ok(void **state)
{
	json_t *j = J("{\"code\":\"print(1)\",\"language\":\"sh\",\"policy\":\"strict\",\"timeout\":2.5,"
		      "\"session\":\"s-1\",\"files\":[{\"name\":\"a.csv\",\"content\":\"x,y\\n\"},"
		      "{\"name\":\"b.bin\",\"content\":\"AAH/\",\"encoding\":\"base64\"}]}");
	struct mcp_args a;
	char err[256];

	(void)state;
	assert_int_equal(mcp_args_parse(j, &a, err, sizeof(err)), 0);
	assert_string_equal(a.code, "print(1)");
	assert_int_equal(a.code_len, 8);
	assert_string_equal(a.lang, "sh");
	assert_string_equal(a.policy, "strict");
	assert_int_equal(a.timeout_ms, 2500);
	assert_string_equal(a.session, "s-1");
	assert_int_equal(a.nfiles, 2);
	assert_string_equal(a.files[0].name, "a.csv");
	assert_int_equal(a.files[0].len, 4);
	assert_memory_equal(a.files[0].data, "x,y\n", 4);
	assert_int_equal(a.files[1].len, 3);
	assert_memory_equal(a.files[1].data, "\x00\x01\xff", 3);
	mcp_args_free(&a);
	json_decref(j);

	j = J("{\"code\":\"\",\"timeout\":0.0001}");
	assert_int_equal(mcp_args_parse(j, &a, err, sizeof(err)), 0);
	assert_string_equal(a.lang, "python");
	assert_null(a.policy);
	assert_null(a.session);
	assert_int_equal(a.timeout_ms, 1); /* rounded up, never 0 = "the policy's" */
	mcp_args_free(&a);
	json_decref(j);
}

/* Each bad argument is refused with a message starting with its name. */
static void test_args_refused(void **state)
{
	static const struct {
		const char *json, *prefix;
	} cases[] = {
		{"{}", "code:"},
		{"{\"language\":\"python\"}", "code:"},
		{"{\"files\":[{\"name\":\"a\",\"content\":\"x\"}]}", "code:"},
		{"{\"code\":42}", "code:"},
		{"{\"code\":\"a\\u0000b\"}", "code:"},
		{"{\"code\":\"1\",\"timeout\":\"10s\"}", "timeout:"},
		{"{\"code\":\"1\",\"timeout\":0}", "timeout:"},
		{"{\"code\":\"1\",\"timeout\":-3}", "timeout:"},
		{"{\"code\":\"1\",\"timeout\":true}", "timeout:"},
		{"{\"code\":\"1\",\"timeout\":1e300}", "timeout:"},
		{"{\"code\":\"1\",\"language\":\"Py thon\"}", "language:"},
		{"{\"code\":\"1\",\"language\":\"python\\u0000x\"}", "language:"},
		{"{\"code\":\"1\",\"policy\":\"../etc\"}", "policy:"},
		{"{\"code\":\"1\",\"session\":\"\"}", "session:"},
		{"{\"code\":\"1\",\"session\":7}", "session:"},
		{"{\"code\":\"1\",\"session\":\"../home\"}", "session:"},
		{"{\"code\":\"1\",\"session\":\".s\"}", "session:"},
		{"{\"code\":\"1\",\"rm\":true}", "unknown argument 'rm'"},
		{"{\"code\":\"1\",\"files\":{}}", "files:"},
		{"{\"code\":\"1\",\"files\":[\"a\"]}", "files[0]:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"../x\",\"content\":\"\"}]}", "files[0].name:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\".hidden\",\"content\":\"\"}]}", "files[0].name:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a/b\",\"content\":\"\"}]}", "files[0].name:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\"}]}", "files[0]:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\",\"content\":1}]}", "files[0].content:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\",\"content\":\"!!\",\"encoding\":\"base64\"}]}",
		 "files[0].content:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\",\"content\":\"\",\"encoding\":\"rot13\"}]}",
		 "files[0].encoding:"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\",\"content\":\"\",\"mode\":\"0777\"}]}",
		 "files[0]: unknown member 'mode'"},
		{"{\"code\":\"1\",\"files\":[{\"name\":\"a\",\"content\":\"\"},{\"name\":\"b\",\"content\":\"\"},"
		 "{\"name\":\"a\",\"content\":\"\"}]}", "files: 'a' given more than once"},
		{"[]", "arguments:"},
	};
	struct mcp_args a;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = J(cases[i].json);
		err[0] = '\0';
		if (mcp_args_parse(j, &a, err, sizeof(err)) != -1)
			fail_msg("accepted: %s", cases[i].json);
		if (strncmp(err, cases[i].prefix, strlen(cases[i].prefix)) != 0)
			fail_msg("%s: message '%s' does not start with '%s'", cases[i].json, err, cases[i].prefix);
		assert_null(a.files); /* nothing left to free */
		json_decref(j);
	}
}

static void test_args_too_many_files(void **state)
{
	json_t *j = J("{\"code\":\"1\",\"files\":[]}"), *files = json_object_get(j, "files");
	struct mcp_args a;
	char err[256], name[16];
	int i;

	(void)state;
	for (i = 0; i <= MCP_FILES_MAX; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		json_array_append_new(files, json_pack("{s:s,s:s}", "name", name, "content", "x"));
	}
	assert_int_equal(mcp_args_parse(j, &a, err, sizeof(err)), -1);
	assert_string_equal(err, "files: more than 32 files");
	json_array_remove(files, 0);
	assert_int_equal(mcp_args_parse(j, &a, err, sizeof(err)), 0);
	assert_int_equal(a.nfiles, MCP_FILES_MAX);
	mcp_args_free(&a);
	json_decref(j);
}

static void test_tool_def(void **state)
{
	json_t *t = mcp_tool_def(&mcp_revisions[0]), *req = J("[\"code\"]");

	(void)state;
	assert_non_null(t);
	assert_string_equal(json_string_value(json_object_get(t, "name")), "execute_code");
	assert_true(json_equal(json_object_get(json_object_get(t, "inputSchema"), "required"), req));
	json_decref(req);
	assert_true(json_is_false(json_object_get(json_object_get(t, "inputSchema"), "additionalProperties")));
	assert_non_null(json_object_get(json_object_get(json_object_get(t, "outputSchema"), "properties"), "traceback"));
	json_decref(t);
}

/* ---- framing ---- */

static char lines_seen[8][64];
static int nlines_seen, nlong_seen;

static void collect(void *arg, const char *line, size_t len)
{
	(void)arg;
	if (line == NULL) {
		nlong_seen++;
		return;
	}
	assert_int_equal(strlen(line), len);
	snprintf(lines_seen[nlines_seen++ % 8], 64, "%s", line);
}

static void test_feed_lines(void **state)
{
	struct linebuf lb = {0};

	(void)state;
	nlines_seen = nlong_seen = 0;
	mcp_feed_lines(&lb, "ab", 2, 16, collect, NULL);
	mcp_feed_lines(&lb, "c\nde\n\nf", 7, 16, collect, NULL);
	assert_int_equal(nlines_seen, 3);
	assert_string_equal(lines_seen[0], "abc");
	assert_string_equal(lines_seen[1], "de");
	assert_string_equal(lines_seen[2], "");
	/* a line over the limit is reported once and dropped whole, also
	 * when it arrives in pieces; the next line is whole again */
	mcp_feed_lines(&lb, "0123456789", 10, 16, collect, NULL);
	mcp_feed_lines(&lb, "0123456789", 10, 16, collect, NULL);
	mcp_feed_lines(&lb, "0123456789\nok\n", 14, 16, collect, NULL);
	assert_int_equal(nlong_seen, 1);
	assert_int_equal(nlines_seen, 4);
	assert_string_equal(lines_seen[3], "ok");
	free(lb.buf);
}

/* ---- tool results ---- */

static const char *text_at(json_t *res, size_t i)
{
	json_t *c = json_array_get(json_object_get(res, "content"), i);

	assert_string_equal(json_string_value(json_object_get(c, "type")), "text");
	return json_string_value(json_object_get(c, "text"));
}

static void test_result_ok(void **state)
{
	json_t *r = J("{\"id\":\"ab12\",\"outcome\":\"ok\",\"exit_code\":0,\"signal_name\":null,\"wall_ms\":12,"
		      "\"stdout\":\"42\\n\",\"stderr\":\"\",\"stdout_truncated\":false,\"traceback\":null,"
		      "\"artifacts\":[],\"limit\":null,\"error\":null}");
	json_t *res = mcp_tool_result(json_incref(r), -1);

	(void)state;
	assert_true(json_is_false(json_object_get(res, "isError")));
	assert_ptr_equal(json_object_get(res, "structuredContent"), r);
	assert_int_equal(json_array_size(json_object_get(res, "content")), 2);
	assert_string_equal(text_at(res, 0), "stdout:\n42\n");
	assert_string_equal(text_at(res, 1), "outcome: ok, exit code 0; 12 ms; run ab12");
	json_decref(res);
	json_decref(r);
}

static void test_result_traceback_first(void **state)
{
	json_t *r = J("{\"id\":\"ab12\",\"outcome\":\"error\",\"exit_code\":1,\"wall_ms\":5,"
		      "\"stdout\":\"partial\",\"stdout_truncated\":true,"
		      "\"stderr\":\"Traceback (most recent call last):\\nZeroDivisionError: x\\n\","
		      "\"traceback\":{\"type\":\"ZeroDivisionError\",\"text\":\"Traceback (most recent call last):\\nZeroDivisionError: x\"},"
		      "\"artifacts\":[]}");
	json_t *res = mcp_tool_result(r, -1);

	(void)state;
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_int_equal(json_array_size(json_object_get(res, "content")), 3); /* no stderr: it is the traceback */
	assert_string_equal(text_at(res, 0), "Traceback (most recent call last):\nZeroDivisionError: x");
	assert_string_equal(text_at(res, 1), "stdout:\npartial\n[truncated by the output limit]");
	assert_string_equal(text_at(res, 2), "outcome: error, exit code 1; 5 ms; run ab12");
	json_decref(res);

	r = J("{\"outcome\":\"signal\",\"exit_code\":null,\"signal_name\":\"KILL\",\"limit\":\"memory\","
	      "\"stderr\":\"warning\\nTraceback\\nE\\n\",\"traceback\":{\"text\":\"Traceback\\nE\"}}");
	res = mcp_tool_result(r, -1);
	assert_string_equal(text_at(res, 1), "stderr:\nwarning\nTraceback\nE\n");
	assert_string_equal(text_at(res, 2), "outcome: signal, killed by SIGKILL, limit: memory");
	json_decref(res);
}

static void test_result_error_object(void **state)
{
	json_t *res;

	(void)state;
	/* sbx itself failed: {outcome, error} only */
	res = mcp_tool_result(J("{\"outcome\":\"sandbox_error\",\"error\":{\"type\":\"sandbox_error\","
				"\"message\":\"sbx-helper: policy 'nope' not found\",\"line\":null,\"traceback\":null}}"), -1);
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_string_equal(text_at(res, 0), "sandbox_error: sbx-helper: policy 'nope' not found");
	assert_string_equal(text_at(res, 1), "outcome: sandbox_error");
	json_decref(res);

	/* a limit without a traceback: the error's message names it */
	res = mcp_tool_result(J("{\"outcome\":\"memory_limit\",\"limit\":\"memory\",\"stderr\":\"\","
				"\"error\":{\"type\":\"memory_limit\",\"message\":\"memory limit of 1048576 bytes reached\"}}"), -1);
	assert_string_equal(text_at(res, 0), "memory_limit: memory limit of 1048576 bytes reached");
	json_decref(res);

	/* the error's traceback comes first even without a parsed traceback */
	res = mcp_tool_result(J("{\"outcome\":\"error\",\"stderr\":\"Traceback\\nE: x\\n\","
				"\"error\":{\"type\":\"E\",\"message\":\"x\",\"traceback\":\"Traceback\\nE: x\"},"
				"\"traceback\":null}"), -1);
	assert_string_equal(text_at(res, 0), "Traceback\nE: x");
	assert_int_equal(json_array_size(json_object_get(res, "content")), 2);
	json_decref(res);

	/* a limit with the traceback of where it stopped: the limit first */
	res = mcp_tool_result(J("{\"outcome\":\"timeout\",\"stderr\":\"Traceback\\nKeyboardInterrupt\\n\","
				"\"error\":{\"code\":\"timeout\",\"type\":\"timeout\",\"message\":\"wall-time limit of 2s (policy default) reached\","
				"\"traceback\":\"Traceback\\nKeyboardInterrupt\"},\"traceback\":null}"), -1);
	assert_string_equal(text_at(res, 0), "timeout: wall-time limit of 2s (policy default) reached");
	assert_string_equal(text_at(res, 1), "Traceback\nKeyboardInterrupt");
	json_decref(res);

	/* a hint is its own block after the traceback */
	res = mcp_tool_result(J("{\"outcome\":\"error\",\"stderr\":\"T\\n\",\"error\":{\"code\":\"error\","
				"\"type\":\"ModuleNotFoundError\",\"message\":\"No module named 'x'\",\"hint\":\"install x\","
				"\"traceback\":\"T\"},\"traceback\":null}"), -1);
	assert_string_equal(text_at(res, 0), "T");
	assert_string_equal(text_at(res, 1), "hint: install x");
	json_decref(res);

	/* the string form of older results */
	res = mcp_tool_result(J("{\"outcome\":\"sandbox_error\",\"error\":\"sbx: --policy: no such policy\"}"), -1);
	assert_string_equal(text_at(res, 0), "sbx: --policy: no such policy");
	json_decref(res);

	res = mcp_tool_error("boom");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_string_equal(text_at(res, 0), "boom");
	json_decref(res);
}

static void put(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static json_t *block_of(json_t *res, const char *type, size_t nth)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(res, "content"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0 && nth-- == 0)
			return c;
	return NULL;
}

static void test_result_artifacts(void **state)
{
	char dir[] = "/tmp/sbx-test-mcp.XXXXXX";
	static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13};
	json_t *r, *res, *c;
	int dfd;
	size_t n;
	const char *why;

	(void)state;
	mcp_store_init(MCP_STORE_DEFAULT);
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	put(dfd, "plot.png", png, sizeof(png));
	put(dfd, "fake.png", "not a png", 9);
	put(dfd, "notes.txt", "hello\n", 6);
	put(dfd, "data b.bin", "\x00\x01", 2);
	assert_int_equal(symlinkat("notes.txt", dfd, "link.txt"), 0);
	r = J("{\"id\":\"cafe\",\"outcome\":\"ok\",\"artifacts\":["
	      "{\"name\":\"plot.png\",\"size\":12,\"media_type\":\"image/png\",\"path\":\"/tmp/x/plot.png\"},"
	      "{\"name\":\"fake.png\",\"size\":9,\"media_type\":\"image/png\"},"
	      "{\"name\":\"notes.txt\",\"size\":6,\"media_type\":\"text/plain\"},"
	      "{\"name\":\"data b.bin\",\"size\":2,\"media_type\":\"application/octet-stream\"},"
	      "{\"name\":\"link.txt\",\"size\":6,\"media_type\":\"text/plain\"},"
	      "{\"name\":\"gone.txt\",\"size\":1,\"media_type\":\"text/plain\"}]}");
	res = mcp_tool_result(r, dfd);

	c = block_of(res, "image", 0);
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "mimeType")), "image/png");
	assert_string_equal(json_string_value(json_object_get(c, "data")), "iVBORw0KGgoAAAAN");
	assert_null(block_of(res, "image", 1)); /* fake.png is not a PNG */
	/* the path of a file about to be deleted would mislead */
	assert_null(json_object_get(json_array_get(json_object_get(r, "artifacts"), 0), "path"));

	/* other artifacts (and a .png that is not one) are links, moved into the store */
	c = block_of(res, "resource_link", 0);
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "sbx://run/cafe/out/fake.png");
	assert_string_equal(json_string_value(json_object_get(c, "name")), "fake.png");
	assert_int_equal(json_integer_value(json_object_get(c, "size")), 9);
	c = block_of(res, "resource_link", 1);
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "sbx://run/cafe/out/notes.txt");
	assert_string_equal(json_string_value(json_object_get(c, "mimeType")), "text/plain");
	c = block_of(res, "resource_link", 2);
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "sbx://run/cafe/out/data%20b.bin");
	assert_null(block_of(res, "resource_link", 3));
	assert_int_equal(faccessat(dfd, "notes.txt", F_OK, 0), -1); /* moved, not copied */
	/* a symlink is not followed, a missing file is named */
	n = json_array_size(json_object_get(res, "content"));
	assert_string_equal(text_at(res, n - 2), "artifact link.txt (6 bytes, text/plain): not kept: not saved");
	assert_string_equal(text_at(res, n - 1), "artifact gone.txt (1 bytes, text/plain): not kept: not saved");
	json_decref(res);

	/* resources/read: text for text types, base64 otherwise; unknown: NULL */
	res = mcp_store_read("sbx://run/cafe/out/notes.txt");
	c = json_array_get(json_object_get(res, "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "text")), "hello\n");
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "sbx://run/cafe/out/notes.txt");
	json_decref(res);
	res = mcp_store_read("sbx://run/cafe/out/data%20b.bin");
	c = json_array_get(json_object_get(res, "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "blob")), "AAE=");
	assert_null(json_object_get(c, "text"));
	json_decref(res);
	assert_null(mcp_store_read("sbx://run/cafe/out/gone.txt"));
	assert_null(mcp_store_read("sbx://run/cafe/out/../../etc/passwd"));
	res = mcp_store_list();
	assert_int_equal(json_array_size(json_object_get(res, "resources")), 3);
	json_decref(res);

	/* the embedding budget */
	assert_null(mcp_read_artifact(dfd, "plot.png", 5, &n, &why));
	assert_string_equal(why, "over the size limit for embedded data");
	assert_null(mcp_read_artifact(dfd, "..", 100, &n, &why));

	unlinkat(dfd, "plot.png", 0);
	unlinkat(dfd, "fake.png", 0);
	unlinkat(dfd, "link.txt", 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0); /* the linked files left it */
	mcp_store_close();
}

/* The store holds at most its capacity, each file counted as at least
 * 4 KiB: older results' files are dropped first, never the current
 * result's (its links must all be readable); 0 keeps nothing; close
 * removes the directory. */
static int keep(int dfd, const char *name)
{
	char uri[64], why[256];
	json_t *l;

	snprintf(uri, sizeof(uri), "sbx://run/1/out/%s", name);
	l = mcp_store_keep(dfd, name, uri, "text/plain", why, sizeof(why));
	json_decref(l);
	return l != NULL;
}

static int held(const char *name)
{
	char uri[64];
	json_t *r;

	snprintf(uri, sizeof(uri), "sbx://run/1/out/%s", name);
	r = mcp_store_read(uri);
	json_decref(r);
	return r != NULL;
}

static void test_store_capacity(void **state)
{
	char dir[] = "/tmp/sbx-test-mcp.XXXXXX", why[256], store[MCP_TMPDIR_MAX + 32];
	int dfd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	put(dfd, "a", "", 0);
	put(dfd, "b", "bbbb", 4);
	put(dfd, "c", "cccc", 4);
	put(dfd, "d", "dddd", 4);
	put(dfd, "e", "eeee", 4);
	fd = openat(dfd, "huge", O_WRONLY | O_CREAT, 0644);
	assert_int_equal(ftruncate(fd, (off_t)MCP_RESOURCE_MAX + 1), 0);
	close(fd);

	mcp_store_init(0);
	mcp_store_begin();
	assert_false(keep(dfd, "a")); /* 0: nothing, not even an empty file */

	mcp_store_init(8192);
	mcp_store_begin();
	assert_true(keep(dfd, "a"));
	assert_true(keep(dfd, "b"));
	assert_int_equal(mcp_store_used(), 8192);
	mcp_store_begin();
	assert_true(keep(dfd, "c")); /* a, the oldest, goes */
	assert_true(!held("a") && held("b") && held("c"));
	assert_true(keep(dfd, "d")); /* then b */
	assert_true(!held("b") && held("c") && held("d"));
	assert_false(keep(dfd, "e")); /* only this result's files are left */
	assert_true(held("c") && held("d"));
	assert_int_equal(faccessat(dfd, "e", F_OK, 0), 0); /* not moved */
	assert_null(mcp_store_keep(dfd, "e", "u", "text/plain", why, sizeof(why)));
	assert_string_equal(why, "not kept: the store is full (sbx mcp --keep-artifacts 8192)");
	mcp_store_begin();
	assert_null(mcp_store_keep(dfd, "huge", "u", "text/plain", why, sizeof(why)));
	assert_string_equal(why, "not kept: over 32 MiB, the most resources/read returns");
	assert_null(mcp_store_keep(dfd, "../etc", "u", "text/plain", why, sizeof(why)));
	assert_null(mcp_store_keep(dfd, "..", "u", "text/plain", why, sizeof(why)));
	assert_string_equal(why, "not kept: not saved");

	snprintf(store, sizeof(store), "%s", mcp_store_dir());
	mcp_store_close();
	assert_int_equal(access(store, F_OK), -1);
	assert_false(held("c"));
	unlinkat(dfd, "e", 0);
	unlinkat(dfd, "huge", 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_tool_def_per_revision),
		cmocka_unit_test(test_args_ok),
		cmocka_unit_test(test_args_refused),
		cmocka_unit_test(test_args_too_many_files),
		cmocka_unit_test(test_tool_def),
		cmocka_unit_test(test_feed_lines),
		cmocka_unit_test(test_result_ok),
		cmocka_unit_test(test_result_traceback_first),
		cmocka_unit_test(test_result_error_object),
		cmocka_unit_test(test_result_artifacts),
		cmocka_unit_test(test_store_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
