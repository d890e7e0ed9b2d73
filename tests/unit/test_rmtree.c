/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for client/rmtree.c, the remover of session directories: it
 * must never reach outside the tree (symlinks to an outside directory, a
 * payload swapping directories and links while it runs), must open up
 * directories left without permissions, and must stop at RMTREE_MAX_DEPTH
 * with a clear report. Each case runs in a child as an unprivileged uid
 * (65534 when the suite runs as root, where permissions would not count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmtree.h"

#define NOBODY 65534

/* In the child: report and fail the case. */
#define CHECK(c)                                                                      \
	do {                                                                          \
		if (!(c)) {                                                           \
			fprintf(stderr, "# %s:%d: failed: %s (errno %s)\n", __FILE__, \
				__LINE__, #c, strerror(errno));                       \
			_exit(1);                                                     \
		}                                                                     \
	} while (0)

static void in_child(void (*body)(void))
{
	int st;
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0) {
		if (geteuid() == 0)
			CHECK(setgroups(0, NULL) == 0 && setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
			      setresuid(NOBODY, NOBODY, NOBODY) == 0);
		umask(022);
		body();
		_exit(0);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void put(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0);
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	CHECK(lstat(path, &st) == 0);
	return st.st_mode & 07777;
}

/* base/outside: 0700, ten files and sub/ (0700) with a file */
static void make_outside(const char *base)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/outside", base);
	CHECK(mkdir(p, 0700) == 0);
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof(p), "%s/outside/f%d", base, i);
		put(p);
	}
	snprintf(p, sizeof(p), "%s/outside/sub", base);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/outside/sub/file", base);
	put(p);
}

static void outside_intact(const char *base)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/outside", base);
	CHECK(count_entries(p) == 11);
	CHECK(mode_of(p) == 0700);
	snprintf(p, sizeof(p), "%s/outside/sub", base);
	CHECK(count_entries(p) == 1);
	CHECK(mode_of(p) == 0700);
	snprintf(p, sizeof(p), "%s/outside/f1", base);
	CHECK(mode_of(p) == 0644);
}

/* LEVELS nested directories "d" below DIRFD, a file in each */
static void nest(int dirfd, int levels)
{
	int fd = dup(dirfd);

	CHECK(fd >= 0);
	for (int i = 0; i < levels; i++) {
		int f = openat(fd, "file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		CHECK(f >= 0);
		close(f);
		CHECK(mkdirat(fd, "d", 0700) == 0);
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(n >= 0);
		close(fd);
		fd = n;
	}
	close(fd);
}

/* Remove BASE (made by the case) with the code under test. */
static void cleanup(char *base)
{
	struct rmtree_report r;
	int fd = open(base, O_RDONLY | O_DIRECTORY);

	CHECK(fd >= 0);
	CHECK(rmtree_contents(fd, &r) == 0);
	close(fd);
	CHECK(rmdir(base) == 0);
}

static void tree_body(void)
{
	char base[] = "/tmp/sbx-rmtree.XXXXXX", top[64], p[PATH_MAX], out[64];
	struct rmtree_report r;
	int tfd;

	CHECK(mkdtemp(base) != NULL);
	make_outside(base);
	snprintf(out, sizeof(out), "%s/outside", base);
	snprintf(top, sizeof(top), "%s/top", base);
	CHECK(mkdir(top, 0700) == 0);
#define AT(...) (snprintf(p, sizeof(p), __VA_ARGS__), p)
	CHECK(mkdir(AT("%s/a", top), 0700) == 0);
	CHECK(mkdir(AT("%s/a/b", top), 0700) == 0);
	CHECK(mkdir(AT("%s/a/b/c", top), 0700) == 0);
	put(AT("%s/a/b/c/file", top));
	/* links to the outside directory and into it, absolute and relative */
	CHECK(symlink(out, AT("%s/link_dir", top)) == 0);
	CHECK(symlink("../../outside", AT("%s/a/link_rel", top)) == 0);
	{
		char f0[PATH_MAX];
		snprintf(f0, sizeof(f0), "%s/f0", out);
		CHECK(symlink(f0, AT("%s/a/link_file", top)) == 0);
	}
	/* a hard link to an outside file: only the link goes */
	{
		char f1[PATH_MAX];
		snprintf(f1, sizeof(f1), "%s/f1", out);
		CHECK(link(f1, AT("%s/a/hard", top)) == 0);
	}
	CHECK(mkfifo(AT("%s/fifo", top), 0600) == 0);
	/* read-only (0500), unreadable (0300) and closed (0000) directories */
	CHECK(mkdir(AT("%s/ro", top), 0700) == 0);
	put(AT("%s/ro/x", top));
	CHECK(mkdir(AT("%s/ro/y", top), 0700) == 0);
	CHECK(symlink(out, AT("%s/ro/y/out", top)) == 0);
	CHECK(chmod(AT("%s/ro", top), 0500) == 0);
	CHECK(mkdir(AT("%s/wx", top), 0700) == 0);
	put(AT("%s/wx/z", top));
	CHECK(chmod(AT("%s/wx", top), 0300) == 0);
	CHECK(mkdir(AT("%s/closed", top), 0700) == 0);
	CHECK(mkdir(AT("%s/closed/w", top), 0700) == 0);
	put(AT("%s/closed/w/q", top));
	CHECK(chmod(AT("%s/closed/w", top), 0000) == 0);
	CHECK(chmod(AT("%s/closed", top), 0000) == 0);
	/* deep nesting, well within the limit */
	CHECK(mkdir(AT("%s/deep", top), 0700) == 0);
	tfd = open(p, O_RDONLY | O_DIRECTORY);
	CHECK(tfd >= 0);
	nest(tfd, 300);
	close(tfd);

	tfd = open(top, O_RDONLY | O_DIRECTORY);
	CHECK(tfd >= 0);
	CHECK(rmtree_contents(tfd, &r) == 0);
	CHECK(r.failed == 0 && r.removed > 600);
	close(tfd);
	CHECK(count_entries(top) == 0);
	CHECK(rmdir(top) == 0);
	outside_intact(base);
	{
		struct stat st;
		CHECK(stat(AT("%s/f1", out), &st) == 0 && st.st_nlink == 1);
	}
	cleanup(base);
}

static void test_rmtree_tree(void **state)
{
	(void)state;
	in_child(tree_body);
}

static void opendir_body(void)
{
	char base[] = "/tmp/sbx-rmtree.XXXXXX";
	int bfd, fd;
	struct stat st;

	CHECK(mkdtemp(base) != NULL);
	make_outside(base);
	bfd = open(base, O_RDONLY | O_DIRECTORY);
	CHECK(bfd >= 0);
	CHECK(symlinkat("outside", bfd, "link") == 0);
	errno = 0;
	CHECK(rmtree_opendir(bfd, "link") < 0 && (errno == ELOOP || errno == ENOTDIR));
	CHECK(rmtree_opendir(bfd, "outside/f0") < 0 && errno == ENOTDIR);
	CHECK(mkdirat(bfd, "shut", 0000) == 0);
	fd = rmtree_opendir(bfd, "shut");
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0700);
	close(fd);
	CHECK(unlinkat(bfd, "link", 0) == 0 && unlinkat(bfd, "shut", AT_REMOVEDIR) == 0);
	outside_intact(base);
	close(bfd);
	cleanup(base);
}

static void test_rmtree_opendir(void **state)
{
	(void)state;
	in_child(opendir_body);
}

static void too_deep_body(void)
{
	char base[] = "/tmp/sbx-rmtree.XXXXXX", top[PATH_MAX], cmd[PATH_MAX + 16];
	struct rmtree_report r;
	int tfd;

	CHECK(mkdtemp(base) != NULL);
	make_outside(base);
	snprintf(top, sizeof(top), "%s/top", base);
	CHECK(mkdir(top, 0700) == 0);
	tfd = open(top, O_RDONLY | O_DIRECTORY);
	CHECK(tfd >= 0);
	CHECK(symlinkat("../outside", tfd, "link") == 0);
	nest(tfd, RMTREE_MAX_DEPTH + 5);
	CHECK(rmtree_contents(tfd, &r) < 0);
	CHECK(r.too_deep && r.failed == 1 && r.first_errno == ELOOP);
	/* "d/d/.../d" down to the level that was not entered */
	CHECK(strncmp(r.first_path, "d/d/d/", 6) == 0);
	CHECK(faccessat(tfd, "link", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	close(tfd);
	outside_intact(base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	CHECK(system(cmd) == 0);
}

static void test_rmtree_too_deep(void **state)
{
	(void)state;
	in_child(too_deep_body);
}

/* As /tmp/rev/race2.py: a payload exchanging 0777 directories with links
 * to an outside 0700 directory while the tree is removed. */
#define NSWAP 200
static void race_body(void)
{
	char base[] = "/tmp/sbx-rmtree.XXXXXX", top[64], out[64], p[PATH_MAX];
	struct rmtree_report r;
	int tfd, go[2], rounds = 0;
	pid_t sw;

	CHECK(mkdtemp(base) != NULL);
	make_outside(base);
	snprintf(out, sizeof(out), "%s/outside", base);
	snprintf(top, sizeof(top), "%s/top", base);
	CHECK(mkdir(top, 0700) == 0);
	tfd = open(top, O_RDONLY | O_DIRECTORY);
	CHECK(tfd >= 0);
	for (int i = 0; i < NSWAP; i++) {
		snprintf(p, sizeof(p), "d%d", i);
		CHECK(mkdirat(tfd, p, 0777) == 0 && fchmodat(tfd, p, 0777, 0) == 0);
		snprintf(p, sizeof(p), "d%d/f", i);
		close(openat(tfd, p, O_WRONLY | O_CREAT, 0644));
		snprintf(p, sizeof(p), "l%d", i);
		CHECK(symlinkat(out, tfd, p) == 0);
	}
	CHECK(pipe(go) == 0);
	sw = fork();
	CHECK(sw >= 0);
	if (sw == 0) {
		char a[32], b[32];
		for (int n = 0;; n++) {
			for (int i = 0; i < NSWAP; i++) {
				snprintf(a, sizeof(a), "d%d", i);
				snprintf(b, sizeof(b), "l%d", i);
				renameat2(tfd, a, tfd, b, RENAME_EXCHANGE);
			}
			if (n == 2)
				close(go[1]); /* swapping for a while: start */
		}
	}
	close(go[1]);
	CHECK(read(go[0], p, 1) == 0);
	/* a few rounds while the swapper runs: it may leave things behind
	 * (it recreates nothing, but a name may be a link at one moment and a
	 * directory at the next) yet must never reach outside */
	while (rounds++ < 5 && rmtree_contents(tfd, &r) < 0)
		;
	kill(sw, SIGKILL);
	CHECK(waitpid(sw, NULL, 0) == sw);
	outside_intact(base);
	CHECK(rmtree_contents(tfd, &r) == 0);
	close(tfd);
	CHECK(count_entries(top) == 0);
	outside_intact(base);
	cleanup(base);
}

static void test_rmtree_race(void **state)
{
	(void)state;
	in_child(race_body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmtree_tree),
		cmocka_unit_test(test_rmtree_opendir),
		cmocka_unit_test(test_rmtree_too_deep),
		cmocka_unit_test(test_rmtree_race),
	};

	return cmocka_run_group_tests_name("rmtree", tests, NULL, NULL);
}
