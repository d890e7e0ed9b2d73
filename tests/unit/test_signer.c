/* SPDX-License-Identifier: ISC */
/*
 * sbx-signer (signer/): its rules (state.h) on their own, then the real
 * program on a socketpair, writing a log through sbx_audit_append_with:
 * the log verifies; a log rolled back by whoever can write it gets no
 * record at or below the signer's last checkpoint signed and no
 * checkpoint of another tree; a head that never reached the log may be
 * signed again; the state survives the signer process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <unistd.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "record.h"
#include "rotate.h"
#include "signdir.h"
#include "signer.h"
#include "state.h"

#define ORIGIN "host1.example/sbx"

struct fx {
	char dir[64], db[128];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_audit *a;
	pid_t pid;
	int fd;
	struct sbx_signer sg;
};

static void fill(struct sbx_record *r, int run, int end)
{
	static const char code[] = "print(1)\n";

	memset(r, 0, sizeof(*r));
	r->kind = end ? SBX_REC_END : SBX_REC_START;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", run);
	strcpy(r->boot_id, "6a3a0c1e-0000-4000-8000-000000000001");
	r->realtime_ns = 1714564800000000000LL + run * 1000000000LL;
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	strcpy(r->language, "python");
	crypto_hash_sha256(r->code_sha256, (const unsigned char *)code, strlen(code));
	r->code = code;
	r->code_len = strlen(code);
	if (end)
		strcpy(r->outcome, "ok");
}

/* A real sbx-signer on a socketpair, as the supervisor starts it. */
static void start_signer(struct fx *f)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		dup2(sv[1], 3);
		execl(SBX_BUILDDIR "/sbx-signer", "sbx-signer", "--dir", f->dir, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	f->fd = sv[0];
	sbx_signer_remote(&f->sg, f->fd, f->pk);
}

static int stop_signer(struct fx *f)
{
	int st;

	close(f->fd);
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[128], err[512];
	int fd;

	assert_non_null(f);
	assert_true(sodium_init() >= 0);
	strcpy(f->dir, "/tmp/sbx-signer-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/audit.db", f->dir);
	crypto_sign_keypair(f->pk, f->sk);
	snprintf(path, sizeof(path), "%s/audit.key", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0400);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f->sk, sizeof(f->sk)), (ssize_t)sizeof(f->sk));
	close(fd);
	if (sbx_audit_open(f->db, 0, &f->a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	start_signer(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	stop_signer(f);
	sbx_audit_close(f->a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* n runs (START, END, checkpoint) through the signer; 0 or -1 with err. */
static int runs(struct fx *f, int from, int n, char *err, size_t errlen)
{
	struct sbx_record r;
	int i;

	for (i = from; i < from + n; i++) {
		fill(&r, i, 0);
		if (sbx_audit_append_with(f->a, &r, &f->sg, ORIGIN, NULL, err, errlen) < 0)
			return -1;
		fill(&r, i, 1);
		if (sbx_audit_append_with(f->a, &r, &f->sg, ORIGIN, NULL, err, errlen) < 0 ||
		    sbx_audit_checkpoint_with(f->a, &f->sg, ORIGIN, 0, 0, NULL, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static void sql(struct fx *f, const char *q)
{
	sqlite3 *h;

	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, q, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void verify_clean(struct fx *f)
{
	struct sbx_verify_opts o = {.full = 1, .now_ns = 1714564800000000000LL};
	struct sbx_verify_report rep;
	char err[512];

	if (sbx_audit_verify_opts(f->a, f->pk, &o, &rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
	for (size_t i = 0; i < rep.n_findings; i++)
		print_message("# seq %lld: %s: %s\n", (long long)rep.findings[i].seq,
			      sbx_finding_kind_name(rep.findings[i].kind), rep.findings[i].what);
	assert_int_equal(rep.n_findings, 0);
	sbx_verify_report_free(&rep);
}

static void test_signs_a_log(void **state)
{
	struct fx *f = *state;
	char err[512];

	if (runs(f, 1, 5, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	verify_clean(f);
	/* a new signer process continues from the state file */
	assert_int_equal(stop_signer(f), 0);
	start_signer(f);
	if (runs(f, 6, 2, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	verify_clean(f);
}

static void test_rollback_refused(void **state)
{
	struct fx *f = *state;
	char err[512];

	assert_int_equal(runs(f, 1, 5, err, sizeof(err)), 0);
	/* whoever can write the log cuts it back to 6 records (3 runs) */
	sql(f, "DELETE FROM records WHERE seq > 6; DELETE FROM checkpoints WHERE size > 6");
	assert_int_equal(runs(f, 9, 1, err, sizeof(err)), -1);
	print_message("# %s\n", err);
	assert_non_null(strstr(err, "at or below the checkpoint of 10 records"));
}

static void test_unsent_head_resigned(void **state)
{
	struct fx *f = *state;
	struct sbx_record r;
	char err[512];

	assert_int_equal(runs(f, 1, 2, err, sizeof(err)), 0);
	/* a START signed, then its commit lost (as if the disk filled) */
	fill(&r, 3, 0);
	assert_int_equal(sbx_audit_append_with(f->a, &r, &f->sg, ORIGIN, NULL, err, sizeof(err)), 0);
	sql(f, "DELETE FROM records WHERE seq = 5");
	/* not checkpointed: that seq may be signed again, and the log goes on */
	if (runs(f, 4, 1, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	verify_clean(f);
}

/* sbx-audit rotate (root) signs its ROTATE record and checkpoint through
 * the signer's directory: the signer's history goes on, and the next run,
 * signed by sbx-signer, is accepted. */
static void test_rotate_through_dir(void **state)
{
	struct fx *f = *state;
	struct sbx_rotate_result res;
	struct signdir d;
	struct sbx_signer dsg;
	char err[512], arc[160];

	assert_int_equal(runs(f, 1, 3, err, sizeof(err)), 0);
	if (signdir_open(&d, f->dir, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	signdir_signer(&dsg, &d);
	snprintf(arc, sizeof(arc), "%s/archive.db", f->dir);
	/* everything older than "later": the first runs */
	if (sbx_audit_rotate(f->a, arc, 1714564800000000000LL + 3LL * 1000000000, d.sk, &dsg,
			     ORIGIN, &res, err, sizeof(err)) < 0)
		fail_msg("rotate: %s", err);
	signdir_close(&d);
	assert_true(res.last > 0);
	if (runs(f, 10, 2, err, sizeof(err)) < 0)
		fail_msg("after rotate: %s", err);
	verify_clean(f);
}

static void test_rules(void **state)
{
	struct sign_state st = {0};
	struct sbx_record r;
	struct sbx_checkpoint cp = {ORIGIN, 0, {0}};
	unsigned char *blob, zero[32] = {0}, chain[32], c1[32];
	unsigned char fr[SBX_FRONTIER_MAX];
	struct sbx_mtree t;
	char why[400], err[200];
	size_t len;

	(void)state;
	fill(&r, 1, 0);
	r.seq = 1;
	assert_int_equal(sbx_record_encode(&r, &blob, &len, err, sizeof(err)), 0);
	/* no state: ask for INIT; INIT once only */
	assert_int_equal(sign_record(&st, 1, zero, ORIGIN, blob, len, chain, why, sizeof(why)),
			 SIGN_NEED_INIT);
	sbx_mtree_init(&t);
	assert_int_equal(sign_init(&st, 0, zero, fr, sbx_mtree_save(&t, fr), why, sizeof(why)),
			 SIGN_DO);
	assert_int_equal(sign_init(&st, 0, zero, fr, sbx_mtree_save(&t, fr), why, sizeof(why)),
			 SIGN_REFUSE);
	/* the seq in the blob must be the one signed */
	assert_int_equal(sign_record(&st, 2, zero, ORIGIN, blob, len, chain, why, sizeof(why)),
			 SIGN_REFUSE);
	assert_non_null(strstr(why, "says seq 1"));
	assert_int_equal(sign_record(&st, 1, zero, ORIGIN, blob, len, c1, why, sizeof(why)), SIGN_DO);
	/* not after the head's chain: refused */
	assert_int_equal(sign_record(&st, 1, c1, ORIGIN, blob, len, chain, why, sizeof(why)),
			 SIGN_REFUSE);
	/* a checkpoint of another tree: refused; of its own: signed */
	cp.size = 1;
	assert_int_equal(sign_checkpoint(&st, &cp, why, sizeof(why)), SIGN_REFUSE);
	assert_non_null(strstr(why, "inconsistent"));
	sbx_mtree_root(&st.tree, cp.root);
	assert_int_equal(sign_checkpoint(&st, &cp, why, sizeof(why)), SIGN_DO);
	/* the head is checkpointed: seq 1 again is a rollback */
	assert_int_equal(sign_record(&st, 1, zero, ORIGIN, blob, len, chain, why, sizeof(why)),
			 SIGN_REFUSE);
	assert_non_null(strstr(why, "rolled back"));
	free(blob);
}

/* A state with a head of n records and the head replaceable (prev lines). */
static void grown(struct sign_state *st, unsigned n)
{
	unsigned char leaf[32] = {0}, fr[SBX_FRONTIER_MAX];
	struct sbx_mtree t;
	char why[200];

	memset(st, 0, sizeof(*st));
	sbx_mtree_init(&t);
	assert_int_equal(sign_init(st, 0, leaf, fr, sbx_mtree_save(&t, fr), why, sizeof(why)), SIGN_DO);
	for (unsigned i = 1; i <= n; i++) {
		leaf[0] = (unsigned char)i;
		st->have_prev = 1;
		memcpy(st->prev_chain, st->head_chain, 32);
		st->prev_tree = st->tree;
		sbx_mtree_push(&st->tree, leaf);
		st->head = i;
		st->head_chain[1] = (unsigned char)i;
	}
}

static void flip_byte(const char *path, off_t at)
{
	unsigned char c;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, at), 1);
	c ^= 0x40;
	assert_int_equal(pwrite(fd, &c, 1, at), 1);
	close(fd);
}

/*
 * The state file's two slots (state.c): saves alternate, the newest whole
 * slot wins, a torn newest slot falls back to the save before, both torn
 * is refused, and a version-1 file (write + rename) is read and kept
 * until the save after next overwrites it.
 */
static void test_state_slots(void **state)
{
	struct sign_state a, b, got;
	char dir[] = "/tmp/sbx-signer-slots.XXXXXX", path[64], err[400];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 0);
	grown(&a, 3);
	assert_int_equal(sign_state_save(path, &a, err, sizeof(err)), 0); /* gen 1: slot 1 */
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 1);
	assert_int_equal(got.head, 3);
	assert_true(got.have_prev);
	grown(&b, 5);
	b.gen = got.gen;
	assert_int_equal(sign_state_save(path, &b, err, sizeof(err)), 0); /* gen 2: slot 0 */
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 2);
	assert_int_equal(got.head, 5);
	assert_memory_equal(got.head_chain, b.head_chain, 32);
	/* the newest slot torn (a byte inside its text): the save before */
	flip_byte(path, 100);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 1);
	assert_int_equal(got.head, 3);
	/* saving on from there rewrites slot 0 as generation 2 */
	assert_int_equal(sign_state_save(path, &got, err, sizeof(err)), 0);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 2);
	assert_int_equal(got.head, 3);
	/* both slots torn: refused, never the empty state */
	flip_byte(path, 100);
	flip_byte(path, 16384 + 100);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "damaged state file"));
	/* version 1, as the rename-based signer left it: generation 0 */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	{
		static const char v1[] = "sbx-signer state 1\nhead 0\nchain "
			"0000000000000000000000000000000000000000000000000000000000000000\n"
			"tree 0000000000000000\ncheckpoint 0\ncheckpoint-root "
			"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n";
		assert_int_equal(write(fd, v1, sizeof(v1) - 1), (ssize_t)sizeof(v1) - 1);
	}
	close(fd);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 0);
	assert_int_equal(got.head, 0);
	grown(&a, 2);
	a.gen = got.gen;
	assert_int_equal(sign_state_save(path, &a, err, sizeof(err)), 0);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), 1);
	assert_int_equal(got.gen, 1);
	assert_int_equal(got.head, 2);
	unlink(path);
	rmdir(dir);
}

/*
 * Found by fuzz_signer_state: a slot header cut after "length " made the
 * number's parse (strtoull) read past the file's bytes. The input ends
 * at a PROT_NONE page, so reading one byte too far is a SIGSEGV here,
 * without a sanitizer.
 */
/*
 * fsync(2) as this program's objects see it (an executable's definition
 * comes before libc's): with dir_sync_errno set, an fsync of a directory
 * fails with it, as on a file system that cannot sync directories.
 */
static int dir_sync_errno;
int fsync(int fd);
int fsync(int fd)
{
	struct stat st;

	if (dir_sync_errno != 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = dir_sync_errno;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

/* The first save syncs the new file's directory; a file system that says
 * it cannot (EINVAL, EBADF) does not stop signing, a failing sync (EIO)
 * does, and says so. */
static void test_state_dir_sync(void **state)
{
	struct sign_state a;
	char dir[] = "/tmp/sbx-signer-dirsync.XXXXXX", path[64], err[400] = "";
	const int unsupported[] = {EINVAL, EBADF};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	grown(&a, 3);
	for (size_t i = 0; i < 2; i++) {
		dir_sync_errno = unsupported[i];
		assert_int_equal(sign_state_save(path, &a, err, sizeof(err)), 0);
		assert_int_equal(unlink(path), 0);
	}
	dir_sync_errno = EIO;
	assert_int_equal(sign_state_save(path, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "fsync of its directory: Input/output error"));
	dir_sync_errno = 0;
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_state_parse_bounded(void **state)
{
	static const char *const cut[] = {
		"sbx-signer state 2\nlength \n", "sbx-signer state 2\nlength 12", "sbx-signer state 2\nlength",
		"sbx-signer state 2\nlength 5 sum ", "sbx-signer state 1\nhead 1",
	};
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sign_state st;

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		size_t n = strlen(cut[i]);
		memcpy(m + pg - n, cut[i], n);
		assert_int_equal(sign_state_parse(m + pg - n, n, &st), -1);
	}
	munmap(m, (size_t)pg * 2);
}

/*
 * A slot's "length N sum H" line is read within the slot: strtoull(3)
 * skipped whitespace, newlines included, past the end of slot 0 and read
 * N from slot 1, so p stood beyond the slot's end, the check len > end - p
 * compared with a negative difference cast to unsigned (always false) and
 * the checksum was taken over N bytes from there: 1 TiB here, a crash
 * (SIGSEGV) of the signer on a crafted file. Refused now, like any slot
 * whose length line is not "length DIGITS sum HEX".
 */
static void test_state_length_line(void **state)
{
	static char file[2 * 16384];
	char dir[] = "/tmp/sbx-signer-len.XXXXXX", path[64], err[400];
	struct sign_state got;
	const char *head = "sbx-signer state 2\nlength \n";
	const char *tail = "1099511627776 sum "
			   "0000000000000000000000000000000000000000000000000000000000000000\n";
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	memset(file, ' ', 16384);
	memcpy(file, head, strlen(head));
	memcpy(file + 16384, tail, strlen(tail));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, file, 16384 + strlen(tail)), (ssize_t)(16384 + strlen(tail)));
	close(fd);
	assert_int_equal(sign_state_load(path, &got, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "damaged state file"));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_state_slots),
		cmocka_unit_test(test_state_parse_bounded),
		cmocka_unit_test(test_state_dir_sync),
		cmocka_unit_test(test_state_length_line),
		cmocka_unit_test_setup_teardown(test_signs_a_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsent_head_resigned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotate_through_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
