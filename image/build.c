/* SPDX-License-Identifier: ISC */
/*
 * sbx-image build: mmdebstrap(1) installs the Essential:yes set and the
 * requested packages from the host's configured apt sources into a
 * directory, which mkfs.erofs(1) packs into one read-only file system
 * image. That image is mounted, its tree is listed and digested
 * (tree.c), its package set read with dpkg-query(1), and only then is the
 * finished directory renamed into place: a build that fails or is
 * interrupted leaves nothing a policy can name.
 *
 * Everything up to the rename runs in a child in its own mount namespace
 * (mount_namespaces(7)) and process group: whatever mmdebstrap mounts in
 * the chroot (/proc, /sys, /dev) and the digest's mount of the image
 * disappear with it, even when it is killed, and no removal of the
 * working directory can ever reach a mounted /proc or /dev.
 *
 * Reproducibility: SOURCE_DATE_EPOCH (mmdebstrap(1) "SOURCE_DATE_EPOCH":
 * fixed times and mmdebstrap's removal of logs, caches and machine-id),
 * the host's /etc/resolv.conf and /etc/hostname removed (mmdebstrap copies
 * them in), /dev emptied, and a digest that leaves out times (tree.c).
 */
#include "image.h"
#include "dpkgdb.h"
#include "unconst.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bsd/string.h>

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* The child's one line for the parent, and its exit status. */
static _Noreturn void child_fail(int fd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void child_fail(int fd, int code, const char *fmt, ...)
{
	char buf[IMG_ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)!write(fd, buf, strlen(buf));
	_exit(code);
}

/* Run argv with stdout and stderr to logfd; its exit status, or -1. */
static int run_logged(char *const argv[], int logfd, const char *const envp_extra[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
			_exit(127);
		for (size_t i = 0; envp_extra && envp_extra[i]; i++)
			putenv(sbx_unconst(envp_extra[i])); /* this child execs next */
		execvp(argv[0], argv);
		dprintf(2, "sbx-image: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
		/* the parent died (PR_SET_PDEATHSIG) or asked us to stop: the
		 * command's whole process group goes, and we wait for it */
		if (got_signal)
			kill(0, SIGTERM);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* First line of a command's output, into buf; 0 or -1. */
static int run_line(char *const argv[], char *buf, size_t len)
{
	int p[2], st;
	pid_t pid;
	ssize_t n;
	size_t off = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(nul, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (off + 1 < len && (n = read(p[0], buf + off, len - 1 - off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)n;
	}
	close(p[0]);
	buf[off] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && buf[0] ? 0 : -1;
}

static int host_suite(char *buf, size_t len)
{
	FILE *f = fopen("/etc/os-release", "re");
	char line[256];
	int rc = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VERSION_CODENAME=", 17) == 0) {
			char *v = line + 17;
			v[strcspn(v, "\n")] = '\0';
			if (*v == '"') {
				v++;
				v[strcspn(v, "\"")] = '\0';
			}
			if (*v && strlcpy(buf, v, len) < len)
				rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* The line in mmdebstrap's log that says which package apt cannot find. */
static int missing_package(const char *log, char *buf, size_t len)
{
	FILE *f = fopen(log, "re");
	char line[1024];
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		static const char *const pats[] = {"E: Unable to locate package ", "E: Version '",
						   "E: Package '", "E: Couldn't find any package"};
		for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
			if (strncmp(line, pats[i], strlen(pats[i])) == 0) {
				line[strcspn(line, "\n")] = '\0';
				strlcpy(buf, line + 3, len);
				found = 1;
			}
	}
	fclose(f);
	return found;
}

/* The last "E:" line of the log, for a failure that is not a package. */
static void last_error(const char *log, char *buf, size_t len)
{
	FILE *f = fopen(log, "re");
	char line[1024];

	buf[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "E: ", 3) == 0 && strstr(line, "mmdebstrap failed") == NULL &&
		    strstr(line, "setup failed") == NULL) {
			line[strcspn(line, "\n")] = '\0';
			strlcpy(buf, line + 3, len);
		}
	fclose(f);
}

struct work {
	const struct build_opts *o;
	char dir[384];            /* the hidden working directory */
	char suite[64];
	char log[448];
	int errfd;                /* child -> parent: one line */
};

/* Host files whose contents mmdebstrap pastes into the chroot's apt
 * sources (mmdebstrap(1) "MIRROR"): the host's configured sources. */
static size_t host_sources(char **out, size_t max, glob_t *g1, glob_t *g2)
{
	size_t n = 0;
	struct stat st;

	if (stat("/etc/apt/sources.list", &st) == 0 && st.st_size > 0 && n < max)
		out[n++] = "/etc/apt/sources.list";
	if (glob("/etc/apt/sources.list.d/*.list", 0, NULL, g1) == 0)
		for (size_t i = 0; i < g1->gl_pathc && n < max; i++)
			out[n++] = g1->gl_pathv[i];
	if (glob("/etc/apt/sources.list.d/*.sources", 0, NULL, g2) == 0)
		for (size_t i = 0; i < g2->gl_pathc && n < max; i++)
			out[n++] = g2->gl_pathv[i];
	return n;
}

static void run_mmdebstrap(struct work *w, int logfd)
{
	const struct build_opts *o = w->o;
	char include[8192] = "--include=", epoch[48], rootfs[PATH_MAX + 8];
	char hook_in[PATH_MAX + 128], hook_mk[PATH_MAX + 128], hook_out[PATH_MAX + 128];
	char *argv[64 + 32], *srcs[32];
	const char *env[] = {epoch, NULL};
	glob_t g1 = {0}, g2 = {0};
	size_t a = 0, ns;
	int rc;

	for (size_t i = 0; i < o->n_packages; i++) {
		if (i)
			strlcat(include, ",", sizeof(include));
		strlcat(include, o->packages[i], sizeof(include));
	}
	snprintf(epoch, sizeof(epoch), "SOURCE_DATE_EPOCH=%" PRId64, o->epoch);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", w->dir);
	argv[a++] = "mmdebstrap";
	argv[a++] = "--mode=root";
	argv[a++] = "--variant=essential";
	argv[a++] = "--format=directory";
	argv[a++] = include;
	/* no fsync per file: the tree is packed into image.erofs, which is
	 * synced, and thrown away */
	argv[a++] = "--dpkgopt=force-unsafe-io";
	if (!o->keep_docs) {
		/* mmdebstrap(1)'s own example for a smaller chroot; copyrights stay */
		argv[a++] = "--dpkgopt=path-exclude=/usr/share/man/*";
		argv[a++] = "--dpkgopt=path-exclude=/usr/share/info/*";
		argv[a++] = "--dpkgopt=path-exclude=/usr/share/locale/*";
		argv[a++] = "--dpkgopt=path-include=/usr/share/locale/locale.alias";
		argv[a++] = "--dpkgopt=path-exclude=/usr/share/doc/*";
		argv[a++] = "--dpkgopt=path-include=/usr/share/doc/*/copyright";
		argv[a++] = "--dpkgopt=path-exclude=/usr/share/lintian/*";
	}
	if (o->cache) {
		/* mmdebstrap(1): "sync-in and sync-out special hooks" */
		snprintf(hook_mk, sizeof(hook_mk), "--setup-hook=mkdir -p '%s' \"$1\"/var/cache/apt/archives/", o->cache);
		snprintf(hook_in, sizeof(hook_in), "--setup-hook=sync-in '%s' /var/cache/apt/archives/", o->cache);
		snprintf(hook_out, sizeof(hook_out), "--customize-hook=sync-out /var/cache/apt/archives '%s'", o->cache);
		argv[a++] = "--skip=essential/unlink";
		argv[a++] = hook_mk;
		argv[a++] = hook_in;
		argv[a++] = hook_out;
	}
	argv[a++] = w->suite;
	argv[a++] = rootfs;
	ns = host_sources(srcs, 32, &g1, &g2);
	if (ns == 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "no apt sources on this host (/etc/apt/sources.list, "
			   "/etc/apt/sources.list.d/*.list or *.sources)");
	for (size_t i = 0; i < ns; i++)
		argv[a++] = srcs[i];
	argv[a] = NULL;
	rc = run_logged(argv, logfd, env);
	globfree(&g1);
	globfree(&g2);
	if (rc != 0) {
		char line[512];
		if (got_signal)
			_exit(128 + got_signal);
		if (missing_package(w->log, line, sizeof(line)))
			child_fail(w->errfd, IMG_EXIT_NO_PACKAGE, "%s (apt sources of this host, suite %s)", line,
				   w->suite);
		last_error(w->log, line, sizeof(line));
		child_fail(w->errfd, IMG_EXIT_FAIL, "mmdebstrap failed (exit %d)%s%s; log: %s", rc,
			   line[0] ? ": " : "", line, w->log);
	}
}

/*
 * Byte code compiled under SOURCE_DATE_EPOCH is hash-based and checked
 * (PEP 552: header flags 3), so every import reads and hashes the source
 * again: 5% more CPU for `import numpy, pandas` than timestamp-based byte
 * code on the host (measured, docs/images.md). An image cannot change, so
 * its byte code is made unchecked (flags 1), the mode PEP 552 gives for
 * trees whose byte code something else keeps valid. Only pyc files whose
 * header says checked-hash are touched.
 */
static int uncheck_pyc(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	unsigned char h[8];
	size_t n = strlen(path);
	int fd;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode) || n < 4 || strcmp(path + n - 4, ".pyc") != 0)
		return 0;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, h, 8, 0) == 8 && h[2] == '\r' && h[3] == '\n' && h[4] == 3 && !h[5] && !h[6] && !h[7]) {
		h[4] = 1;
		if (pwrite(fd, h + 4, 1, 4) != 1) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* What makes two builds on two hosts differ and is no part of the image. */
static void normalise(struct work *w)
{
	/* mmdebstrap's copies of the host's files, and its own configuration
	 * (--dpkgopt), which belongs to the build, not to the image */
	static const char *const drop[] = {"etc/resolv.conf", "etc/hostname", "etc/dpkg/dpkg.cfg.d/99mmdebstrap",
					   "etc/apt/apt.conf.d/99mmdebstrap"};
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
		snprintf(path, sizeof(path), "%s/rootfs/%s", w->dir, drop[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/rootfs/usr/lib", w->dir);
	if (nftw(path, uncheck_pyc, 32, FTW_PHYS | FTW_MOUNT) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "byte code in %s: %s", path, strerror(errno));
	/* device nodes: the sandbox has its own /dev, and images are mounted nodev */
	snprintf(path, sizeof(path), "%s/rootfs/dev", w->dir);
	if (img_rmtree(path) < 0 || mkdir(path, 0755) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
}

static int write_tree(struct work *w, char digest[SBX_DIGEST_LEN + 1], uint64_t *files)
{
	char root[PATH_MAX + 8], path[PATH_MAX + 8], err[IMG_ERR_LEN];
	FILE *f;

	snprintf(root, sizeof(root), "%s/%s", w->dir, SBX_IMAGE_MOUNT);
	snprintf(path, sizeof(path), "%s/tree", w->dir);
	f = fopen(path, "we");
	if (f == NULL)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
	if (img_tree_listing(root, f, digest, files, err, sizeof(err)) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "digest: %s", err);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0 || fclose(f) != 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
	return 0;
}

/* "name\tversion\tarch\n" for every installed package of the image */
static char *package_list(struct work *w, uint64_t *n)
{
	char admindir[PATH_MAX + 64], out[PATH_MAX + 64];
	char *argv[] = {"dpkg-query", admindir, "--show",
			"--showformat=${db:Status-Abbrev}\t${Package}\t${Version}\t${Architecture}\n", NULL};
	FILE *f;
	char line[1024], *list = NULL;
	size_t len = 0;
	int fd;

	snprintf(admindir, sizeof(admindir), "--admindir=%s/%s/var/lib/dpkg", w->dir, SBX_IMAGE_MOUNT);
	snprintf(out, sizeof(out), "%s/.packages", w->dir);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || run_logged(argv, fd, NULL) != 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "dpkg-query over the image failed");
	close(fd);
	f = fopen(out, "re");
	if (f == NULL)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", out, strerror(errno));
	*n = 0;
	FILE *m = open_memstream(&list, &len);
	while (m && fgets(line, sizeof(line), f))
		if (strncmp(line, "ii \t", 4) == 0) {
			fputs(line + 4, m);
			(*n)++;
		}
	fclose(f);
	unlink(out);
	if (m == NULL || fclose(m) != 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "out of memory");
	return list; /* dpkg-query sorts by package name */
}

/* The image's program index (dpkgdb.h), which the recorder reads to name
 * the package and version of a run's interpreter, and its package-set
 * digest (the manifest's Package-Set). */
static void write_programs(struct work *w, const char *root, char set_digest[72])
{
	char admindir[PATH_MAX + 64], path[PATH_MAX + 16], err[IMG_ERR_LEN];
	uint64_t n;
	FILE *f;

	snprintf(admindir, sizeof(admindir), "%s/var/lib/dpkg", root);
	snprintf(path, sizeof(path), "%s/programs", w->dir);
	f = fopen(path, "we");
	if (f == NULL || sbx_dpkg_bin_index(root, admindir, f, err, sizeof(err)) < 0 ||
	    sbx_dpkg_set_digest(admindir, set_digest, &n, err, sizeof(err)) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "program index: %s", f ? err : strerror(errno));
	if (fchmod(fileno(f), 0644) < 0 || fflush(f) != 0 || fsync(fileno(f)) < 0 || fclose(f) != 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
}

static void builder_versions(char *buf, size_t len)
{
	char v1[64] = "?", v2[64] = "?";
	char *a1[] = {"dpkg-query", "--showformat=${Version}", "--show", "mmdebstrap", NULL};
	char *a2[] = {"dpkg-query", "--showformat=${Version}", "--show", "erofs-utils", NULL};

	run_line(a1, v1, sizeof(v1));
	run_line(a2, v2, sizeof(v2));
	snprintf(buf, len, "mmdebstrap %s, erofs-utils %s", v1, v2);
}

/* The build proper, in the child. Exits 0 with the working directory
 * holding image.erofs, stamp, manifest and tree; otherwise one line on
 * errfd and an IMG_EXIT_* status. */
static _Noreturn void build_child(struct work *w)
{
	const struct build_opts *o = w->o;
	char path[PATH_MAX + 64], root[PATH_MAX + 8], err[IMG_ERR_LEN] = "", digest[SBX_DIGEST_LEN + 1];
	char file_sha[65], arch[32] = "", stamptext[SBX_IMAGE_STAMP_MAX], *mkfs[12];
	char *arch_argv[] = {"dpkg", "--print-architecture", NULL};
	struct sbx_image_stamp s;
	struct manifest m;
	struct stat st, rst;
	struct tm tm;
	time_t now;
	uint64_t files = 0;
	int logfd, dfd, ffd, k = 0;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "private mount namespace: %s", strerror(errno));
	logfd = open(w->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", w->log, strerror(errno));
	if (o->verbose) {
		/* the log, and a copy on our stderr */
		char *tee[] = {"tail", "-n", "+1", "-f", w->log, NULL};
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			dup2(2, 1);
			execvp(tee[0], tee);
			_exit(127);
		}
	}
	run_mmdebstrap(w, logfd);
	normalise(w);

	snprintf(path, sizeof(path), "%s/%s", w->dir, SBX_IMAGE_FILE);
	snprintf(root, sizeof(root), "%s/rootfs", w->dir);
	mkfs[k++] = "mkfs.erofs";
	mkfs[k++] = "-x-1";          /* no extended attributes: nothing host-specific (SELinux labels) */
	mkfs[k++] = "--quiet";
	if (o->compress)
		mkfs[k++] = "-zlz4hc";
	mkfs[k++] = path;
	mkfs[k++] = root;
	mkfs[k] = NULL;
	if (run_logged(mkfs, logfd, NULL) != 0) {
		if (got_signal)
			_exit(128 + got_signal);
		child_fail(w->errfd, IMG_EXIT_FAIL, "mkfs.erofs failed; log: %s", w->log);
	}
	if (img_rmtree(root) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "removing %s: %s", root, strerror(errno));

	/* what the sandbox will see: the digest is over the mounted image */
	ffd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (ffd < 0 || fchmod(ffd, 0644) < 0 || fsync(ffd) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
	snprintf(root, sizeof(root), "%s/%s", w->dir, SBX_IMAGE_MOUNT);
	if (mkdir(root, 0755) < 0 || img_mount_file(ffd, root, err, sizeof(err)) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s", err[0] ? err : strerror(errno));
	write_tree(w, digest, &files);
	if (stat(root, &rst) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", root, strerror(errno));
	memset(&m, 0, sizeof(m));
	m.packages = package_list(w, &m.n_packages);
	write_programs(w, root, m.set_digest);
	if (umount2(root, MNT_DETACH) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "umount %s: %s", root, strerror(errno));
	if (img_file_sha256(ffd, file_sha) < 0 || fstat(ffd, &st) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s: %s", path, strerror(errno));
	close(ffd);

	run_line(arch_argv, arch, sizeof(arch));
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(m.built, sizeof(m.built), "%Y-%m-%dT%H:%M:%SZ", &tm);
	m.name = o->name;
	m.digest = digest;
	m.file_sha256 = file_sha;
	m.suite = w->suite;
	m.arch = arch;
	m.epoch = o->epoch;
	m.size = (uint64_t)st.st_size;
	m.files = files;
	m.keep_docs = o->keep_docs;
	m.compress = o->compress;
	for (size_t i = 0; i < o->n_packages; i++) {
		if (i)
			strlcat(m.requested, " ", sizeof(m.requested));
		strlcat(m.requested, o->packages[i], sizeof(m.requested));
	}
	builder_versions(m.builder, sizeof(m.builder));
	dfd = open(w->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || img_manifest_write(dfd, &m, err, sizeof(err)) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s", err);
	free(m.packages);

	memset(&s, 0, sizeof(s));
	strlcpy(s.name, o->name, sizeof(s.name));
	strlcpy(s.digest, digest, sizeof(s.digest));
	strlcpy(s.file_sha256, file_sha, sizeof(s.file_sha256));
	sbx_image_stamp_set_file(&s, &st);
	s.root_ino = (uint64_t)rst.st_ino;
	/* the stamp last: it vouches for the file as it is now */
	if (sbx_image_stamp_format(&s, stamptext, sizeof(stamptext)) < 0 ||
	    img_write_file(dfd, SBX_IMAGE_STAMP, stamptext, strlen(stamptext), err, sizeof(err)) < 0)
		child_fail(w->errfd, IMG_EXIT_FAIL, "%s", err);
	close(dfd);
	_exit(0);
}

/* In the host's mount namespace: mount the finished image and put it in
 * place of NAME (renameat2(2) RENAME_EXCHANGE: a run sees the old image or
 * the new, never neither); the old one goes, its runs keep it. */
static int install(struct work *w, char *err, size_t errlen)
{
	char root[448], dst[448], old[448];
	int ffd, lock;

	snprintf(root, sizeof(root), "%s/%s", w->dir, SBX_IMAGE_MOUNT);
	snprintf(old, sizeof(old), "%s/%s", w->dir, SBX_IMAGE_FILE);
	ffd = open(old, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (ffd < 0) {
		snprintf(err, errlen, "%.400s: %s", old, strerror(errno));
		return -1;
	}
	if (img_mount_file(ffd, root, err, errlen) < 0) {
		close(ffd);
		return -1;
	}
	close(ffd);
	if (chmod(w->dir, 0755) < 0) {
		snprintf(err, errlen, "%.400s: %s", w->dir, strerror(errno));
		return -1;
	}
	lock = img_lock(err, errlen);
	if (lock < 0)
		return -1;
	/* from here the images lock keeps img_remove_leftovers away */
	snprintf(old, sizeof(old), "%s/.lock", w->dir);
	unlink(old);
	snprintf(dst, sizeof(dst), "%s/%s", SBX_IMAGES_DIR, w->o->name);
	if (renameat2(AT_FDCWD, w->dir, AT_FDCWD, dst, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST || renameat2(AT_FDCWD, w->dir, AT_FDCWD, dst, RENAME_EXCHANGE) < 0) {
			snprintf(err, errlen, "rename %.200s to %.200s: %s", w->dir, dst, strerror(errno));
			close(lock);
			return -1;
		}
		/* w->dir now holds the previous image */
		umount2(root, MNT_DETACH | UMOUNT_NOFOLLOW);
		if (img_rmtree(w->dir) < 0)
			img_warn("the previous image stays in %s: %s", w->dir, strerror(errno));
	}
	close(lock);
	return 0;
}

/* Is prog an executable in PATH? (execvp's search, asked before a build
 * that would otherwise fail minutes later) */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX], full[PATH_MAX + 64];

	if (path == NULL || path[0] == '\0')
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		snprintf(full, sizeof(full), "%s/%s", dir[0] ? dir : ".", prog);
		if (access(full, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

int img_build(const struct build_opts *o)
{
	struct sigaction sa = {.sa_handler = on_signal};
	char err[IMG_ERR_LEN], line[IMG_ERR_LEN];
	struct work w = {.o = o};
	int p[2], st, code, lockfd;
	ssize_t n;
	pid_t pid;

	static const char *const tools[][2] = {{"mmdebstrap", "mmdebstrap"}, {"mkfs.erofs", "erofs-utils"}};
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!in_path(tools[i][0])) {
			img_warn("build: %s is not installed (apt install %s)", tools[i][0], tools[i][1]);
			return IMG_EXIT_FAIL;
		}
	if (o->suite)
		strlcpy(w.suite, o->suite, sizeof(w.suite));
	else if (host_suite(w.suite, sizeof(w.suite)) < 0) {
		img_warn("cannot tell this host's Debian suite from /etc/os-release VERSION_CODENAME: give --suite");
		return IMG_EXIT_USAGE;
	}
	if (img_store_init(err, sizeof(err)) < 0) {
		img_warn("%s", err);
		return IMG_EXIT_FAIL;
	}
	img_remove_leftovers();
	snprintf(w.dir, sizeof(w.dir), "%s/.build-%s-XXXXXX", SBX_IMAGES_DIR, o->name);
	if (mkdtemp(w.dir) == NULL) {
		img_warn("%s: %s", w.dir, strerror(errno));
		return IMG_EXIT_FAIL;
	}
	/* held until we exit: tells the next sbx-image this directory is in use */
	snprintf(w.log, sizeof(w.log), "%s/.lock", w.dir);
	lockfd = open(w.log, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0) {
		img_warn("%s: %s", w.log, strerror(errno));
		return IMG_EXIT_FAIL;
	}
	snprintf(w.log, sizeof(w.log), "%s/build.log", w.dir);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (pipe2(p, O_CLOEXEC) < 0) {
		img_warn("pipe: %s", strerror(errno));
		return IMG_EXIT_FAIL;
	}
	fprintf(stderr, "sbx-image: building %s (suite %s) in %s\n", o->name, w.suite, w.dir);
	pid = fork();
	if (pid < 0) {
		img_warn("fork: %s", strerror(errno));
		return IMG_EXIT_FAIL;
	}
	if (pid == 0) {
		close(p[0]);
		w.errfd = p[1];
		build_child(&w);
	}
	close(p[1]);
	setpgid(pid, pid); /* also in the child: whichever runs first */
	for (int sent = 0;;) {
		pid_t r = waitpid(pid, &st, 0);
		if (r == pid)
			break;
		if (errno != EINTR)
			break;
		if (got_signal) {
			/* the whole build: mmdebstrap, apt, dpkg (one process group);
			 * a second signal does not wait for their clean-up */
			kill(-pid, sent++ ? SIGKILL : SIGTERM);
		}
	}
	n = read(p[0], line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = '\0';
	close(p[0]);
	code = WIFEXITED(st) ? WEXITSTATUS(st) : IMG_EXIT_FAIL;
	if (got_signal) {
		img_rmtree(w.dir);
		img_warn("interrupted (%s): nothing was installed; image '%s' is as it was", strsignal(got_signal),
			 o->name);
		return 128 + got_signal;
	}
	if (code != 0) {
		/* keep the log of a failed mmdebstrap for the administrator */
		char keep[PATH_MAX];
		snprintf(keep, sizeof(keep), "%s/%s.build.log", SBX_IMAGES_DIR "/.logs", o->name);
		mkdir(SBX_IMAGES_DIR "/.logs", 0700);
		if (rename(w.log, keep) == 0 && strstr(line, w.log)) {
			char *at = strstr(line, w.log);
			snprintf(at, sizeof(line) - (size_t)(at - line), "%s", keep);
		}
		img_rmtree(w.dir);
		img_warn("build of '%s' failed: %s", o->name, line[0] ? line : "the builder died");
		return code == IMG_EXIT_NO_PACKAGE ? code : IMG_EXIT_FAIL;
	}
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	unlink(w.log);
	if (install(&w, err, sizeof(err)) < 0) {
		char root[PATH_MAX + 8];
		snprintf(root, sizeof(root), "%s/%s", w.dir, SBX_IMAGE_MOUNT);
		umount2(root, MNT_DETACH | UMOUNT_NOFOLLOW);
		img_rmtree(w.dir);
		img_warn("installing '%s' failed: %s", o->name, err);
		return IMG_EXIT_FAIL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(lockfd);
	return IMG_EXIT_OK;
}
