/* SPDX-License-Identifier: ISC */
/* The dpkg database of a tree, read through dpkg-query(1): package-set
 * digest and program index (dpkgdb.h). */
#include "dpkgdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bsd/string.h>
#include <linux/openat2.h>
#include <sodium.h>

struct pkg {
	char *name, *version, *arch;
};

struct pkgs {
	struct pkg *v;
	size_t n, cap;
};

static void pkgs_free(struct pkgs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].version);
		free(p->v[i].arch);
	}
	free(p->v);
}

/* Run dpkg-query with argv[1..] (argv[0] is set here), its standard output
 * on *f; its standard error is dropped (warnings about a database's
 * missing optional fields). Returns the pid, or -1. */
static pid_t dpkg_query(char **argv, FILE **f)
{
	int p[2];
	pid_t pid;

	argv[0] = "/usr/bin/dpkg-query";
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(nul, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*f = fdopen(p[0], "re");
	if (*f == NULL) {
		close(p[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static int dpkg_query_end(pid_t pid, FILE *f)
{
	int st;

	fclose(f);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The installed packages (status "ii"), through dpkg-query(1): the
 * database's supported interface. admindir NULL: the system's. */
static int read_status(const char *admindir, struct pkgs *p, char *err, size_t errlen)
{
	char opt[PATH_MAX + 16], *argv[6], *line = NULL;
	size_t cap = 0, a = 1;
	ssize_t len;
	pid_t pid;
	FILE *f;

	if (admindir) {
		snprintf(opt, sizeof(opt), "--admindir=%s", admindir);
		argv[a++] = opt;
	}
	argv[a++] = "--show";
	argv[a++] = "--showformat=${db:Status-Abbrev}\t${Package}\t${Version}\t${Architecture}\n";
	argv[a] = NULL;
	memset(p, 0, sizeof(*p));
	pid = dpkg_query(argv, &f);
	if (pid < 0) {
		snprintf(err, errlen, "dpkg-query: %s", strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		char *name, *version, *arch;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (strncmp(line, "ii \t", 4) != 0)
			continue;
		name = line + 4;
		version = strchr(name, '\t');
		arch = version ? strchr(version + 1, '\t') : NULL;
		if (arch == NULL)
			continue;
		*version++ = *arch++ = '\0';
		if (p->n == p->cap) {
			struct pkg *nv = reallocarray(p->v, p->cap ? p->cap * 2 : 512, sizeof(*nv));
			if (nv == NULL)
				break;
			p->v = nv;
			p->cap = p->cap ? p->cap * 2 : 512;
		}
		p->v[p->n++] = (struct pkg){strdup(name), strdup(version), strdup(arch)};
	}
	free(line);
	if (dpkg_query_end(pid, f) != 0 || p->n == 0) {
		snprintf(err, errlen, "dpkg-query --show%s%.200s failed or found no installed package",
			 admindir ? " --admindir=" : "", admindir ? admindir : "");
		pkgs_free(p);
		return -1;
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sbx_dpkg_set_digest(const char *admindir, char digest[72], uint64_t *count, char *err, size_t errlen)
{
	crypto_hash_sha256_state st;
	unsigned char md[32];
	struct pkgs p;
	char **lines;

	if (read_status(admindir, &p, err, errlen) < 0)
		return -1;
	lines = calloc(p.n ? p.n : 1, sizeof(*lines));
	if (lines == NULL) {
		pkgs_free(&p);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p.n; i++)
		if (asprintf(&lines[i], "%s\t%s\t%s\n", p.v[i].name, p.v[i].version, p.v[i].arch) < 0)
			lines[i] = NULL;
	qsort(lines, p.n, sizeof(*lines), cmp_line);
	crypto_hash_sha256_init(&st);
	for (size_t i = 0; i < p.n; i++)
		if (lines[i])
			crypto_hash_sha256_update(&st, (const unsigned char *)lines[i], strlen(lines[i]));
	crypto_hash_sha256_final(&st, md);
	memcpy(digest, "sha256:", 8);
	for (int i = 0; i < 32; i++) {
		digest[7 + 2 * i] = "0123456789abcdef"[md[i] >> 4];
		digest[8 + 2 * i] = "0123456789abcdef"[md[i] & 15];
	}
	digest[71] = '\0';
	*count = p.n;
	for (size_t i = 0; i < p.n; i++)
		free(lines[i]);
	free(lines);
	pkgs_free(&p);
	return 0;
}

static bool in_bin_dir(const char *path)
{
	static const char *const dirs[] = {"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) == 0 && path[n] != '\0' && strchr(path + n, '/') == NULL)
			return true;
	}
	return false;
}

/* path's directory resolved inside rootfd (RESOLVE_IN_ROOT: an absolute
 * symlink in an image stays in the image), joined with its last name. */
static int canonical(int rootfd, const char *path, char *out, size_t len)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
	char dir[PATH_MAX], proc[64], full[PATH_MAX], rootp[PATH_MAX];
	const char *base = strrchr(path, '/') + 1;
	ssize_t n, rn;
	int fd;

	strlcpy(dir, path, sizeof(dir));
	dir[base - path - 1] = '\0';
	fd = (int)syscall(SYS_openat2, rootfd, dir[0] ? dir + 1 : ".", &how, sizeof(how));
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, full, sizeof(full) - 1);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rootfd);
	rn = readlink(proc, rootp, sizeof(rootp) - 1);
	close(fd);
	if (n < 0 || rn < 0)
		return -1;
	full[n] = rootp[rn] = '\0';
	if (strcmp(rootp, "/") == 0)
		rn = 0;
	if (strncmp(full, rootp, (size_t)rn) != 0)
		return -1;
	snprintf(out, len, "%s/%s", full[rn] ? full + rn : "", base);
	return 0;
}

long sbx_dpkg_bin_index(const char *root, const char *admindir, FILE *out, char *err, size_t errlen)
{
	char opt[PATH_MAX + 16], *argv[10], *line = NULL, **lines = NULL;
	size_t a = 1, n = 0, cap = 0, lcap = 0;
	struct pkgs p;
	ssize_t len;
	pid_t pid;
	FILE *f;
	int rootfd;

	if (read_status(admindir, &p, err, errlen) < 0)
		return -1;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		snprintf(err, errlen, "%.200s: %s", root, strerror(errno));
		pkgs_free(&p);
		return -1;
	}
	if (admindir) {
		snprintf(opt, sizeof(opt), "--admindir=%s", admindir);
		argv[a++] = opt;
	}
	argv[a++] = "--search";
	argv[a++] = "/bin/*";
	argv[a++] = "/sbin/*";
	argv[a++] = "/usr/bin/*";
	argv[a++] = "/usr/sbin/*";
	argv[a++] = "/usr/local/bin/*";
	argv[a] = NULL;
	pid = dpkg_query(argv, &f);
	if (pid < 0) {
		snprintf(err, errlen, "dpkg-query: %s", strerror(errno));
		close(rootfd);
		pkgs_free(&p);
		return -1;
	}
	/* "pkg[:arch][, pkg...]: /path" (dpkg-query(1) --search); a path two
	 * packages list (a diversion, a shared directory) is named by the first */
	while ((len = getline(&line, &lcap, f)) > 0) {
		char canon[PATH_MAX], *path = strstr(line, ": /"), *entry;
		const char *version = NULL;
		size_t nl;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (path == NULL)
			continue;
		*path = '\0';
		path += 2;
		nl = strcspn(line, ":, ");
		line[nl] = '\0';
		if (!in_bin_dir(path))
			continue;
		for (size_t i = 0; i < p.n && version == NULL; i++)
			if (strcmp(p.v[i].name, line) == 0)
				version = p.v[i].version;
		if (version == NULL || canonical(rootfd, path, canon, sizeof(canon)) < 0)
			continue; /* not installed (configuration files left), or gone */
		if (n == cap) {
			char **nv = reallocarray(lines, cap ? cap * 2 : 1024, sizeof(*nv));
			if (nv == NULL)
				break;
			lines = nv;
			cap = cap ? cap * 2 : 1024;
		}
		if (asprintf(&entry, "%s\t%s\t%s\n", canon, line, version) >= 0)
			lines[n++] = entry;
	}
	free(line);
	dpkg_query_end(pid, f); /* 1 when a pattern matched nothing */
	close(rootfd);
	pkgs_free(&p);
	if (n > 0)
		qsort(lines, n, sizeof(*lines), cmp_line);
	long written = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strncmp(lines[i], lines[i - 1], strcspn(lines[i], "\t") + 1) != 0) {
			fputs(lines[i], out);
			written++;
		}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return written;
}

int sbx_bin_index_lookup(const char *index, const char *path, char *package, size_t plen,
			 char *version, size_t vlen)
{
	FILE *f = fopen(index, "re");
	size_t pl = strlen(path), cap = 0;
	char *line = NULL;
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && getline(&line, &cap, f) > 0) {
		char *pk, *ver;
		if (strncmp(line, path, pl) != 0 || line[pl] != '\t')
			continue;
		pk = line + pl + 1;
		ver = strchr(pk, '\t');
		if (ver == NULL)
			continue;
		*ver++ = '\0';
		ver[strcspn(ver, "\n")] = '\0';
		strlcpy(package, pk, plen);
		strlcpy(version, ver, vlen);
		found = 1;
	}
	free(line);
	fclose(f);
	return found;
}
