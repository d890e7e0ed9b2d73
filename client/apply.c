/* SPDX-License-Identifier: ISC */
/*
 * `sbx apply ID [--only PATH]... [--json]` (sbx(1) WORKSPACES,
 * docs/workspace.md): applies a --workspace run's changeset to the
 * workspace, as the caller, never with privilege.
 *
 *   1. The changeset is loaded and checked (ws_load: paths relative, no
 *      "." or ".." component; complete).
 *   2. The workspace must be the directory the run saw (device and inode),
 *      and every selected entry's path must hold the entry's "before"
 *      state now (or already its "after" state: skipped); otherwise
 *      nothing is written and the conflicts are listed.
 *   3. An APPLY record "begin" goes through sbx-helper: the recorder checks
 *      that the run's END signs this manifest's SHA-256 and that the run is
 *      the caller's; if the log does not vouch for it, nothing is written.
 *   4. Each entry is applied through directory fds opened beneath the
 *      workspace (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), a file or symlink
 *      atomically (a temporary name in the same directory, fsync, rename,
 *      fsync of the directory), its content checked against the manifest's
 *      SHA-256 as it is copied; deletions deepest first, then creations
 *      parents first. Permission bits only (mode & 0777): setuid, setgid
 *      and sticky bits never.
 *   5. An APPLY record "end": applied, or partial with the entries
 *      written. An apply killed between 3 and 5 leaves a begin without an
 *      end; running sbx apply again finishes it (entries already in their
 *      after state are skipped).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <bsd/string.h>
#include <jansson.h>
#include <sodium.h>

#include "textutil.h"
#include "cli.h"
#include "fail.h"
#include "fdio.h"
#include "proto.h"
#include "spawn.h"
#include "workspace.h"

#define EXIT_CONFLICT 1

/* The caller's umask, applied to the modes the run left (as cp(1) and a
 * non-root tar(1) do): a payload that made a file 0666 or 0777 in /work
 * cannot make the caller's own file writable by others. */
static mode_t caller_umask = 022;


static int open_dir_beneath(int dfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/* the directory holding path, opened beneath the workspace; *name its last component */
static int parent_of(int ws, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];

	*name = slash ? slash + 1 : path;
	if (slash == NULL)
		return dup(ws);
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	return open_dir_beneath(ws, parent);
}

/* ---- the record, through sbx-helper ------------------------------------ */


/* One APPLY record (recorder/workspace.c); returns the result JSON (the
 * caller decrefs) or dies when the audit log did not take it. */
static json_t *record(const struct ws_changeset *cs, const char *phase, const char *result, bool only,
		      const char *begin, const char *const *paths, size_t n)
{
	int m = memfd_create("sbx-apply", MFD_CLOEXEC | MFD_ALLOW_SEALING), sv[2], st;
	FILE *f;
	pid_t pid;
	char *res = NULL;
	size_t res_len = 0;

	if (m < 0 || (f = fdopen(dup(m), "w")) == NULL)
		cli_die("apply", "memfd: %s", strerror(errno));
	fprintf(f, "sbx-apply 1\nphase %s\nrun %s\nchangeset %s\nsubset %s\nresult %s\nfiles %zu\n", phase, cs->id,
		cs->sha256, only ? "only" : "all", result, n);
	if (begin != NULL)
		fprintf(f, "begin %s\n", begin);
	for (size_t i = 0; i < n; i++) {
		fputs("path ", f);
		sbx_put_pctpath(f, paths[i]);
		fputc('\n', f);
	}
	if (fclose(f) != 0 || fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		cli_die("apply", "the report: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		cli_die("apply", "socketpair: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		cli_die("apply", "fork: %s", strerror(errno));
	if (pid == 0) {
		int a = fcntl(m, F_DUPFD_CLOEXEC, 16), b = fcntl(sv[1], F_DUPFD_CLOEXEC, 16);
		if (a < 0 || b < 0 || dup2(a, HELPER_CODE_FD) < 0 || dup2(b, HELPER_RESULT_FD) < 0)
			_exit(127);
		execl(SBX_HELPER_PATH, "sbx-helper", "run", "--apply", "--code-fd", "3", "--result-fd", "4",
		      (char *)NULL);
		fprintf(stderr, "sbx: %s: %s\n", SBX_HELPER_PATH, strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	close(m);
	/* frames (proto.h): u32 type, u32 length, big-endian, then the payload */
	for (;;) {
		unsigned char h[8];
		uint32_t type, len;
		char *p;
		if (sbx_read_full(sv[0], h, 8) != 8)
			break;
		type = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		len = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
		if (len > SBX_FRAME_MAX || (p = malloc((size_t)len + 1)) == NULL ||
		    sbx_read_full(sv[0], p, len) != (ssize_t)len)
			break;
		p[len] = '\0';
		if (type == SBX_FRAME_MESSAGE)
			fprintf(stderr, "sbx: %s\n", p);
		if (type == SBX_FRAME_RESULT && res == NULL) {
			res = p;
			res_len = len;
		} else
			free(p);
	}
	close(sv[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	json_t *j = res ? json_loadb(res, res_len, 0, NULL) : NULL;
	free(res);
	if (j == NULL)
		cli_die_code("audit_unavailable", "apply",
			     "changeset %s: the APPLY record was not written (%s phase); %s", cs->id, phase,
			     strcmp(phase, "begin") == 0 ? "nothing was applied" : "the files above were applied");
	return j;
}

/* ---- writing ----------------------------------------------------------- */

/* Copy files/N to a new temporary in pfd, checking its SHA-256 against
 * want ("f:HEX"); the temporary's name in tmp. 0, or -1 with errno. */
static int write_temp(int files, long n, const char *want, unsigned mode, int pfd, char *tmp, size_t tmplen)
{
	char name[32], hex[65];
	unsigned char buf[65536], d[32];
	crypto_hash_sha256_state h;
	ssize_t k;
	int in, out;

	snprintf(name, sizeof(name), "%ld", n);
	in = openat(files, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -1;
	for (int tries = 0;; tries++) {
		unsigned char r[6];
		char rh[13];
		randombytes_buf(r, sizeof(r));
		sbx_hex(r, sizeof(r), rh);
		snprintf(tmp, tmplen, ".sbx-apply-%s", rh);
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out >= 0 || errno != EEXIST || tries == 8)
			break;
	}
	if (out < 0) {
		close(in);
		return -1;
	}
	crypto_hash_sha256_init(&h);
	while ((k = read(in, buf, sizeof(buf))) > 0) {
		crypto_hash_sha256_update(&h, buf, (unsigned long long)k);
		if (sbx_write_all(out, buf, (size_t)k) < 0)
			break;
	}
	crypto_hash_sha256_final(&h, d);
	sbx_hex(d, 32, hex);
	close(in);
	if (k != 0 || strcmp(hex, want + 2) != 0 || fchmod(out, mode & 0777 & ~caller_umask) < 0 || fsync(out) < 0) {
		int e = k != 0 ? errno : strcmp(hex, want + 2) != 0 ? EBADMSG : errno;
		close(out);
		unlinkat(pfd, tmp, 0);
		errno = e;
		return -1;
	}
	return close(out);
}

static int link_temp(int files, long n, const char *want, int pfd, char *tmp, size_t tmplen)
{
	char name[32], target[4097], hex[65];
	unsigned char d[32];
	size_t len;
	int in;

	snprintf(name, sizeof(name), "%ld", n);
	in = openat(files, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -1;
	ssize_t k = sbx_read_full(in, target, sizeof(target) - 1);
	close(in);
	if (k < 0 || k == (ssize_t)sizeof(target) - 1)
		return -1;
	len = (size_t)k;
	target[len] = '\0';
	crypto_hash_sha256(d, (const unsigned char *)target, len);
	sbx_hex(d, 32, hex);
	if (strlen(target) != len || strcmp(hex, want + 2) != 0) {
		errno = EBADMSG;
		return -1;
	}
	unsigned char r[6];
	char rh[13];
	randombytes_buf(r, sizeof(r));
	sbx_hex(r, sizeof(r), rh);
	snprintf(tmp, tmplen, ".sbx-apply-%s", rh);
	/* a symlink is created, never followed (the target is data) */
	return symlinkat(target, pfd, tmp);
}

/* Apply one entry; 0, or -1 with errno and what failed in *what. */
static int apply_one(int ws, int files, const struct ws_entry *e, const char **what)
{
	const char *name;
	char tmp[64];
	int pfd = parent_of(ws, e->path, &name), rc = 0;

	*what = "opening its directory beneath the workspace";
	if (pfd < 0)
		return -1;
	if (e->after[0] == '-' || (e->before[0] != '-' && e->before[0] != e->after[0])) {
		*what = "removing the old entry";
		if (unlinkat(pfd, name, e->before[0] == 'd' ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
			rc = -1;
	}
	if (rc == 0 && e->after[0] == 'd') {
		*what = "creating the directory";
		if (mkdirat(pfd, name, e->mode & 0777) < 0 && errno != EEXIST)
			rc = -1;
	} else if (rc == 0 && (e->after[0] == 'f' || e->after[0] == 'l')) {
		*what = "writing the new content";
		rc = e->after[0] == 'f' ? write_temp(files, e->file, e->after, e->mode, pfd, tmp, sizeof(tmp))
					: link_temp(files, e->file, e->after, pfd, tmp, sizeof(tmp));
		if (rc == 0 && renameat(pfd, tmp, pfd, name) < 0) {
			int er = errno;
			*what = "renaming it into place";
			unlinkat(pfd, tmp, 0);
			errno = er;
			rc = -1;
		}
	}
	if (rc == 0)
		(void)fsync(pfd);
	int er = errno;
	close(pfd);
	errno = er;
	return rc;
}

static bool under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int by_path_desc(const void *a, const void *b)
{
	return -strcmp((*(const struct ws_entry *const *)a)->path, (*(const struct ws_entry *const *)b)->path);
}

static int by_path_asc(const void *a, const void *b)
{
	return strcmp((*(const struct ws_entry *const *)a)->path, (*(const struct ws_entry *const *)b)->path);
}

static void usage(FILE *out)
{
	fputs("usage: sbx apply ID [--only PATH]... [--json]\n"
	      "  apply the --workspace run ID's changeset to its directory, as you,\n"
	      "  if every path still holds what the run found (sbx(1) WORKSPACES)\n"
	      "  --only PATH  only the entries at or under PATH (repeatable)\n"
	      "  --json       the outcome as JSON\n"
	      "exit status: 0 applied; 1 conflicts (nothing written) or partial; 2 usage;\n"
	      "77 the audit log does not vouch for the changeset; 74 audit log; 125 other\n",
	      out);
}

/* Print j as one compact line and release it. */
static void put_json(json_t *j)
{
	char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;

	if (t != NULL)
		printf("%s\n", t);
	free(t);
	json_decref(j);
}

int apply_main(int argc, char **argv)
{
	struct ws_changeset cs;
	const char *id = NULL, *only[256];
	size_t n_only = 0, n_todo = 0, n_done = 0, n_conf = 0, n_already = 0;
	bool json = false;
	struct stat st;
	int ws, files;

	cli_std_opts(argc, argv, usage, (const char *const[]){"--only", NULL});
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			if (n_only == sizeof(only) / sizeof(only[0]))
				cli_die_usage("--only", "more than 256 paths");
			only[n_only++] = argv[++i];
		} else if (argv[i][0] == '-' || id != NULL)
			cli_die_usage("apply", "unexpected argument '%s' (usage: sbx apply ID [--only PATH]... [--json])",
				      argv[i]);
		else
			id = argv[i];
	}
	if (id == NULL)
		cli_die_usage("apply", "no changeset id (usage: sbx apply ID [--only PATH]...)");
	ws_load(id, &cs);
	if (cs.incomplete[0])
		cli_die(id, "the changeset is incomplete (%s): not applied", cs.incomplete);
	if (cs.meta_sha256[0] && strcmp(cs.meta_sha256, cs.sha256) != 0)
		cli_die(id, "the stored manifest is not the one the run's result named (modified since): not applied");
	ws = open(cs.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0 || fstat(ws, &st) < 0)
		cli_die(id, "the workspace %s: %s: not applied", cs.workspace, strerror(errno));
	if ((uint64_t)st.st_dev != cs.dev || (uint64_t)st.st_ino != cs.ino)
		cli_die(id, "the workspace %s is not the directory the run saw (moved or replaced): not applied",
			cs.workspace);
	/* One apply at a time per workspace, the conflict check inside the
	 * lock: two changesets from one state applied at once would both pass
	 * the check and the second would overwrite the first unseen. flock(2)
	 * on the directory: advisory, between sbx apply processes. */
	if (flock(ws, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			cli_die(id, "the workspace %s: lock: %s: not applied", cs.workspace, strerror(errno));
		if (!json)
			fprintf(stderr, "sbx: apply: waiting for another sbx apply to %s\n", cs.workspace);
		if (flock(ws, LOCK_EX) < 0)
			cli_die(id, "the workspace %s: lock: %s: not applied", cs.workspace, strerror(errno));
	}
	caller_umask = umask(0);
	umask(caller_umask);
	files = openat(cs.dirfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (files < 0)
		cli_die(id, "%s/files: %s", cs.dir, strerror(errno));
	/* the selection: --only paths and what is under them, and the new
	 * directories they need */
	for (size_t o = 0; o < n_only; o++) {
		bool hit = false;
		for (size_t i = 0; i < cs.n; i++)
			if (under(cs.e[i].path, only[o]))
				cs.e[i].selected = hit = true;
		if (!hit)
			cli_die_usage("--only", "'%s' is not in changeset %s (sbx changes %s)", only[o], id, id);
	}
	for (size_t i = 0; i < cs.n; i++) {
		if (n_only == 0)
			cs.e[i].selected = true;
		else if (!cs.e[i].selected && cs.e[i].after[0] == 'd')
			for (size_t j = 0; j < cs.n; j++)
				if (cs.e[j].selected && j != i && under(cs.e[j].path, cs.e[i].path))
					cs.e[i].selected = true;
	}
	/* conflicts: every selected path as the run found it, or already done */
	const char **conf = calloc(cs.n + 1, sizeof(*conf));
	struct ws_entry **todo = calloc(cs.n + 1, sizeof(struct ws_entry *));
	const char **done = calloc(cs.n + 1, sizeof(*done));
	json_t *jconf = json_array();
	if (conf == NULL || todo == NULL || done == NULL)
		cli_die("apply", "out of memory");
	for (size_t i = 0; i < cs.n; i++) {
		struct ws_entry *e = &cs.e[i];
		char now[68];
		if (!e->selected)
			continue;
		ws_state_now(ws, e->path, now, sizeof(now));
		if (strcmp(now, e->before) == 0)
			todo[n_todo++] = e;
		else if (strcmp(now, e->after) == 0 || (e->before[0] == 'd' && e->after[0] == '-' && strcmp(now, "-") == 0))
			n_already++;
		else {
			const char *why = now[0] == '!' ? "reached only through a symbolic link or another filesystem"
					  : e->before[0] == '-' ? "exists on disk, the run created it"
					  : now[0] == '-'      ? "deleted on disk since the run"
							       : "changed on disk since the run";
			conf[n_conf++] = e->path;
			json_array_append_new(jconf, json_pack("{s:o, s:s}", "path", ws_path_json(e->path), "why", why));
			if (!json)
				fprintf(stderr, "sbx: apply: conflict: %s: %s\n", e->path, why);
		}
	}
	if (n_conf > 0) {
		json_t *r = record(&cs, "end", "conflict", n_only > 0, NULL, conf, n_conf);
		if (json)
			put_json(json_pack("{s:s, s:s, s:o, s:O}", "changeset", id, "result", "conflict", "conflicts",
					   jconf, "record", r));
		else {
			fprintf(stderr, "sbx: apply: changeset %s: %zu conflict(s): nothing applied\n", id, n_conf);
			json_decref(jconf);
		}
		json_decref(r);
		free(conf);
		free(todo);
		free(done);
		ws_free(&cs);
		return EXIT_CONFLICT;
	}
	if (n_todo == 0) {
		if (!json)
			printf("changeset %s: nothing to apply (%zu entr%s already applied)\n", id, n_already,
			       n_already == 1 ? "y" : "ies");
		else
			printf("{\"changeset\":\"%s\",\"result\":\"applied\",\"applied\":0,\"already\":%zu}\n", id, n_already);
		json_decref(jconf);
		free(conf);
		free(todo);
		free(done);
		ws_free(&cs);
		return 0;
	}
	{
		const char **names = calloc(n_todo, sizeof(*names));
		if (names == NULL)
			cli_die("apply", "out of memory");
		for (size_t i = 0; i < n_todo; i++)
			names[i] = todo[i]->path;
		json_t *b = record(&cs, "begin", "begun", n_only > 0, NULL, names, n_todo);
		const char *check = json_string_value(json_object_get(json_object_get(b, "apply"), "check"));
		if (check == NULL || strcmp(check, "verified") != 0)
			cli_die_code("policy_denied", id, "the audit log does not vouch for this changeset (%s): not applied",
				     check ? check : "no answer");
		char begin_id[SBX_ID_LEN + 1];
		const char *bid = json_string_value(json_object_get(b, "id"));
		strlcpy(begin_id, bid != NULL ? bid : "", sizeof(begin_id));
		json_decref(b);
		free(names);
		/* deletions deepest first, then creations and changes parents first */
		struct ws_entry **del = calloc(n_todo, sizeof(struct ws_entry *));
		struct ws_entry **add = calloc(n_todo, sizeof(struct ws_entry *));
		size_t nd = 0, na = 0;
		if (del == NULL || add == NULL)
			cli_die("apply", "out of memory");
		for (size_t i = 0; i < n_todo; i++)
			if (todo[i]->after[0] == '-')
				del[nd++] = todo[i];
			else
				add[na++] = todo[i];
		qsort(del, nd, sizeof(struct ws_entry *), by_path_desc);
		qsort(add, na, sizeof(struct ws_entry *), by_path_asc);
		const char *failed = NULL, *what = NULL;
		int ferr = 0;
		/* a ^C, a SIGTERM (an MCP server stopping, a closed terminal)
		 * between begin and end would leave the end unrecorded and the
		 * workspace half-applied; the work is bounded (the changeset's
		 * files), SIGKILL still stops it, and sbx apply again finishes */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		for (size_t i = 0; i < nd + na && failed == NULL; i++) {
			struct ws_entry *e = i < nd ? del[i] : add[i - nd];
			if (apply_one(ws, files, e, &what) < 0) {
				failed = e->path;
				ferr = errno;
			} else
				done[n_done++] = e->path;
		}
		json_t *r = record(&cs, "end", failed ? "partial" : "applied", n_only > 0, begin_id, done, n_done);
		if (json)
			put_json(json_pack("{s:s, s:s, s:I, s:I, s:o?, s:O}", "changeset", id, "result",
					   failed ? "partial" : "applied", "applied", (json_int_t)n_done, "already",
					   (json_int_t)n_already, "failed", failed ? ws_path_json(failed) : NULL, "record", r));
		json_decref(r);
		if (failed) {
			fprintf(stderr, "sbx: apply: %s: %s: %s; %zu of %zu entries applied, the rest not (recorded as partial)\n",
				failed, what, ferr == EBADMSG ? "stored content does not match the changeset" : strerror(ferr),
				n_done, n_todo);
			free(del);
			free(add);
			free(conf);
			free(todo);
			free(done);
			json_decref(jconf);
			ws_free(&cs);
			return EXIT_CONFLICT;
		}
		if (!json)
			printf("changeset %s: %zu entr%s applied to %s\n", id, n_done, n_done == 1 ? "y" : "ies", cs.workspace);
		free(del);
		free(add);
	}
	json_decref(jconf);
	free(conf);
	free(todo);
	free(done);
	ws_free(&cs);
	return 0;
}
