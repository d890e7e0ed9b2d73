/* SPDX-License-Identifier: ISC */
/*
 * What the helper reads as root: sbx.conf and one policy file, at
 * compiled-in paths, each checked to be root-owned and not writable by
 * anyone else, along with every directory above it (the same rule sudo
 * applies to sudoers). The caller's fds are checked in inputs.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bsd/string.h>

#include "helper.h"
#include "paths.h"
#include "proto.h"
#include "unconst.h"

#define CONF_MAX SBX_POLICY_TEXT_MAX /* sbx.conf and policies alike */

/* Directories may be sticky and world-writable (like /tmp) above the last
 * one: entries someone else owns cannot be replaced there. */
static int dir_ok(int fd, const char *path, bool last, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 || ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))) {
		snprintf(err, errlen, "%s: directory must be owned by root and not writable by others", path);
		return -1;
	}
	return 0;
}

/*
 * Open a root-owned file by walking its path from "/" without following
 * symlinks, so no component can be swapped under us. Returns an fd, -1 with
 * err set, or -2 if the file does not exist (err set too). With dir, the
 * last component is a directory too (checked like the ones above it) and
 * the fd is O_PATH.
 */
static int walk_trusted(const char *path, bool dir, char *err, size_t errlen)
{
	char buf[PATH_MAX], sofar[PATH_MAX] = "";
	char *comp, *next, *save = NULL;
	int dfd, fd;
	struct stat st;

	if (path[0] != '/' || strlcpy(buf, path, sizeof(buf)) >= sizeof(buf)) {
		snprintf(err, errlen, "%s: bad path", path);
		return -1;
	}
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	comp = strtok_r(buf, "/", &save);
	if (comp == NULL) { /* "/" alone names no file */
		snprintf(err, errlen, "%s: bad path", path);
		close(dfd);
		return -1;
	}
	while (comp != NULL) {
		next = strtok_r(NULL, "/", &save);
		if (dir_ok(dfd, sofar[0] ? sofar : "/", next == NULL, err, errlen) < 0)
			goto fail;
		strlcat(sofar, "/", sizeof(sofar));
		strlcat(sofar, comp, sizeof(sofar));
		if (next == NULL)
			break;
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s%s", sofar, strerror(errno),
				 errno == ENOTDIR || errno == ELOOP ? " (symlinks are not followed)" : "");
			if (errno == ENOENT) {
				close(dfd);
				return -2;
			}
			goto fail;
		}
		close(dfd);
		dfd = fd;
		comp = next;
	}
	fd = openat(dfd, comp, dir ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
				   : O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && dir) {
		close(dfd);
		if (dir_ok(fd, path, true, err, errlen) < 0) {
			close(fd);
			return -1;
		}
		return fd;
	}
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(dfd);
		return e == ENOENT ? -2 : -1;
	}
	close(dfd);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen, "%s: must be owned by root and not writable by group or others "
			 "(owner uid %u, mode %04o)", path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
fail:
	close(dfd);
	return -1;
}

int open_trusted(const char *path, char *err, size_t errlen)
{
	return walk_trusted(path, false, err, errlen);
}

int open_trusted_dir(const char *path, char *err, size_t errlen)
{
	return walk_trusted(path, true, err, errlen);
}

static int slurp(int fd, const char *path, char **out, size_t *len, size_t max, char *err, size_t errlen)
{
	char *buf = malloc(max + 1);
	ssize_t n;

	if (buf == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = sbx_read_full(fd, buf, max + 1);
	if (n < 0 || (size_t)n > max) {
		snprintf(err, errlen, "%s: %s", path, n < 0 ? strerror(errno) : "too large");
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	return 0;
}

static int load_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	int fd = open_trusted(path, err, errlen);
	int rc;

	if (fd < 0)
		return fd;
	rc = slurp(fd, path, text, len, CONF_MAX, err, errlen);
	close(fd);
	return rc;
}

int load_sbx_conf(struct sbx_config *conf, char *err, size_t errlen)
{
	const char *path = SBX_SYSCONFDIR "/sbx/sbx.conf";
	char *text;
	size_t len;
	int rc;

	if (load_file(path, &text, &len, err, errlen) < 0)
		return -1;
	rc = sbx_config_parse(path, text, len, conf, err, errlen);
	free(text);
	return rc < 0 ? -1 : 0;
}

int load_config(struct run *r, char *err, size_t errlen)
{

	if (load_sbx_conf(&r->conf, err, errlen) < 0)
		return -1;
	if (r->policy_name[0] == '\0')
		strlcpy(r->policy_name, r->conf.default_policy, sizeof(r->policy_name));
	return 0;
}

int resolve_language(struct run *r, char *err, size_t errlen)
{
	const char *path = SBX_SYSCONFDIR "/sbx/sbx.conf";

	r->lang = sbx_config_language(&r->conf, r->lang_name);
	if (r->lang == NULL) {
		/* name the ones there are: the caller may read sbx.conf anyway */
		int n = snprintf(err, errlen, "--lang: no language '%s' in %s; there are:", r->lang_name, path);
		for (size_t i = 0; i < r->conf.n_langs && n > 0 && (size_t)n < errlen; i++)
			n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", r->conf.langs[i].name);
		return -1;
	}
	return 0;
}

/* One answer for "no such policy" and "not yours", so that asking tells a
 * caller nothing about policies it may not use. */
static void policy_refused(const struct run *r, char *err, size_t errlen)
{
	snprintf(err, errlen, "policy '%s' does not exist or does not allow user %s", r->policy_name, r->user);
}

/* The text the policy was parsed from, for the recorder to keep by its
 * digest (proto.h SBX_REC_FD_POLICY): root's own copy in a sealed memfd,
 * never read back here. */
static int policy_memfd(struct run *r, const char *text, size_t len, char *err, size_t errlen)
{
	int fd = memfd_create("sbx-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		snprintf(err, errlen, "policy '%s': memfd for the audit log: %s", r->policy_name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	r->policy_fd = fd;
	r->policy_len = len;
	return 0;
}

int load_policy(struct run *r, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/sbx/policies.d/%s.policy", SBX_SYSCONFDIR, r->policy_name);
	rc = load_file(path, &text, &len, err, errlen);
	if (rc == -2) {
		policy_refused(r, err, errlen);
		return -2;
	}
	if (rc < 0)
		return -1;
	strlcpy(r->policy.name, r->policy_name, sizeof(r->policy.name));
	rc = sbx_policy_parse(path, text, len, &r->policy, err, errlen);
	if (rc == 0)
		rc = policy_memfd(r, text, len, err, errlen);
	free(text);
	return rc;
}

static bool caller_in_group(const struct run *r, gid_t g)
{
	gid_t groups[NGROUPS_MAX];
	int n = getgroups(NGROUPS_MAX, groups);

	if (r->gid == g)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

static int group_cb(const char *name, void *ctx)
{
	struct group *gr = getgrnam(name);

	return gr != NULL && caller_in_group(ctx, gr->gr_gid);
}

int caller_may_use(const struct run *r, char *err, size_t errlen)
{
	struct group *gr;

	/* The install mode (4754 root:sbx) already limits who can run us;
	 * checked again so a wrong mode does not open the helper to all. */
	gr = getgrnam("sbx");
	if (gr == NULL || !caller_in_group(r, gr->gr_gid)) {
		snprintf(err, errlen, "user %s is not in group sbx", r->user);
		return -1;
	}
	if (sbx_policy_allows(&r->policy, r->user, group_cb, sbx_unconst(r)))
		return 0;
	policy_refused(r, err, errlen);
	return -1;
}

/* The retry loop's attempt number is the caller's to say, within the
 * policy's cap: a record never shows more attempts than the policy grants
 * (the client's loop stops at the same cap, client/loop.c). */
int check_attempt(const struct run *r, char *err, size_t errlen)
{
	if (r->attempt <= r->limits.max_attempts)
		return 0;
	snprintf(err, errlen, "--attempt %u exceeds the policy's max_attempts %llu", (unsigned)r->attempt,
		 (unsigned long long)r->limits.max_attempts);
	return -1;
}

static bool safe_name(const char *s)
{
	if (s[0] == '\0' || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

int lookup_caller(struct run *r, char *err, size_t errlen)
{
	struct passwd *pw = getpwuid(r->uid);
	struct group *gr = getgrgid(r->gid);

	if (r->uid == 0) {
		snprintf(err, errlen, "refusing to run code for root: run sbx as an unprivileged user");
		return -1;
	}
	/* These names end up in the sandbox's /etc/passwd: no ':' or newlines. */
	if (pw != NULL && safe_name(pw->pw_name))
		strlcpy(r->user, pw->pw_name, sizeof(r->user));
	else
		snprintf(r->user, sizeof(r->user), "uid%u", (unsigned)r->uid);
	if (gr != NULL && safe_name(gr->gr_name))
		strlcpy(r->group, gr->gr_name, sizeof(r->group));
	else
		snprintf(r->group, sizeof(r->group), "gid%u", (unsigned)r->gid);
	return 0;
}
