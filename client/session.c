/* SPDX-License-Identifier: ISC */
#include "session.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "cli.h"
#include "live.h"
#include "unconst.h"
#include "fail.h"
#include "name.h"
#include "proto.h"
#include "rmtree.h"
#include "treesize.h"

/* $XDG_DATA_HOME/sbx/sessions or ~/.local/share/sbx/sessions */
static void base_path(char *out, size_t len)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (x != NULL && x[0] == '/') {
		snprintf(out, len, "%s/sbx/sessions", x);
		return;
	}
	if (home == NULL || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		if (pw == NULL || pw->pw_dir[0] != '/')
			cli_die("session", "no home directory: set XDG_DATA_HOME");
		home = pw->pw_dir;
	}
	snprintf(out, len, "%s/.local/share/sbx/sessions", home);
}

/* mkdir -p, each new level 0700 (the XDG base directory rule) */
void session_make_dirs(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		cli_die("session", "%s: path too long", path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				cli_die("session", "%s: %s", buf, strerror(errno));
			*p = c;
			if (c == '\0')
				break;
		}
	}
}

static void check_dir(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		cli_die("--session", "%s: %s", path, strerror(errno));
	if (st.st_uid != getuid())
		cli_die("--session", "%s: owned by uid %u, not by you: refused", path, (unsigned)st.st_uid);
	if (st.st_mode & 022)
		cli_die("--session", "%s: writable by group or others (mode %04o): refused; chmod go-w it",
			path, (unsigned)(st.st_mode & 07777));
}

/* Open NAME in BFD (checked, created if missing); dies on refusal. */
static int open_one(int bfd, const char *base, const char *name)
{
	char path[PATH_MAX + 80];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", base, name);
	if (mkdirat(bfd, name, 0700) < 0 && errno != EEXIST)
		cli_die("--session", "%s: %s", path, strerror(errno));
	/* for the message only; the checks that count are on the open fd */
	if (fstatat(bfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			cli_die("--session", "%s: is a symbolic link: refused", path);
		if (!S_ISDIR(st.st_mode))
			cli_die("--session", "%s: not a directory: refused", path);
		if (st.st_uid != getuid())
			cli_die("--session", "%s: owned by uid %u, not by you: refused", path, (unsigned)st.st_uid);
	}
	fd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		cli_die("--session", "%s: %s", path, strerror(errno));
	check_dir(fd, path);
	return fd;
}

/* Is FD still the directory NAME of BFD (not removed meanwhile)? */
static bool still_there(int bfd, const char *name, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(bfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int session_open(const char *name)
{
	char base[PATH_MAX];
	int bfd, fd;

	base_path(base, sizeof(base));
	session_make_dirs(base);
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		cli_die("--session", "%s: %s", base, strerror(errno));
	check_dir(bfd, base);
	for (int tries = 0;; tries++) {
		fd = open_one(bfd, base, name);
		/* Shared with other runs, exclusive to `sbx session rm`, which
		 * may hold it (briefly for `sbx session ls`): wait for it, then
		 * make sure the directory was not removed while we waited. */
		while (flock(fd, LOCK_SH) < 0) {
			if (errno == EINTR)
				continue;
			/* a file system without flock: rm cannot see this run,
			 * but its walk stays inside the session all the same */
			cli_warn("--session", "%s/%s: cannot lock (%s): sbx session rm will not see this run",
				 base, name, strerror(errno));
			break;
		}
		if (still_there(bfd, name, fd))
			break;
		close(fd);
		if (tries == 2)
			cli_die("--session", "%s/%s: removed while starting (by sbx session rm?): try again", base,
				name);
	}
	close(bfd);
	futimens(fd, NULL); /* "last used" for sbx session ls */
	return fd;
}

/* Held by a running `sbx run --session`? Probes with a non-blocking
 * exclusive lock, dropped at once (a run starting meanwhile waits for it). */
static bool in_use(int fd)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK;
}

json_t *session_list_json(void)
{
	char base[PATH_MAX], when[32];
	json_t *arr = json_array();
	struct dirent **ents;
	int n, bfd = -1;

	base_path(base, sizeof(base));
	n = scandir(base, &ents, NULL, alphasort);
	if (n < 0 && errno != ENOENT)
		cli_die("session", "%s: %s", base, strerror(errno));
	if (n > 0 && (bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		cli_die("session", "%s: %s", base, strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;
		struct tm tm;
		uint64_t bytes;
		bool busy;
		int fd = name[0] == '.' ? -1 : openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			free(ents[i]);
			continue;
		}
		busy = in_use(fd);
		bytes = tree_size_bytes(fd);
		close(fd);
		gmtime_r(&st.st_mtime, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_t *o = json_pack("{s:s,s:I,s:s,s:b}", "name", name, "size_bytes", (json_int_t)bytes,
				      "last_used", when, "in_use", busy);
		/* a live session (live.c): its status, or how it ended */
		json_t *live = live_info(name);
		if (live != NULL)
			json_object_set_new(o, "live", live);
		json_array_append_new(arr, o);
		free(ents[i]);
	}
	if (n > 0)
		free(ents);
	if (bfd >= 0)
		close(bfd);
	return arr;
}

static int session_ls(bool json)
{
	json_t *arr = session_list_json(), *o;
	size_t i;

	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s ? s : "[]");
		free(s);
		json_decref(arr);
		return 0;
	}
	if (json_array_size(arr) > 0)
		printf("%-24s %14s  %-20s  %s\n", "NAME", "SIZE", "LAST USED (UTC)", "STATE");
	json_array_foreach(arr, i, o) {
		json_t *live = json_object_get(o, "live");
		const char *lstate = json_string_value(json_object_get(live, "session_state"));
		char state[160];

		if (lstate != NULL && strcmp(lstate, "live") == 0) {
			char cur[32] = "?", peak[32] = "?";
			json_t *m = json_object_get(live, "memory_bytes"), *mp = json_object_get(live, "memory_peak_bytes");
			if (json_is_integer(m))
				snprintf(cur, sizeof(cur), "%.1fM", (double)json_integer_value(m) / 1048576.0);
			if (json_is_integer(mp))
				snprintf(peak, sizeof(peak), "%.1fM", (double)json_integer_value(mp) / 1048576.0);
			snprintf(state, sizeof(state), "live: %lld calls, idle %llds, memory %s (peak %s)",
				 (long long)json_integer_value(json_object_get(live, "cells")),
				 (long long)json_integer_value(json_object_get(live, "idle_ms")) / 1000, cur, peak);
		}
		else if (lstate != NULL)
			snprintf(state, sizeof(state), "%s", lstate);
		else
			snprintf(state, sizeof(state), "%s", json_is_true(json_object_get(o, "in_use")) ? "in use" : "idle");
		printf("%-24s %14lld  %-20s  %s\n", json_string_value(json_object_get(o, "name")),
		       (long long)json_integer_value(json_object_get(o, "size_bytes")),
		       json_string_value(json_object_get(o, "last_used")), state);
	}
	json_decref(arr);
	return 0;
}

static int session_rm(const char *name)
{
	char base[PATH_MAX], path[PATH_MAX + 80];
	struct rmtree_report r;
	struct stat st;
	int bfd, fd;

	if (!code_name_valid(name))
		cli_die_usage("session rm", "'%s' is not a session name ([A-Za-z0-9._-], 1-64 characters, "
			"not starting with '.')", name);
	base_path(base, sizeof(base));
	snprintf(path, sizeof(path), "%s/%s", base, name);
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		cli_die("session rm", "%s: no such session (%s: %s)", name, base, strerror(errno));
	fd = rmtree_opendir(bfd, name);
	if (fd < 0) {
		if (errno == ENOENT)
			cli_die("session rm", "%s: no such session (%s)", name, strerror(errno));
		if (errno == ELOOP || errno == ENOTDIR)
			cli_die("session rm", "%s: not a directory: refused", path);
		cli_die("session rm", "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0)
		cli_die("session rm", "%s: %s", path, strerror(errno));
	if (st.st_uid != getuid())
		cli_die("session rm", "%s: owned by uid %u, not by you: refused", path, (unsigned)st.st_uid);
	/* Every `sbx run --session` holds a shared lock for its whole run: its
	 * payload must not be changing the tree while it is removed. The lock
	 * is held until the directory itself is gone. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK) {
			cli_warn("session rm", "%s is in use by a running sbx run", name);
			exit(SESSION_EXIT_IN_USE);
		}
		cli_warn("session rm", "%s: cannot lock (%s): removing it without knowing whether it is in use",
			 path, strerror(errno));
	}
	if (rmtree_contents(fd, &r) < 0) {
		if (r.too_deep)
			cli_die("session rm", "%s/%s: directories nested deeper than %d levels: not removed "
				"(%lu entries left; remove them with rm -rf)", path, r.first_path, RMTREE_MAX_DEPTH,
				r.failed);
		cli_die("session rm", "%s/%s: %s (%lu entries could not be removed)", path, r.first_path,
			strerror(r.first_errno), r.failed);
	}
	/* still the directory we emptied (it was never the payload's to move) */
	if (!still_there(bfd, name, fd))
		cli_die("session rm", "%s: moved or replaced while it was removed: left alone", path);
	if (unlinkat(bfd, name, AT_REMOVEDIR) < 0)
		cli_die("session rm", "%s: %s", path, strerror(errno));
	close(fd);
	close(bfd);
	return 0;
}

int session_main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage_session(stderr);
		return SBX_EXIT_FAILURE;
	}
	/* sbx session [ls|rm] --help|--version; a session named "--help"
	 * is removed with `sbx session rm -- --help` */
	cli_std_opts(argc, argv, cli_usage_session, NULL);
	if (strcmp(argv[1], "ls") == 0) {
		if (argc == 2)
			return session_ls(false);
		if (argc == 3 && strcmp(argv[2], "--json") == 0)
			return session_ls(true);
		cli_die_usage("session ls", "unexpected argument '%s' (see sbx session --help)", argv[2]);
	}
	if (strcmp(argv[1], "start") == 0)
		return live_start(argc, argv);
	if (strcmp(argv[1], "stop") == 0 || strcmp(argv[1], "restart") == 0) {
		bool json = argc == 4 && strcmp(argv[3], "--json") == 0;
		if (argc != 3 && !json)
			cli_die_usage("session stop", "needs exactly one NAME (see sbx session --help)");
		if (argv[1][0] == 's')
			return live_stop(argv[2], json, false);
		/* restart: a fresh interpreter, same name, the policy's limits */
		int rc = live_stop(argv[2], false, true);
		if (rc != 0)
			return rc;
		char *av[] = {argv[0], sbx_unconst("start"), argv[2], json ? sbx_unconst("--json") : NULL, NULL};
		rc = live_start(json ? 4 : 3, av);
		if (rc == 0)
			live_mark_restarted(argv[2]);
		return rc;
	}
	if (strcmp(argv[1], "rm") == 0) {
		if (argc == 4 && strcmp(argv[2], "--") == 0)
			return session_rm(argv[3]);
		if (argc != 3)
			cli_die_usage("session rm", "needs exactly one NAME (see sbx session --help)");
		return session_rm(argv[2]);
	}
	cli_die_usage("session", "unknown command '%s' (see sbx session --help)", argv[1]);
}
