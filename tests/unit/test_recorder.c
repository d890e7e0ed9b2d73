/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the recorder's side of the protocol: the run description
 * check (common/rundesc.c: what a recorder or client accepts) and the
 * frame queue (recorder/outq.c), which must never block on a client that
 * does not read, keep frames whole and in order, and drop what a stalled
 * client has not taken by its deadline; and the changeset manifest's
 * entry count and incomplete flag (recorder/workspace.c), which END signs:
 * exact whatever the read boundaries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"
#include "outq.h"
#include "proto.h"
#include "rundesc.h"
#include "clock.h"
#include "ckptwitness.h"
#include "recorder.h"
#include "workspace.h"

static void good_desc(struct sbx_run_desc *d)
{
	memset(d, 0, sizeof(*d));
	sbx_msg_hdr_init(&d->hdr, SBX_REC_MSG_RUN, sizeof(*d));
	strcpy(d->run_id, "0123456789abcdef0123456789abcdef");
	assert_int_equal(sbx_run_desc_add_arg(d, "/usr/bin/python3"), 0);
	assert_int_equal(sbx_run_desc_add_arg(d, "/code/main.py"), 0);
}

static void test_desc_check(void **state)
{
	static struct sbx_run_desc d;
	char err[256];

	(void)state;
	good_desc(&d);
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), 0);
	/* what recv(2) returned must be the header's size and ours */
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d) - 1, false, err, sizeof(err)), -1);
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), true, err, sizeof(err)), -1);
	d.hdr.version++;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version"));
	good_desc(&d);
	d.hdr.magic ^= 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	good_desc(&d);
	d.hdr.type = SBX_REC_MSG_END;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	/* a string that runs off its array */
	good_desc(&d);
	memset(d.user, 'u', sizeof(d.user));
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	good_desc(&d);
	memset(d.inputs[0].name, 'n', sizeof(d.inputs[0].name));
	d.n_inputs = 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	good_desc(&d);
	d.n_inputs = SBX_MAX_INPUTS + 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	/* argv must end with a NUL inside its length */
	good_desc(&d);
	d.argv[d.argv_len - 1] = 'x';
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	good_desc(&d);
	d.argv_len = sizeof(d.argv) + 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	/* a refusal always says why */
	good_desc(&d);
	d.flags = SBX_DESC_REFUSED;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), -1);
	strcpy(d.error, "policy 'x' does not allow user y");
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, err, sizeof(err)), 0);
}

static void test_desc_argv_full(void **state)
{
	static struct sbx_run_desc d;
	char arg[300];

	(void)state;
	memset(&d, 0, sizeof(d));
	memset(arg, 'a', sizeof(arg) - 1);
	arg[sizeof(arg) - 1] = '\0';
	assert_int_equal(sbx_run_desc_add_arg(&d, arg), 0);
	assert_int_equal(sbx_run_desc_add_arg(&d, arg), 0);
	assert_int_equal(sbx_run_desc_add_arg(&d, arg), 0);
	assert_int_equal(sbx_run_desc_add_arg(&d, arg), -1); /* 4 x 300 > 1024 */
	assert_int_equal(d.argv_len, 900);
}

static void test_end_check(void **state)
{
	struct sbx_run_end e;
	char err[256];

	(void)state;
	memset(&e, 0, sizeof(e));
	sbx_msg_hdr_init(&e.hdr, SBX_REC_MSG_END, sizeof(e));
	e.outcome = SBX_OUTCOME_OK;
	e.limit = SBX_LIMIT_NONE;
	assert_int_equal(sbx_run_end_check(&e, sizeof(e), err, sizeof(err)), 0);
	/* outcome and limit within their tables; "incomplete" is not a run's */
	e.outcome = SBX_OUTCOME_N;
	assert_int_equal(sbx_run_end_check(&e, sizeof(e), err, sizeof(err)), -1);
	e.outcome = SBX_OUTCOME_INCOMPLETE;
	assert_int_equal(sbx_run_end_check(&e, sizeof(e), err, sizeof(err)), -1);
	e.outcome = SBX_OUTCOME_OK;
	e.limit = SBX_LIMIT_N;
	assert_int_equal(sbx_run_end_check(&e, sizeof(e), err, sizeof(err)), -1);
	e.limit = SBX_LIMIT_NONE;
	memset(e.error, 'x', sizeof(e.error));
	assert_int_equal(sbx_run_end_check(&e, sizeof(e), err, sizeof(err)), -1);
}

/* Read every frame from fd until EOF: types and payload lengths. */
static size_t read_frames(int fd, uint32_t *types, size_t *lens, size_t max, int *got_fd)
{
	size_t n = 0;
	unsigned char hdr[8];

	*got_fd = -1;
	for (;;) {
		int pass;
		int r = sbx_recv_fd(fd, hdr, 8, &pass);
		if (r <= 0)
			return n;
		assert_int_equal(r, 8);
		if (pass >= 0)
			*got_fd = pass;
		uint32_t len = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 | (uint32_t)hdr[6] << 8 | hdr[7];
		char *p = malloc(len + 1);
		assert_non_null(p);
		assert_int_equal(sbx_read_full(fd, p, len), (ssize_t)len);
		free(p);
		assert_true(n < max);
		types[n] = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
		lens[n++] = len;
	}
}

static void test_outq_order_and_merge(void **state)
{
	static char big[3 * SBX_FRAME_OUTPUT_MAX] = "x";
	struct outq_src out = {.buf = big}, err = {.buf = big};
	struct outq q;
	uint32_t types[16] = {0};
	size_t lens[16] = {0}, n;
	int sv[2], mfd = memfd_create("a", MFD_CLOEXEC), got;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	outq_init(&q, sv[0]);
	outq_frame(&q, SBX_FRAME_STARTED, "id", 2, -1);
	/* consecutive stdout chunks merge, up to SBX_FRAME_OUTPUT_MAX */
	outq_output(&q, SBX_FRAME_STDOUT, &out, 0, 10);
	outq_output(&q, SBX_FRAME_STDOUT, &out, 10, 20);
	outq_output(&q, SBX_FRAME_STDERR, &err, 0, 5);
	outq_output(&q, SBX_FRAME_STDOUT, &out, 30, 2 * SBX_FRAME_OUTPUT_MAX + 1);
	outq_frame(&q, SBX_FRAME_ARTIFACT, "plot.png", 8, mfd);
	outq_frame_take(&q, SBX_FRAME_RESULT, strdup("{}"), 2);
	outq_flush(&q, sbx_mono_ms() + 5000);
	free(q.items);
	close(sv[0]);
	n = read_frames(sv[1], types, lens, 16, &got);
	close(sv[1]);
	assert_int_equal(n, 8);
	assert_int_equal(types[0], SBX_FRAME_STARTED);
	assert_int_equal(types[1], SBX_FRAME_STDOUT);
	assert_int_equal(lens[1], 30);
	assert_int_equal(types[2], SBX_FRAME_STDERR);
	assert_int_equal(lens[3] + lens[4] + lens[5], 2 * SBX_FRAME_OUTPUT_MAX + 1);
	for (size_t i = 3; i < 6; i++) {
		assert_int_equal(types[i], SBX_FRAME_STDOUT);
		assert_true(lens[i] <= SBX_FRAME_OUTPUT_MAX);
	}
	assert_int_equal(types[6], SBX_FRAME_ARTIFACT);
	assert_true(got >= 0); /* the memfd came with its frame */
	close(got);
	assert_int_equal(types[7], SBX_FRAME_RESULT);
}

/* A client that never reads: sending returns at once, a flush returns at
 * its deadline, and the queue lets go of everything. */
static void test_outq_stalled_client(void **state)
{
	static char big[1 << 20] = "x";
	struct outq_src out = {.buf = big};
	struct outq q;
	int sv[2], small = 4096;
	int64_t t0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	outq_init(&q, sv[0]);
	for (size_t off = 0; off < sizeof(big); off += 4096)
		outq_output(&q, SBX_FRAME_STDOUT, &out, off, 4096);
	t0 = sbx_mono_ms();
	outq_send(&q);
	assert_true(sbx_mono_ms() - t0 < 1000);
	assert_true(outq_pending(&q));
	outq_frame(&q, SBX_FRAME_RESULT, "{}", 2, -1);
	t0 = sbx_mono_ms();
	outq_flush(&q, t0 + 300);
	assert_true(sbx_mono_ms() - t0 >= 300);
	assert_true(sbx_mono_ms() - t0 < 2000);
	assert_false(outq_pending(&q));
	assert_true(q.gone);
	free(q.items);
	close(sv[0]);
	close(sv[1]);
}

/* A client that has gone: EPIPE, no SIGPIPE, nothing pending. */
static void test_outq_client_gone(void **state)
{
	struct outq_src out = {.buf = (char *)"hello"};
	struct outq q;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	outq_init(&q, sv[0]);
	outq_output(&q, SBX_FRAME_STDOUT, &out, 0, 5);
	outq_send(&q);
	assert_true(q.gone);
	assert_false(outq_pending(&q));
	free(q.items);
	close(sv[0]);
}

static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A witness directory gets one file per note; a second note of the same
 * size (a fork) is a file of its own, the first one never replaced. */
static void test_witness_dir(void **state)
{
	char dir[] = "/tmp/sbx-witness-test.XXXXXX", path[320], err[256];
	const char *a = "host/sbx\n7\nAAAA\n\n\xe2\x80\x94 host/sbx sig1\n";
	const char *b = "host/sbx\n7\nBBBB\n\n\xe2\x80\x94 host/sbx sig2\n";
	DIR *d;
	struct dirent *e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(witness_write_dir(dir, a, err, sizeof(err)), 0);
	assert_int_equal(witness_write_dir(dir, a, err, sizeof(err)), 0);
	assert_int_equal(files_in(dir), 1);
	assert_int_equal(witness_write_dir(dir, b, err, sizeof(err)), 0);
	assert_int_equal(files_in(dir), 2);
	d = opendir(dir);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		assert_int_equal(strncmp(e->d_name, "7-", 2), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
	assert_int_equal(witness_write_dir(dir, a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "audit_witness_dir"));
}

/* The command must be root's (as sbx.conf is): anything else is not run. */
static void test_witness_command(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(witness_run_command("/nonexistent/ship", "n\n", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/ship"));
	if (geteuid() == 0) {
		assert_int_equal(witness_run_command("/bin/true --x", "n\n", err, sizeof(err)), 0);
		assert_int_equal(witness_run_command("/bin/false", "n\n", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "exit status 1"));
	}
}

/* ---- the changeset manifest (docs/workspace.md "manifest") ------------ */

#define MF_READ 65536 /* ws_take_manifest's read size */

struct mf {
	char *buf;
	size_t len, cap;
	uint64_t entries;
};

static void mf_put(struct mf *m, const char *s, size_t n)
{
	if (m->len + n + 1 > m->cap) {
		m->cap = (m->len + n + 1) * 2;
		m->buf = realloc(m->buf, m->cap);
		assert_non_null(m->buf);
	}
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

/* One entry line of exactly len bytes (newline included, len >= 90) */
static void mf_entry(struct mf *m, size_t len)
{
	char line[8192];
	size_t head;

	head = (size_t)snprintf(line, sizeof(line), "entry - f:%064x 0644 %" PRIu64 " ", 0, m->entries);
	assert_true(len > head + 1 && len < sizeof(line));
	memset(line + head, 'p', len - head - 1);
	line[len - 1] = '\n';
	mf_put(m, line, len);
	m->entries++;
}

/* Entries until the next line starts at `at`, so that a read of MF_READ
 * bytes ends inside that line's first word. */
static void mf_fill_to(struct mf *m, size_t at)
{
	while (at - m->len > 300)
		mf_entry(m, 100 + m->entries % 97);
	mf_entry(m, at - m->len);
}

/*
 * A manifest whose "entry " and "end incomplete " words straddle the
 * recorder's 64 KiB reads at every offset that matters (review finding:
 * END said 16377 where the manifest had 16379): each one counted, the
 * incomplete line's reason whole.
 */
static const char mf_end[] =
	"end incomplete the sizes of the files the run wrote exceed workspace_size (64M): sparse files or hard links\n";

static void mf_build(struct mf *m)
{
	size_t k;

	memset(m, 0, sizeof(*m));
	mf_put(m, "sbx-changeset 1\nrun 0123456789abcdef0123456789abcdef\n", 53);
	for (k = 1; k <= 6; k++) {
		mf_fill_to(m, k * MF_READ - k);
		mf_entry(m, 120);
	}
	mf_put(m, "skip fifo a%20fifo\n", 19);
	/* the word "end incomplete " cut after "end inc", its reason in the next read */
	mf_fill_to(m, 8 * MF_READ - 7);
	mf_put(m, mf_end, sizeof(mf_end) - 1);
}

static void test_manifest_count_straddling(void **state)
{
	static struct rec c;
	struct mf m;
	int fd;

	(void)state;
	mf_build(&m);
	fd = memfd_create("test-manifest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, m.buf, m.len), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL), 0);
	memset(&c, 0, sizeof(c));
	ws_take_manifest(&c, fd);
	assert_true(c.cs_have);
	assert_int_equal(c.cs_entries, m.entries);
	assert_string_equal(c.cs_missing, "incomplete: the sizes of the files the run wrote exceed workspace_size (64M): sparse files or hard links");
	free(m.buf);
}

#define SCAN_LIT(s, lit) ws_scan_feed((s), (lit), sizeof(lit) - 1)

/* The same manifest in reads of every awkward size: one count, one reason;
 * a last line without its newline still counts (as sbx apply reads it),
 * and a reason longer than 180 bytes is cut, not run past. */
static void test_manifest_scan_chunks(void **state)
{
	static const size_t sizes[] = {1, 2, 3, 5, 6, 7, 13, 14, 15, 16, 4095, 65535, 65536, 65537, 1 << 20};
	struct ws_scan s;
	struct mf m;
	char longer[400];

	(void)state;
	mf_build(&m);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&s, 0, sizeof(s));
		for (size_t off = 0; off < m.len; off += sizes[i])
			ws_scan_feed(&s, m.buf + off, m.len - off < sizes[i] ? m.len - off : sizes[i]);
		ws_scan_end(&s);
		assert_int_equal(s.entries, m.entries);
		assert_true(s.incomplete);
		assert_string_equal(s.reason, "the sizes of the files the run wrote exceed workspace_size (64M): sparse files or hard links");
	}
	free(m.buf);

	memset(&s, 0, sizeof(s));
	SCAN_LIT(&s, "sbx-changeset 1\nentry - d 0755 - a\nentr");
	SCAN_LIT(&s, "y - d 0755 - b\nentry - d 0755 - c");
	assert_int_equal(s.entries, 2);
	ws_scan_end(&s);
	assert_int_equal(s.entries, 3);
	assert_false(s.incomplete);

	/* not a word at the start of its line: no count */
	memset(&s, 0, sizeof(s));
	SCAN_LIT(&s, "skip fifo entry%20x\nskip fifo end incomplete x\n");
	ws_scan_end(&s);
	assert_int_equal(s.entries, 0);
	assert_false(s.incomplete);

	memset(longer, 'r', sizeof(longer));
	memcpy(longer, "end incomplete ", 15);
	longer[sizeof(longer) - 1] = '\n';
	memset(&s, 0, sizeof(s));
	ws_scan_feed(&s, longer, 200);
	ws_scan_feed(&s, longer + 200, sizeof(longer) - 200);
	ws_scan_end(&s);
	assert_true(s.incomplete);
	assert_int_equal(strlen(s.reason), 180);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_desc_check),
		cmocka_unit_test(test_witness_dir),
		cmocka_unit_test(test_witness_command),
		cmocka_unit_test(test_desc_argv_full),
		cmocka_unit_test(test_end_check),
		cmocka_unit_test(test_outq_order_and_merge),
		cmocka_unit_test(test_outq_stalled_client),
		cmocka_unit_test(test_outq_client_gone),
		cmocka_unit_test(test_manifest_count_straddling),
		cmocka_unit_test(test_manifest_scan_chunks),
	};
	return cmocka_run_group_tests_name("recorder", tests, NULL, NULL);
}
