/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the client's pieces that need no helper: the frame reader
 * (over a real socketpair, with SCM_RIGHTS; every frame type and bound of
 * proto.h), artifact saving, code names. The client is not in libsbx.a, so its sources are
 * compiled into this test directly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errcode.h"
#include "fdio.h"
#include "rundesc.h"
#include "artifacts.h"
#include "errobj.h"
#include "resultschema.h"
#include "hint.h"
#include "fail.h"
#include "frames.h"
#include "name.h"
#include "ttysafe.h"
#include "ttyout.h"
#include "cli.h"
#include "inputs.h"
#include <sys/wait.h>

/* ---- helpers ---- */

static void send_frame(int sock, uint32_t type, const void *data, uint32_t len, int nfds, const int *fds)
{
	unsigned char *msg = malloc(8 + (size_t)len);
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {msg, 8 + (size_t)len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	uint32_t be[2] = {htonl(type), htonl(len)};

	assert_non_null(msg);
	memcpy(msg, be, 8);
	if (len)
		memcpy(msg + 8, data, len);
	if (nfds > 0) {
		struct cmsghdr *c;
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	assert_int_equal(sendmsg(sock, &m, 0), (ssize_t)(8 + len));
	free(msg);
}

static int memfd_with(const char *s)
{
	int fd = memfd_create("t", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	return fd;
}

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

/* ---- frames ---- */

static void test_frames_result_and_artifact(void **state)
{
	int sv[2], mfd = memfd_with("PNGDATA");
	struct frame_reader r;
	struct frame f;
	char err[256], buf[16] = {0};

	(void)state;
	pair(sv);
	frame_reader_init(&r, sv[0]);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_AGAIN);
	send_frame(sv[1], SBX_FRAME_ARTIFACT, "plot.png", 8, 1, &mfd);
	close(mfd);
	send_frame(sv[1], SBX_FRAME_RESULT, "{\"outcome\":\"ok\"}", 16, 0, NULL);
	close(sv[1]);

	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
	assert_int_equal(f.type, SBX_FRAME_ARTIFACT);
	assert_string_equal(f.payload, "plot.png");
	assert_true(f.fd >= 0);
	assert_int_equal(fcntl(f.fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(pread(f.fd, buf, sizeof(buf) - 1, 0), 7);
	assert_string_equal(buf, "PNGDATA");
	close(f.fd);
	free(f.payload);

	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
	assert_int_equal(f.type, SBX_FRAME_RESULT);
	assert_int_equal(f.len, 16);
	assert_string_equal(f.payload, "{\"outcome\":\"ok\"}");
	assert_int_equal(f.fd, -1);
	free(f.payload);

	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_EOF);
	assert_int_equal(r.stray_fds, 0);
	close(sv[0]);
}

static void test_frames_byte_by_byte(void **state)
{
	static const unsigned char bytes[] = {0, 0, 0, 2, 0, 0, 0, 3, 'a', 'b', 'c'};
	struct frame_reader r;
	struct frame f;
	char err[256];
	int sv[2];
	size_t i;

	(void)state;
	pair(sv);
	frame_reader_init(&r, sv[0]);
	for (i = 0; i < sizeof(bytes); i++) {
		assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_AGAIN);
		assert_int_equal(write(sv[1], bytes + i, 1), 1);
	}
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
	assert_string_equal(f.payload, "abc");
	free(f.payload);
	close(sv[1]);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_EOF);
	close(sv[0]);
}

static void test_frames_stray_fds_closed(void **state)
{
	int sv[2], fds[3] = {memfd_with("a"), memfd_with("b"), memfd_with("c")};
	struct frame_reader r;
	struct frame f;
	char err[256];

	(void)state;
	pair(sv);
	frame_reader_init(&r, sv[0]);
	/* a descriptor with a result frame, three with an artifact */
	send_frame(sv[1], SBX_FRAME_RESULT, "{}", 2, 1, fds);
	send_frame(sv[1], SBX_FRAME_ARTIFACT, "x", 1, 3, fds);
	close(sv[1]);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
	assert_int_equal(f.fd, -1);
	free(f.payload);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
	assert_true(f.fd >= 0); /* the first one is kept */
	close(f.fd);
	free(f.payload);
	assert_int_equal(r.stray_fds, 3);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_EOF);
	close(sv[0]);
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
}

static void test_frames_protocol_errors(void **state)
{
	static const unsigned char huge[] = {0, 0, 0, 2, 0x7f, 0xff, 0xff, 0xff};
	static const unsigned char longname[] = {0, 0, 0, 1, 0, 0, 1, 0};
	static const unsigned char cut[] = {0, 0, 0, 2, 0, 0, 0, 10, 'x'};
	struct frame_reader r;
	struct frame f;
	char err[256];
	int sv[2];

	(void)state;
	pair(sv);
	frame_reader_init(&r, sv[0]);
	send_frame(sv[1], 99, "x", 1, 0, NULL);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
	assert_non_null(strstr(err, "unknown frame type 99"));
	frame_reader_free(&r);
	close(sv[0]);
	close(sv[1]);

	pair(sv);
	frame_reader_init(&r, sv[0]);
	assert_int_equal(write(sv[1], huge, sizeof(huge)), (ssize_t)sizeof(huge));
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
	assert_non_null(strstr(err, "limit"));
	frame_reader_free(&r);
	close(sv[0]);
	close(sv[1]);

	pair(sv);
	frame_reader_init(&r, sv[0]);
	assert_int_equal(write(sv[1], longname, sizeof(longname)), (ssize_t)sizeof(longname));
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
	frame_reader_free(&r);
	close(sv[0]);
	close(sv[1]);

	pair(sv);
	frame_reader_init(&r, sv[0]);
	assert_int_equal(write(sv[1], cut, sizeof(cut)), (ssize_t)sizeof(cut));
	close(sv[1]);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
	assert_non_null(strstr(err, "inside a frame"));
	frame_reader_free(&r);
	close(sv[0]);

	pair(sv);
	frame_reader_init(&r, sv[0]);
	assert_int_equal(write(sv[1], cut, 3), 3); /* EOF inside the header */
	close(sv[1]);
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
	frame_reader_free(&r);
	close(sv[0]);
}

/* ---- artifacts ---- */

static char *tempdir(void)
{
	char *d = strdup("/tmp/sbx-test-XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void test_artifact_names(void **state)
{
	char long_name[300];

	(void)state;
	assert_true(artifact_name_valid("plot.png", 8));
	assert_true(artifact_name_valid("...", 3));
	assert_true(artifact_name_valid(".hidden", 7));
	assert_false(artifact_name_valid("", 0));
	assert_false(artifact_name_valid(".", 1));
	assert_false(artifact_name_valid("..", 2));
	/* paths below /out: components, none empty, "." or ".." */
	assert_true(artifact_name_valid("a/b", 3));
	assert_true(artifact_name_valid("plots/2024/fig.png", 18));
	assert_false(artifact_name_valid("/a", 2));
	assert_false(artifact_name_valid("a/", 2));
	assert_false(artifact_name_valid("a//b", 4));
	assert_false(artifact_name_valid("a/../b", 6));
	assert_false(artifact_name_valid("../b", 4));
	assert_false(artifact_name_valid("a/./b", 5));
	assert_false(artifact_name_valid("a/..", 4));
	assert_false(artifact_name_valid("a\0b", 3));
	memset(long_name, 'a', sizeof(long_name));
	assert_true(artifact_name_valid(long_name, 255));
	assert_false(artifact_name_valid(long_name, 256));
}

static void test_artifact_save(void **state)
{
	char *dir = tempdir(), victim[512], link_path[512], *path = NULL, err[512], buf[32] = {0};
	char name255[256];
	struct artifact_dir ad;
	uint64_t size = 0;
	int mfd = memfd_with("hello artifact"), fd;
	struct stat st;

	(void)state;
	artifact_dir_open(dir, &ad);
	assert_string_equal(ad.path, dir);

	/* a symlink planted at the name is replaced, its target untouched */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link_path, sizeof(link_path), "%s/out.txt", dir);
	assert_int_equal(symlink(victim, link_path), 0);
	assert_int_equal(artifact_save(&ad, "out.txt", mfd, &size, &path, err, sizeof(err)), 0);
	assert_int_equal(size, 14);
	assert_string_equal(path, link_path);
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(access(victim, F_OK), -1);
	fd = open(link_path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 14);
	assert_string_equal(buf, "hello artifact");
	close(fd);
	free(path);

	/* the longest name still fits with its temporary suffix */
	memset(name255, 'n', 255);
	name255[255] = '\0';
	assert_int_equal(artifact_save(&ad, name255, mfd, &size, &path, err, sizeof(err)), 0);
	free(path);

	/* a directory in the way: an error, and no temporary file left */
	assert_int_equal(mkdirat(ad.fd, "sub", 0755), 0);
	assert_int_equal(artifact_save(&ad, "sub", mfd, &size, &path, err, sizeof(err)), -1);
	assert_null(path);
	assert_int_equal(count_entries(dir), 3); /* out.txt, nnn..., sub */

	/* a path below /out: its directories are made; a symlink among them
	 * is refused, not followed */
	assert_int_equal(artifact_save(&ad, "sub/a/b.txt", mfd, &size, &path, err, sizeof(err)), 0);
	assert_int_equal(fstatat(ad.fd, "sub/a/b.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	free(path);
	assert_int_equal(symlinkat(victim, ad.fd, "sub/l"), 0);
	assert_int_equal(artifact_save(&ad, "sub/l/c.txt", mfd, &size, &path, err, sizeof(err)), -1);
	assert_null(path);
	assert_int_equal(access(victim, F_OK), -1);

	close(mfd);
	close(ad.fd);
	free(ad.path);
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	free(dir);
}

static void test_artifact_printable(void **state)
{
	char *s = artifact_printable("a\x1b[31mb\n\xff");

	(void)state;
	assert_non_null(s);
	assert_null(strchr(s, '\x1b'));
	assert_null(strchr(s, '\n'));
	assert_null(memchr(s, 0xff, strlen(s)));
	free(s);
}

/* ---- code names ---- */

static void test_code_names(void **state)
{
	char out[CODE_NAME_MAX + 1], path[200];

	(void)state;
	assert_true(code_name_valid("main.py"));
	assert_true(code_name_valid("a-b_c.1"));
	assert_false(code_name_valid(""));
	assert_false(code_name_valid(".py"));
	assert_false(code_name_valid("a/b"));
	assert_false(code_name_valid("a b"));
	code_name_from_path("/home/x/my report (v2).py", out);
	assert_string_equal(out, "my_report_v2_.py");
	code_name_from_path("..hidden.py", out);
	assert_string_equal(out, "hidden.py");
	code_name_from_path("donn\xc3\xa9" "es.py", out);
	assert_string_equal(out, "donn_es.py");
	code_name_from_path("dir/", out);
	assert_string_equal(out, "");
	code_name_from_path("...", out);
	assert_string_equal(out, "");
	memset(path, 'x', 100);
	strcpy(path + 100, ".py");
	code_name_from_path(path, out);
	assert_int_equal(strlen(out), CODE_NAME_MAX);
	assert_string_equal(out + CODE_NAME_MAX - 3, ".py");
	assert_true(code_name_valid(out));
}

/* ---- protocol v2 frames: output, messages, progress ---- */

static void test_frames_v2_types(void **state)
{
	static const uint32_t types[] = {SBX_FRAME_STDOUT, SBX_FRAME_STDERR, SBX_FRAME_MESSAGE, SBX_FRAME_STARTED};
	static const char *const payloads[] = {"out", "err", "policy 'x': refused", "0123456789abcdef0123456789abcdef"};
	struct frame_reader r;
	struct frame f;
	char err[256];
	int sv[2];

	(void)state;
	pair(sv);
	frame_reader_init(&r, sv[0]);
	for (size_t i = 0; i < 4; i++)
		send_frame(sv[1], types[i], payloads[i], (uint32_t)strlen(payloads[i]), 0, NULL);
	close(sv[1]);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_READY);
		assert_int_equal(f.type, types[i]);
		assert_string_equal(f.payload, payloads[i]);
		free(f.payload);
	}
	assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_EOF);
	close(sv[0]);
}

/* Each type has its own bound: a frame one byte over it is refused before
 * anything is allocated. */
static void test_frames_v2_bounds(void **state)
{
	static const struct { uint32_t type; uint32_t max; } b[] = {
		{SBX_FRAME_STDOUT, SBX_FRAME_OUTPUT_MAX}, {SBX_FRAME_STDERR, SBX_FRAME_OUTPUT_MAX},
		{SBX_FRAME_MESSAGE, SBX_FRAME_LINE_MAX}, {SBX_FRAME_STARTED, SBX_ID_LEN},
		{SBX_FRAME_DRY_RUN, sizeof(struct sbx_dry_run)}, {SBX_FRAME_ARTIFACT, ARTIFACT_NAME_MAX},
	};
	struct frame_reader r;
	struct frame f;
	char err[256];
	int sv[2];

	(void)state;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		unsigned char hdr[8];

		pair(sv);
		frame_reader_init(&r, sv[0]);
		sbx_frame_header(hdr, b[i].type, b[i].max + 1);
		assert_int_equal(write(sv[1], hdr, 8), 8);
		assert_int_equal(frame_read(&r, &f, err, sizeof(err)), FRAME_ERROR);
		assert_non_null(strstr(err, "limit"));
		frame_reader_free(&r);
		close(sv[0]);
		close(sv[1]);
	}
}

/* exit status of f(arg) run in a child (cli_die exits 125) */
static int status_of(void (*f)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		f(arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void parse_argv(void *arg)
{
	char **argv = arg;
	struct run_opts o;
	int argc = 0;

	while (argv[argc])
		argc++;
	cli_parse_run(argc, argv, &o);
}

static void test_cli_inputs_sessions(void **state)
{
	char *ok[] = {"run", "--input", "a.csv", "--session", "s-1.x", "--input", "dir/b", "--dry-run", "-c", "pass", NULL};
	char *bad_session[] = {"run", "--session", "../x", "-c", "pass", NULL};
	char *dot_session[] = {"run", "--session", ".x", "-c", "pass", NULL};
	char *two_sessions[] = {"run", "--session", "a", "--session", "b", "-c", "pass", NULL};
	char *dry_fix[] = {"run", "--dry-run", "--fix", "true", "-c", "pass", NULL};
	struct run_opts o;
	(void)state;

	assert_int_equal(cli_parse_run(10, ok, &o), 0);
	assert_int_equal(o.n_inputs, 2);
	assert_string_equal(o.inputs[1], "dir/b");
	assert_string_equal(o.work_session, "s-1.x");
	assert_true(o.dry_run);
	assert_int_equal(o.work_fd, -1);
	assert_int_equal(status_of(parse_argv, bad_session), SBX_EXIT_USAGE);
	assert_int_equal(status_of(parse_argv, dot_session), SBX_EXIT_USAGE);
	assert_int_equal(status_of(parse_argv, two_sessions), SBX_EXIT_USAGE);
	assert_int_equal(status_of(parse_argv, dry_fix), SBX_EXIT_USAGE);
}

static void open_inputs(void *arg)
{
	inputs_open(arg);
}

static void test_inputs_memfds(void **state)
{
	char dir[] = "/tmp/sbx-unit-in.XXXXXX", a[64], b[64], sub[64], c[64];
	struct run_opts o;
	char buf[16];
	int seals;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/data.csv", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(b, sizeof(b), "%s/sub/", dir); /* a trailing slash: still a name */
	snprintf(c, sizeof(c), "%s/sub/data.csv", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	FILE *f = fopen(a, "w");
	fputs("1,2\n", f);
	fclose(f);
	f = fopen(c, "w");
	fclose(f);
	memset(&o, 0, sizeof(o));
	o.inputs[0] = a;
	o.n_inputs = 1;
	inputs_open(&o);
	assert_string_equal(o.input_names[0], "data.csv");
	seals = fcntl(o.input_fds[0], F_GET_SEALS);
	assert_true((seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW));
	assert_int_equal(pread(o.input_fds[0], buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "1,2\n", 4);
	close(o.input_fds[0]);
	/* two files with one basename, and a directory: usage errors */
	o.inputs[1] = c;
	o.n_inputs = 2;
	assert_int_equal(status_of(open_inputs, &o), SBX_EXIT_USAGE);
	o.inputs[0] = b;
	o.n_inputs = 1;
	assert_int_equal(status_of(open_inputs, &o), SBX_EXIT_USAGE);
	unlink(a);
	unlink(c);
	rmdir(sub);
	rmdir(dir);
}

/* ---- the result's error object ---- */

static const struct run_opts *error_opts;

static json_t *error_of(const char *result_json)
{
	json_t *res = json_loads(result_json, 0, NULL);
	json_t *e;

	assert_non_null(res);
	assert_int_equal(result_set_error(res, error_opts), 0);
	e = json_incref(json_object_get(res, "error"));
	json_decref(res);
	return e;
}

static void test_error_object(void **state)
{
	json_t *e;

	(void)state;
	e = error_of("{\"outcome\": \"ok\", \"error\": null}");
	assert_true(json_is_null(e));
	json_decref(e);

	/* a parsed traceback: code "error", the exception's type and message */
	e = error_of("{\"outcome\": \"error\", \"traceback\": {\"type\": \"ValueError\", \"message\": \"bad\","
		     " \"line\": 5, \"text\": \"Traceback ...\\nValueError: bad\"}}");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "error");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "ValueError");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "bad");
	assert_true(json_is_null(json_object_get(e, "hint")));
	assert_int_equal(json_integer_value(json_object_get(e, "line")), 5);
	assert_string_equal(json_string_value(json_object_get(e, "traceback")), "Traceback ...\nValueError: bad");
	assert_int_equal(json_object_size(e), 6); /* {code, type, message, hint, line, traceback} */
	json_decref(e);

	/* a limit names itself, its value and the policy it came from */
	e = error_of("{\"outcome\": \"timeout\", \"traceback\": null, \"policy\": \"default\","
		     " \"limits\": {\"wall_time_ms\": 2000}}");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "timeout");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "timeout");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "wall-time limit of 2s (policy default) reached");
	assert_true(json_is_null(json_object_get(e, "line")));
	assert_true(json_is_null(json_object_get(e, "traceback")));
	assert_true(json_is_null(json_object_get(e, "hint")));
	json_decref(e);
	e = error_of("{\"outcome\": \"memory_limit\", \"policy\": \"lab\", \"limits\": {\"memory_bytes\": 1048576}}");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "memory limit of 1M (policy lab) reached");
	json_decref(e);
	/* durations in the largest exact unit, as a policy writes them */
	e = error_of("{\"outcome\": \"cpu_limit\", \"policy\": \"p\", \"limits\": {\"cpu_time_ms\": 1500}}");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "cpu_limit");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "CPU-time limit of 1500ms (policy p) reached");
	json_decref(e);
	e = error_of("{\"outcome\": \"timeout\", \"policy\": \"p\", \"limits\": {\"wall_time_ms\": 600000}}");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "wall-time limit of 10m (policy p) reached");
	json_decref(e);
	/* the interrupt's traceback stays, as where the program was stuck; the
	 * limit leads, and --timeout is named when it set the limit */
	{
		struct run_opts o = {.timeout_ms = 1500};
		error_opts = &o;
		e = error_of("{\"outcome\": \"timeout\", \"policy\": \"default\", \"limits\": {\"wall_time_ms\": 1500},"
			     " \"traceback\": {\"type\": \"KeyboardInterrupt\", \"message\": \"\", \"line\": 3,"
			     " \"text\": \"Traceback ...\\nKeyboardInterrupt\"}}");
		error_opts = NULL;
	}
	assert_string_equal(json_string_value(json_object_get(e, "type")), "timeout");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "wall-time limit of 1500ms (--timeout) reached");
	assert_string_equal(json_string_value(json_object_get(e, "traceback")), "Traceback ...\nKeyboardInterrupt");
	json_decref(e);
	e = error_of("{\"outcome\": \"output_limit\", \"policy\": \"default\", \"limits\": {\"output_bytes\": 1000}}");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "output limit of 1000 (policy default) reached");
	json_decref(e);
	/* a missing module: the hint says why and what an administrator can do */
	e = error_of("{\"outcome\": \"error\", \"traceback\": {\"type\": \"ModuleNotFoundError\","
		     " \"message\": \"No module named 'zzsbxnotapackage.sub'\", \"line\": 1, \"text\": \"T\"}}");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "ModuleNotFoundError");
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "the module 'zzsbxnotapackage' is not installed"));
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "cannot be installed at run time"));
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "no package python3-zzsbxnotapackage is known"));
	json_decref(e);
	/* with an image, the hint names it (issue 19); "host" is the host's /usr */
	e = error_of("{\"outcome\": \"error\", \"environment\": {\"image\": \"analysis\"}, \"traceback\":"
		     " {\"type\": \"ModuleNotFoundError\", \"message\": \"No module named 'zzsbxnotapackage'\","
		     " \"line\": 1, \"text\": \"T\"}}");
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "is not in the image 'analysis'"));
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "sbx-image show analysis"));
	json_decref(e);
	e = error_of("{\"outcome\": \"error\", \"environment\": {\"image\": \"host\"}, \"traceback\":"
		     " {\"type\": \"ModuleNotFoundError\", \"message\": \"No module named 'zzsbxnotapackage'\","
		     " \"line\": 1, \"text\": \"T\"}}");
	assert_non_null(strstr(json_string_value(json_object_get(e, "hint")), "is not installed in the sandbox"));
	json_decref(e);

	e = error_of("{\"outcome\": \"signal\", \"signal_name\": \"SEGV\"}");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "killed by signal SIGSEGV");
	json_decref(e);

	/* generic fallback: the last non-empty stderr line */
	e = error_of("{\"outcome\": \"error\", \"traceback\": null, \"stderr\": \"x\\nDied at /code/a.pl line 3.\\n\\n\"}");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "error");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "Died at /code/a.pl line 3.");
	json_decref(e);
	/* nothing on stderr: the exit status, never no message */
	e = error_of("{\"outcome\": \"error\", \"exit_code\": 3, \"stderr\": \"\"}");
	assert_string_equal(json_string_value(json_object_get(e, "message")),
			    "the program exited with status 3 and wrote nothing to stderr");
	json_decref(e);

	/* the helper's sandbox_error string becomes the message */
	e = error_of("{\"outcome\": \"sandbox_error\", \"error\": \"cgroup: no space\"}");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "setup");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "setup");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "cgroup: no space");
	json_decref(e);
}

/* The Debian package lists: a stanza anywhere in any *_Packages file. */
static void test_hint_debian(void **state)
{
	char dir[] = "/tmp/sbx-hint-XXXXXX", path[64], buf[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/deb_dists_main_binary-amd64_Packages", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("Package: python3-first\nVersion: 1\n\nPackage: python3-polars\nVersion: 2\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/other_Release", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("Package: python3-only-in-release\n", f);
	fclose(f);
	assert_true(hint_debian_has(dir, "python3-polars"));
	assert_true(hint_debian_has(dir, "python3-first"));
	assert_false(hint_debian_has(dir, "python3-pol"));
	assert_false(hint_debian_has(dir, "python3-only-in-release"));
	assert_false(hint_debian_has("/nonexistent", "python3-polars"));
	assert_false(hint_missing_module("bad name", NULL, buf, sizeof(buf)));
	assert_false(hint_missing_module("", NULL, buf, sizeof(buf)));
	assert_true(hint_missing_module("Some_Mod.x", NULL, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "python3-some-mod"));
	snprintf(path, sizeof(path), "%s/deb_dists_main_binary-amd64_Packages", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/other_Release", dir);
	unlink(path);
	rmdir(dir);
}

/* ---- output shown on a terminal ---- */

static void tty_expect(const char *const *chunks, size_t nchunks, const char *want, size_t wantlen)
{
	struct ttysafe st = {0};
	char out[1024];
	size_t o = 0;

	for (size_t i = 0; i < nchunks; i++)
		o += ttysafe_escape(&st, chunks[i], strlen(chunks[i]), out + o);
	o += ttysafe_finish(&st, out + o);
	assert_int_equal(o, wantlen);
	assert_memory_equal(out, want, wantlen);
}

static void test_ttysafe(void **state)
{
	(void)state;
	/* text, tab, newline, CR and backspace pass; UTF-8 passes */
	const char *plain[] = {"a\tb\r\n\bz \xc3\xa9 \xc2\xa0"};
	tty_expect(plain, 1, "a\tb\r\n\bz \xc3\xa9 \xc2\xa0", 13);
	/* ESC, BEL, NUL-free C0 and DEL in caret notation */
	const char *c0[] = {"\x1b]0;t\x07\x01\x7f"};
	tty_expect(c0, 1, "^[]0;t^G^A^?", 12);
	/* C1 controls (U+0080..U+009F), also when split across chunks */
	const char *c1[] = {"x\xc2\x9b" "6n", "y\xc2", "\x85" "z"};
	tty_expect(c1, 3, "x\\u009b6ny\\u0085z", 17);
	/* a 0xC2 at the very end is kept */
	const char *tail[] = {"q\xc2"};
	tty_expect(tail, 1, "q\xc2", 2);
}

/* A reader that stopped reading: writes give up after their timer, the
 * bytes wait, and go out once it reads again. */
static void test_ttyout_stalled(void **state)
{
	static char big[1 << 18];
	struct ttyout t = {0};
	char sink[65536];
	int p[2];
	size_t got = 0;

	(void)state;
	assert_int_equal(pipe(p), 0);
	t.fd = p[1];
	memset(big, 'x', sizeof(big));
	ttyout_add(&t, big, sizeof(big)); /* far more than a pipe holds */
	assert_false(ttyout_flush(&t));   /* returns instead of blocking */
	assert_true(t.len - t.off > 0);
	while (!ttyout_flush(&t)) {
		ssize_t n = read(p[0], sink, sizeof(sink));
		assert_true(n > 0);
		got += (size_t)n;
	}
	close(p[1]);
	for (ssize_t n; (n = read(p[0], sink, sizeof(sink))) > 0;)
		got += (size_t)n;
	assert_int_equal(got, sizeof(big));
	assert_int_equal(t.dropped, 0);
	ttyout_finish(&t, 0);
	close(p[0]);

	/* a reader that is gone: the rest is dropped and counted */
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	t = (struct ttyout){.fd = p[1]};
	ttyout_add(&t, "abc", 3);
	assert_true(ttyout_flush(&t));
	assert_true(t.gone);
	assert_int_equal(t.dropped, 3);
	ttyout_finish(&t, 0);
	close(p[1]);
}

/* Nothing to add to a buffer never allocated: found by make check
 * SANITIZE=1 (UBSan: memcpy from NULL... into NULL), 09-stalled-client. */
static void test_ttyout_empty_add(void **state)
{
	struct ttyout t = {.fd = -1};

	(void)state;
	ttyout_add(&t, NULL, 0);
	ttyout_add(&t, "", 0);
	assert_int_equal(t.len, 0);
	assert_int_equal(t.dropped, 0);
	assert_null(t.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_result_and_artifact),
		cmocka_unit_test(test_frames_byte_by_byte),
		cmocka_unit_test(test_frames_stray_fds_closed),
		cmocka_unit_test(test_frames_protocol_errors),
		cmocka_unit_test(test_artifact_names),
		cmocka_unit_test(test_artifact_save),
		cmocka_unit_test(test_artifact_printable),
		cmocka_unit_test(test_code_names),
		cmocka_unit_test(test_frames_v2_types),
		cmocka_unit_test(test_frames_v2_bounds),
		cmocka_unit_test(test_cli_inputs_sessions),
		cmocka_unit_test(test_inputs_memfds),
		cmocka_unit_test(test_error_object), cmocka_unit_test(test_hint_debian),
		cmocka_unit_test(test_ttysafe),
		cmocka_unit_test(test_ttyout_stalled),
		cmocka_unit_test(test_ttyout_empty_add),
	};

	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
