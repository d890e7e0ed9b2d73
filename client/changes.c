/* SPDX-License-Identifier: ISC */
/*
 * `sbx changes ID [--json]` (sbx(1) WORKSPACES): what a --workspace run
 * changed. Plain: one line per entry, then the unified diff of text files
 * (diff(1) -u, with the workspace's current file as the old side when it
 * still has the run's "before" content) and one line per binary change.
 * --json: the entries as a JSON object. As the caller; nothing is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <jansson.h>

#include "cli.h"
#include "fail.h"
#include "workspace.h"

static const char *kind(const char *state)
{
	return state[0] == 'd' ? "directory" : state[0] == 'l' ? "symlink" : state[0] == 'f' ? "file" : "none";
}

static json_t *entries_json(const struct ws_changeset *cs)
{
	json_t *a = json_array(), *sk = json_array();

	for (size_t i = 0; i < cs->n; i++) {
		const struct ws_entry *e = &cs->e[i];
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:i}", "path", e->path, "action", ws_action(e),
				     "type", kind(e->after[0] == '-' ? e->before : e->after), "before_type", kind(e->before),
				     "sha256_before", strlen(e->before) > 2 ? e->before + 2 : NULL, "sha256_after",
				     strlen(e->after) > 2 ? e->after + 2 : NULL, "mode", (int)e->mode));
	}
	for (size_t i = 0; i < cs->n_skips; i++)
		json_array_append_new(sk, json_string(cs->skips[i]));
	return json_pack("{s:s, s:s, s:s, s:b, s:s?, s:o, s:o}", "id", cs->id, "sha256", cs->sha256, "workspace",
			 cs->workspace, "complete", cs->incomplete[0] == '\0', "incomplete",
			 cs->incomplete[0] ? cs->incomplete : NULL, "files", a, "skipped", sk);
}

/* has a NUL in its first 8 KiB: shown as a binary change */
static bool binary(int fd)
{
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	return n > 0 && memchr(buf, '\0', (size_t)n) != NULL;
}

static int open_beneath(int dfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/* diff -u of two fds (-1: /dev/null), labelled a/PATH and b/PATH */
static void diff(int oldfd, int newfd, const char *path)
{
	char a[4200], b[4200], o[64], n[64];
	pid_t pid;

	if ((oldfd >= 0 && binary(oldfd)) || (newfd >= 0 && binary(newfd))) {
		printf("Binary file %s changed\n", path);
		return;
	}
	snprintf(a, sizeof(a), "a/%s", path);
	snprintf(b, sizeof(b), "b/%s", path);
	snprintf(o, sizeof(o), oldfd >= 0 ? "/dev/fd/%d" : "/dev/null", oldfd);
	snprintf(n, sizeof(n), newfd >= 0 ? "/dev/fd/%d" : "/dev/null", newfd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (oldfd >= 0)
			fcntl(oldfd, F_SETFD, 0);
		if (newfd >= 0)
			fcntl(newfd, F_SETFD, 0);
		execlp("diff", "diff", "-u", "--label", a, "--label", b, o, n, (char *)NULL);
		fprintf(stderr, "sbx: diff: %s\n", strerror(errno));
		_exit(2);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void usage(FILE *out)
{
	fputs("usage: sbx changes ID [--json]\n"
	      "  what the --workspace run ID changed (sbx(1) WORKSPACES): one line per\n"
	      "  entry, then the unified diff of text files\n"
	      "  --json  the entries as JSON\n",
	      out);
}

int changes_main(int argc, char **argv)
{
	struct ws_changeset cs;
	const char *id = NULL;
	bool json = false;
	int ws, files;

	cli_std_opts(argc, argv, usage);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (argv[i][0] == '-' || id != NULL)
			cli_die_usage("changes", "unexpected argument '%s' (usage: sbx changes ID [--json])", argv[i]);
		else
			id = argv[i];
	}
	if (id == NULL)
		cli_die_usage("changes", "no changeset id (usage: sbx changes ID [--json])");
	ws_load(id, &cs);
	if (json) {
		json_t *j = entries_json(&cs);
		char *t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		if (t != NULL)
			puts(t);
		free(t);
		json_decref(j);
		ws_free(&cs);
		return 0;
	}
	printf("changeset %s: %zu change(s) to %s%s%s\n", cs.id, cs.n, cs.workspace,
	       cs.incomplete[0] ? ", INCOMPLETE: " : "", cs.incomplete);
	for (size_t i = 0; i < cs.n; i++)
		printf("  %-8s %s%s\n", ws_action(&cs.e[i]), cs.e[i].path,
		       cs.e[i].after[0] == 'd' ? "/" : cs.e[i].after[0] == 'l' ? " (symlink)" : "");
	for (size_t i = 0; i < cs.n_skips; i++)
		printf("  skipped  %s\n", cs.skips[i]);
	ws = open(cs.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	files = openat(cs.dirfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t i = 0; i < cs.n; i++) {
		const struct ws_entry *e = &cs.e[i];
		char now[68], name[32];
		int oldfd = -1, newfd = -1;

		if (e->before[0] != 'f' && e->after[0] != 'f')
			continue;
		if (e->before[0] == 'f' && ws >= 0) {
			ws_state_now(ws, e->path, now, sizeof(now));
			if (strcmp(now, e->before) == 0)
				oldfd = open_beneath(ws, e->path);
			else {
				printf("--- a/%s: changed on disk since the run; its before content is not kept\n", e->path);
				continue;
			}
		}
		if (e->after[0] == 'f' && files >= 0) {
			snprintf(name, sizeof(name), "%ld", e->file);
			newfd = openat(files, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		}
		diff(oldfd, newfd, e->path);
		if (oldfd >= 0)
			close(oldfd);
		if (newfd >= 0)
			close(newfd);
	}
	if (files >= 0)
		close(files);
	if (ws >= 0)
		close(ws);
	ws_free(&cs);
	return 0;
}
