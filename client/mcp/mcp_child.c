/* SPDX-License-Identifier: ISC */
#include "stack.h"
#include "mcp_child.h"
#include "rmtree.h"
#include "mcp_int.h"
#include "fdio.h"
#include "unconst.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bsd/unistd.h>

/* What one argv can hold: the fixed options plus --input per file. */
#define ARGV_MAX (16 + 2 * MCP_FILES_MAX)

static int write_file(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int r;

	if (fd < 0)
		return -1;
	r = sbx_write_all(fd, data, len);
	if (close(fd) < 0)
		r = -1;
	return r;
}

/* Empty a directory of the work tree (artifacts keep their
 * subdirectories) and remove it. */
static void remove_dir(int parent, const char *name)
{
	int fd = rmtree_opendir(parent, name);
	struct rmtree_report r;

	if (fd >= 0) {
		(void)rmtree_contents(fd, &r);
		close(fd);
	}
	unlinkat(parent, name, AT_REMOVEDIR);
}

void mcp_child_cleanup(struct mcp_child *c)
{
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->err_fd = -1;
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->out_dirfd >= 0)
		close(c->out_dirfd);
	c->out_fd = c->out_dirfd = -1;
	if (c->dir[0] != '\0') {
		int fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			unlinkat(fd, "code", 0);
			remove_dir(fd, "in");
			remove_dir(fd, "out");
			close(fd);
		}
		rmdir(c->dir);
		c->dir[0] = '\0';
	}
}

static int child_fail(struct mcp_child *c, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "sbx mcp: %s: %s", what, strerror(errno));
	mcp_child_cleanup(c);
	return -1;
}

static void exec_child(int code_fd, int out_fd, int err_fd, char *const *argv)
{
	sigset_t none;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(code_fd, 0) < 0 || dup2(out_fd, 1) < 0 || (err_fd >= 0 && dup2(err_fd, 2) < 0))
		_exit(127);
	closefrom(3);
	cli_stack_restore();
	execv("/proc/self/exe", argv);
	_exit(127);
}

const char *mcp_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp != NULL && tmp[0] == '/' && strlen(tmp) <= MCP_TMPDIR_MAX ? tmp : "/tmp";
}

int mcp_child_start(const struct mcp_args *a, struct mcp_child *c, char *err, size_t errlen)
{
	char *argv[ARGV_MAX + 1], timeout[32], outdir[sizeof(c->dir) + 8], (*inputs)[sizeof(c->dir) + 80] = NULL;
	const char *tmp = mcp_tmpdir();
	int dirfd = -1, code_fd = -1, p[2] = {-1, -1}, n = 0;
	size_t i;

	c->pid = -1;
	c->out_fd = c->out_dirfd = c->err_fd = -1;
	/* The directory is ours alone (0700), so its name need not be secret. */
	snprintf(c->dir, sizeof(c->dir), "%s/sbx-mcp.XXXXXX", tmp);
	if (mkdtemp(c->dir) == NULL) {
		snprintf(err, errlen, "sbx mcp: work directory: %s", strerror(errno));
		c->dir[0] = '\0';
		return -1;
	}
	dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return child_fail(c, err, errlen, c->dir);
	if (write_file(dirfd, "code", a->code, a->code_len) < 0 || mkdirat(dirfd, "out", 0700) < 0 ||
	    (a->nfiles > 0 && mkdirat(dirfd, "in", 0700) < 0)) {
		close(dirfd);
		return child_fail(c, err, errlen, "work directory");
	}
	if (a->nfiles > 0) {
		int indir = openat(dirfd, "in", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		inputs = calloc(a->nfiles, sizeof(*inputs));
		for (i = 0; indir >= 0 && inputs != NULL && i < a->nfiles; i++)
			if (write_file(indir, a->files[i].name, a->files[i].data, a->files[i].len) < 0)
				break;
		if (indir >= 0)
			close(indir);
		if (indir < 0 || inputs == NULL || i < a->nfiles) {
			free(inputs);
			close(dirfd);
			return child_fail(c, err, errlen, "input files");
		}
	}
	c->out_dirfd = openat(dirfd, "out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	code_fd = openat(dirfd, "code", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dirfd);
	if (c->out_dirfd < 0 || code_fd < 0 || pipe2(p, O_CLOEXEC) < 0) {
		if (code_fd >= 0)
			close(code_fd);
		free(inputs);
		return child_fail(c, err, errlen, "work directory");
	}

	snprintf(outdir, sizeof(outdir), "%s/out", c->dir);
	argv[n++] = "sbx";
	argv[n++] = "run";
	argv[n++] = "--jsonl";
	argv[n++] = "--artifacts";
	argv[n++] = outdir;
	argv[n++] = "--lang";
	argv[n++] = sbx_unconst(a->lang);
	if (a->policy != NULL) {
		argv[n++] = "--policy";
		argv[n++] = sbx_unconst(a->policy);
	}
	if (a->timeout_ms > 0) {
		snprintf(timeout, sizeof(timeout), "%llums", (unsigned long long)a->timeout_ms);
		argv[n++] = "--timeout";
		argv[n++] = timeout;
	}
	if (a->session != NULL) {
		argv[n++] = "--session";
		argv[n++] = sbx_unconst(a->session);
	} else if (mcp_workspace() != NULL) {
		/* a session has its own /work (sbx run refuses both) */
		argv[n++] = "--workspace";
		argv[n++] = sbx_unconst(mcp_workspace());
	}
	for (i = 0; i < a->nfiles; i++) {
		snprintf(inputs[i], sizeof(inputs[i]), "%s/in/%s", c->dir, a->files[i].name);
		argv[n++] = "--input";
		argv[n++] = inputs[i];
	}
	argv[n++] = "-";
	argv[n] = NULL;

	c->pid = fork();
	if (c->pid == 0)
		exec_child(code_fd, p[1], -1, argv);
	close(code_fd);
	close(p[1]);
	free(inputs);
	if (c->pid < 0) {
		close(p[0]);
		return child_fail(c, err, errlen, "fork");
	}
	c->out_fd = p[0];
	fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

int mcp_child_spawn(char *const *argv, struct mcp_child *c, char *err, size_t errlen)
{
	int p[2] = {-1, -1}, null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	c->err_fd = memfd_create("sbx-mcp-stderr", MFD_CLOEXEC);
	if (null < 0 || c->err_fd < 0 || pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "sbx mcp: %s: %s", argv[1], strerror(errno));
		if (null >= 0)
			close(null);
		if (c->err_fd >= 0)
			close(c->err_fd);
		c->err_fd = -1;
		return -1;
	}
	c->pid = fork();
	if (c->pid == 0)
		exec_child(null, p[1], c->err_fd, argv);
	close(null);
	close(p[1]);
	if (c->pid < 0) {
		snprintf(err, errlen, "sbx mcp: fork: %s", strerror(errno));
		close(p[0]);
		return -1;
	}
	c->out_fd = p[0];
	fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}
