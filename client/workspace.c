/* SPDX-License-Identifier: ISC */
/*
 * --workspace's client side: the workspace and changeset directories
 * opened as the caller before the run, the changeset kept under the run's
 * id after it, and the loader `sbx changes` and `sbx apply` share (format:
 * docs/workspace.md). Everything here runs as the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <bsd/string.h>
#include <sodium.h>

#include "fail.h"
#include "fdio.h"
#include "rmtree.h"
#include "workspace.h"
#include "textutil.h"

static char pending[4096]; /* the fresh changeset directory of this run */

/* $XDG_STATE_HOME/sbx/changesets, created 0700 on the way */
static void state_dir(char *buf, size_t len, bool create)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char *p;

	if (x != NULL && x[0] == '/')
		snprintf(buf, len, "%s/sbx/changesets", x);
	else if (home != NULL && home[0] == '/')
		snprintf(buf, len, "%s/.local/state/sbx/changesets", home);
	else
		cli_die("--workspace", "neither XDG_STATE_HOME nor HOME is an absolute path: nowhere to keep changesets");
	if (!create)
		return;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			cli_die(buf, "%s", strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		cli_die(buf, "%s", strerror(errno));
}

void ws_open(struct run_opts *o)
{
	char base[4000];
	struct stat st;

	o->ws_fd = open(o->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->ws_fd < 0)
		cli_die("--workspace", "%s: %s", o->workspace, strerror(errno));
	if (fstat(o->ws_fd, &st) < 0)
		cli_die("--workspace", "%s: %s", o->workspace, strerror(errno));
	if (realpath(o->workspace, o->ws_path) == NULL)
		cli_die("--workspace", "%s: %s", o->workspace, strerror(errno));
	o->ws_dev = (uint64_t)st.st_dev;
	o->ws_ino = (uint64_t)st.st_ino;
	state_dir(base, sizeof(base), true);
	snprintf(pending, sizeof(pending), "%s/.new-XXXXXX", base);
	if (mkdtemp(pending) == NULL)
		cli_die(base, "cannot create a changeset directory: %s", strerror(errno));
	o->cs_fd = open(pending, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o->cs_fd < 0)
		cli_die(pending, "%s", strerror(errno));
}

void ws_finish(const struct run_opts *o, json_t *result)
{
	json_t *cs = json_object_get(result, "changeset");
	const char *id = json_string_value(json_object_get(result, "id"));
	const char *sha = json_string_value(json_object_get(cs, "sha256"));
	char dst[4096], base[4000];
	FILE *f;
	int fd;

	if (pending[0] == '\0')
		return;
	if (!json_is_object(cs) || sha == NULL || !ws_id_valid(id)) {
		struct rmtree_report rep;
		(void)rmtree_contents(o->cs_fd, &rep);
		(void)rmdir(pending);
		pending[0] = '\0';
		return;
	}
	fd = openat(o->cs_fd, "meta", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL)
		cli_die(pending, "meta: %s", strerror(errno));
	fprintf(f, "sbx-changeset-meta 1\nrun %s\nsha256 %s\ndev %llu\nino %llu\nworkspace %s\n", id, sha,
		(unsigned long long)o->ws_dev, (unsigned long long)o->ws_ino, o->ws_path);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0 || fclose(f) != 0)
		cli_die(pending, "meta: %s", strerror(errno));
	state_dir(base, sizeof(base), false);
	snprintf(dst, sizeof(dst), "%s/%s", base, id);
	if (rename(pending, dst) < 0)
		cli_die(dst, "%s", strerror(errno));
	pending[0] = '\0';
	json_object_set_new(cs, "id", json_string(id));
	json_object_set_new(cs, "path", json_string(dst));
}

bool ws_id_valid(const char *id)
{
	size_t n = id != NULL ? strlen(id) : 0;

	return n > 0 && n <= WS_ID_MAX && strspn(id, "0123456789abcdef") == n;
}

json_t *ws_path_json(const char *path)
{
	char *t = sbx_utf8_sanitize(path, strlen(path));
	json_t *j = t != NULL ? json_string(t) : NULL;

	free(t);
	if (j == NULL)
		cli_die("changeset", "out of memory");
	return j;
}

/* ---- loading --------------------------------------------------------- */

static char *read_all(int dirfd, const char *name, size_t max, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL || sbx_read_full(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return buf;
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* %XX-decoded path, checked: relative, no empty, "." or ".." component */
static char *decode_path(const char *s, const char *id)
{
	size_t n = strlen(s), j = 0;
	char *p = calloc(1, n + 1);

	if (p == NULL)
		cli_die("changeset", "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && unhex(s[i + 1]) >= 0 && unhex(s[i + 2]) >= 0) {
			p[j++] = (char)(unhex(s[i + 1]) * 16 + unhex(s[i + 2]));
			i += 2;
		} else
			p[j++] = s[i];
	}
	p[j] = '\0';
	if (j != strlen(p) || j == 0 || j > 4096 || p[0] == '/')
		cli_die("changeset", "%s: a path that is not relative to the workspace: not applied", id);
	for (size_t at = 0; at <= j;) {
		size_t k = strcspn(p + at, "/");
		if (k == 0 || (k == 1 && p[at] == '.') || (k == 2 && p[at] == '.' && p[at + 1] == '.'))
			cli_die("changeset", "%s: path '%s' has an empty, '.' or '..' component: not applied", id, p);
		at += k + 1;
	}
	return p;
}

static bool state_word(const char *w)
{
	if (strcmp(w, "-") == 0 || strcmp(w, "d") == 0)
		return true;
	return (w[0] == 'f' || w[0] == 'l') && w[1] == ':' && strlen(w + 2) == 64 &&
	       strspn(w + 2, "0123456789abcdef") == 64;
}

void ws_load(const char *id, struct ws_changeset *cs)
{
	char base[4000], *text, *meta, *line, *save = NULL;
	unsigned char d[32];
	struct stat st;
	size_t len, mlen;
	bool header = false, ended = false;

	memset(cs, 0, sizeof(*cs));
	if (!ws_id_valid(id))
		cli_die_usage(id, "not a changeset id (the run's id: lower-case hex)");
	strlcpy(cs->id, id, sizeof(cs->id));
	state_dir(base, sizeof(base), false);
	snprintf(cs->dir, sizeof(cs->dir), "%s/%s", base, id);
	cs->dirfd = open(cs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cs->dirfd < 0)
		cli_die(id, "no such changeset (%s: %s)", cs->dir, strerror(errno));
	if (fstat(cs->dirfd, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 022))
		cli_die(id, "%s is not a changeset directory of yours (owner or mode)", cs->dir);
	meta = read_all(cs->dirfd, "meta", 65536, &mlen);
	text = read_all(cs->dirfd, "manifest", SBX_CS_MANIFEST_MAX, &len);
	if (meta == NULL || text == NULL)
		cli_die(id, "%s: the changeset's meta or manifest is missing or unreadable", cs->dir);
	crypto_hash_sha256(d, (const unsigned char *)text, len);
	sbx_hex(d, 32, cs->sha256);
	for (line = strtok_r(meta, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "sha256 ", 7) == 0)
			strlcpy(cs->meta_sha256, line + 7, sizeof(cs->meta_sha256));
		else if (strncmp(line, "workspace ", 10) == 0)
			strlcpy(cs->workspace, line + 10, sizeof(cs->workspace));
		else if (strncmp(line, "dev ", 4) == 0)
			cs->dev = strtoull(line + 4, NULL, 10);
		else if (strncmp(line, "ino ", 4) == 0)
			cs->ino = strtoull(line + 4, NULL, 10);
	}
	free(meta);
	if (strlen(text) != len)
		cli_die(id, "the manifest holds a NUL byte: not a changeset");
	save = NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char b[80], a[80], path[3 * 4096 + 2], file[32];
		unsigned mode;

		if (!header) {
			if (strcmp(line, "sbx-changeset 1") != 0)
				cli_die(id, "the manifest is not an sbx-changeset 1");
			header = true;
		} else if (ended) {
			cli_die(id, "the manifest has lines after its end");
		} else if (strncmp(line, "run ", 4) == 0) {
			if (strcmp(line + 4, id) != 0)
				cli_die(id, "the manifest is run %s's, not this one's", line + 4);
		} else if (strncmp(line, "entry ", 6) == 0) {
			/* BEFORE AFTER MODE FILE PATH, one space apart */
			char *f[5], *sv = NULL, *end = NULL;
			int k = 0;
			for (char *t = strtok_r(line + 6, " ", &sv); t != NULL && k < 5; t = strtok_r(NULL, " ", &sv))
				f[k++] = t;
			if (k != 5 || strtok_r(NULL, " ", &sv) != NULL || strlen(f[0]) >= sizeof(b) ||
			    strlen(f[1]) >= sizeof(a) || strlen(f[3]) >= sizeof(file) || strlen(f[4]) >= sizeof(path))
				cli_die(id, "the manifest has a malformed entry");
			strlcpy(b, f[0], sizeof(b));
			strlcpy(a, f[1], sizeof(a));
			strlcpy(file, f[3], sizeof(file));
			strlcpy(path, f[4], sizeof(path));
			unsigned long mo = strtoul(f[2], &end, 8);
			mode = (unsigned)mo;
			if (*end != '\0' || mo > 07777 || !state_word(b) || !state_word(a) ||
			    (strcmp(file, "-") != 0 && strspn(file, "0123456789") != strlen(file)))
				cli_die(id, "the manifest has a malformed entry");
			struct ws_entry *ne = realloc(cs->e, (cs->n + 1) * sizeof(*cs->e));
			if (ne == NULL)
				cli_die(id, "out of memory");
			cs->e = ne;
			struct ws_entry *e = &cs->e[cs->n++];
			memset(e, 0, sizeof(*e));
			e->path = decode_path(path, id);
			strlcpy(e->before, b, sizeof(e->before));
			strlcpy(e->after, a, sizeof(e->after));
			e->mode = mode;
			e->file = strcmp(file, "-") == 0 ? -1 : strtol(file, NULL, 10);
			if ((a[0] == 'f' || a[0] == 'l') != (e->file >= 0))
				cli_die(id, "the manifest has an entry without its content");
		} else if (strncmp(line, "skip ", 5) == 0) {
			char **ns = realloc(cs->skips, (cs->n_skips + 1) * sizeof(*cs->skips));
			if (ns == NULL)
				cli_die(id, "out of memory");
			cs->skips = ns;
			cs->skips[cs->n_skips++] = strdup(line + 5);
		} else if (strcmp(line, "end complete") == 0) {
			ended = true;
		} else if (strncmp(line, "end incomplete ", 15) == 0) {
			strlcpy(cs->incomplete, line + 15, sizeof(cs->incomplete));
			ended = true;
		} else
			cli_die(id, "the manifest has an unknown line");
	}
	if (!ended)
		cli_die(id, "the manifest has no end line (cut short)");
	free(text);
}

const char *ws_action(const struct ws_entry *e)
{
	return e->before[0] == '-' ? "added" : e->after[0] == '-' ? "deleted" : "modified";
}

static int open_beneath(int dfd, const char *path, int flags)
{
	struct open_how how = {
		/* openat2(2) refuses O_NOCTTY with O_PATH */
		.flags = (__u64)(flags | O_NOFOLLOW | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY)),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

void ws_state_now(int wsfd, const char *path, char *out, size_t outlen)
{
	const char *slash = strrchr(path, '/');
	char parent[4096], target[4097];
	unsigned char d[32];
	struct stat st;
	int pfd, fd;
	ssize_t n;

	snprintf(out, outlen, "-");
	if (slash != NULL) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
		pfd = open_beneath(wsfd, parent, O_PATH | O_DIRECTORY);
	} else
		pfd = dup(wsfd);
	if (pfd < 0) {
		if (errno != ENOENT)
			snprintf(out, outlen, "!");
		return;
	}
	const char *name = slash ? slash + 1 : path;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(pfd);
		return;
	}
	if (S_ISDIR(st.st_mode))
		snprintf(out, outlen, "d");
	else if (S_ISLNK(st.st_mode) && (n = readlinkat(pfd, name, target, sizeof(target) - 1)) >= 0) {
		char hex[65];
		crypto_hash_sha256(d, (const unsigned char *)target, (unsigned long long)n);
		sbx_hex(d, 32, hex);
		snprintf(out, outlen, "l:%s", hex);
	} else if (S_ISREG(st.st_mode) && (fd = open_beneath(pfd, name, O_RDONLY | O_NONBLOCK)) >= 0) {
		crypto_hash_sha256_state h;
		unsigned char buf[65536];
		char hex[65];
		crypto_hash_sha256_init(&h);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
		crypto_hash_sha256_final(&h, d);
		close(fd);
		sbx_hex(d, 32, hex);
		snprintf(out, outlen, n < 0 ? "?" : "f:%s", hex);
	} else
		snprintf(out, outlen, "?");
	close(pfd);
}

void ws_free(struct ws_changeset *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free(cs->e[i].path);
	for (size_t i = 0; i < cs->n_skips; i++)
		free(cs->skips[i]);
	free(cs->e);
	free(cs->skips);
	if (cs->dirfd >= 0)
		close(cs->dirfd);
	cs->e = NULL;
	cs->skips = NULL;
	cs->n = cs->n_skips = 0;
	cs->dirfd = -1;
}
