/* SPDX-License-Identifier: ISC */
/*
 * `sbx changes ID [--json [--diff [--max-bytes N]]]` (sbx(1) WORKSPACES):
 * what a --workspace run changed. Plain: one line per entry, then the
 * unified diff of text files (diff(1) -u, with the workspace's current file
 * as the old side when it still has the run's "before" content) and one
 * line per binary change. --json: the entries as a JSON object; with
 * --diff, the same diff text as its "diff" member, at most N bytes (the
 * rest counted in "diff_omitted_bytes"): what `sbx mcp` puts in a tool
 * result. As the caller; nothing is written.
 */
#include <errno.h>
#include <stdarg.h>
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
#include "textutil.h"
#include "ttysafe.h"
#include "units.h"
#include "workspace.h"

/* Where the diff text goes: stdout, or (--json --diff) a buffer of at
 * most max bytes, the rest counted; one place so both forms say the same. */
struct sink {
	bool to_buf;
	char *buf;
	size_t len, max;
	uint64_t omitted;       /* bytes cut */
	uint64_t files_omitted; /* entries not diffed once the buffer was full */
};

static void sink_put(struct sink *s, const char *d, size_t n)
{
	size_t room;

	if (!s->to_buf) {
		fwrite(d, 1, n, stdout);
		return;
	}
	room = s->max - s->len < n ? s->max - s->len : n;
	if (room > 0) {
		char *nb = realloc(s->buf, s->len + room + 1);
		if (nb == NULL)
			cli_die("changes", "out of memory");
		s->buf = nb;
		memcpy(s->buf + s->len, d, room);
		s->len += room;
		s->buf[s->len] = '\0';
	}
	s->omitted += n - room;
}

static void sink_printf(struct sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sink_printf(struct sink *s, const char *fmt, ...)
{
	char line[4 * 4096 + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		sink_put(s, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

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
			a, json_pack("{s:o, s:s, s:s, s:s, s:s?, s:s?, s:i}", "path", ws_path_json(e->path), "action", ws_action(e),
				     "type", kind(e->after[0] == '-' ? e->before : e->after), "before_type", kind(e->before),
				     "sha256_before", strlen(e->before) > 2 ? e->before + 2 : NULL, "sha256_after",
				     strlen(e->after) > 2 ? e->after + 2 : NULL, "mode", (int)e->mode));
	}
	for (size_t i = 0; i < cs->n_skips; i++)
		json_array_append_new(sk, ws_path_json(cs->skips[i]));
	return json_pack("{s:s, s:s, s:s, s:b, s:s?, s:o, s:o}", "id", cs->id, "sha256", cs->sha256, "workspace",
			 cs->workspace, "complete", cs->incomplete[0] == '\0', "incomplete",
			 cs->incomplete[0] ? cs->incomplete : NULL, "files", a, "skipped", sk);
}

/* A path as a line of text shows it (ttysafe_name); dies when out of memory. */
static char *shown(const char *path)
{
	char *t = ttysafe_name(path);

	if (t == NULL)
		cli_die("changes", "out of memory");
	return t;
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

/* diff -u of two fds (-1: /dev/null), labelled a/PATH and b/PATH, into s */
static void diff(struct sink *s, int oldfd, int newfd, const char *path)
{
	char a[4 * 4096 + 8], b[4 * 4096 + 8], o[64], n[64], buf[8192];
	int p[2] = {-1, -1};
	ssize_t got;
	pid_t pid;

	if ((oldfd >= 0 && binary(oldfd)) || (newfd >= 0 && binary(newfd))) {
		sink_printf(s, "Binary file %s changed\n", path);
		return;
	}
	snprintf(a, sizeof(a), "a/%s", path);
	snprintf(b, sizeof(b), "b/%s", path);
	snprintf(o, sizeof(o), oldfd >= 0 ? "/dev/fd/%d" : "/dev/null", oldfd);
	snprintf(n, sizeof(n), newfd >= 0 ? "/dev/fd/%d" : "/dev/null", newfd);
	fflush(stdout);
	if (s->to_buf && pipe2(p, O_CLOEXEC) < 0)
		cli_die("changes", "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		if (oldfd >= 0)
			fcntl(oldfd, F_SETFD, 0);
		if (newfd >= 0)
			fcntl(newfd, F_SETFD, 0);
		if (p[1] >= 0 && dup2(p[1], 1) < 0)
			_exit(2);
		execlp("diff", "diff", "-u", "--label", a, "--label", b, o, n, (char *)NULL);
		fprintf(stderr, "sbx: diff: %s\n", strerror(errno));
		_exit(2);
	}
	if (p[1] >= 0)
		close(p[1]);
	/* read to the end even past max, so diff never blocks on a full pipe */
	while (p[0] >= 0 && ((got = read(p[0], buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR)))
		if (got > 0)
			sink_put(s, buf, (size_t)got);
	if (p[0] >= 0)
		close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void usage(FILE *out)
{
	fputs("usage: sbx changes ID [--json [--diff [--max-bytes SIZE]]]\n"
	      "  what the --workspace run ID changed (sbx(1) WORKSPACES): one line per\n"
	      "  entry, then the unified diff of text files\n"
	      "  --json            the entries as JSON\n"
	      "  --diff            with --json: the diff too, as \"diff\"\n"
	      "  --max-bytes SIZE  at most SIZE of it (default 1M; 64K, 1M...), the\n"
	      "                    rest counted in \"diff_omitted_bytes\"\n",
	      out);
}

/* A symbolic link the run left: its target is what apply will create,
 * never followed, so the reviewer must see it ("symlink a/PATH ->
 * TARGET", both shown as ttysafe_name shows names). */
static void link_line(struct sink *s, int files, const struct ws_entry *e)
{
	char name[32], target[4097], *p, *t;
	ssize_t n = -1;
	int fd;

	snprintf(name, sizeof(name), "%ld", e->file);
	fd = files >= 0 ? openat(files, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = read(fd, target, sizeof(target) - 1);
		close(fd);
	}
	target[n > 0 ? n : 0] = '\0';
	p = shown(e->path);
	t = shown(n > 0 ? target : "?");
	sink_printf(s, "symlink a/%s -> %s\n", p, t);
	free(p);
	free(t);
}

/* The diff of every text file the changeset changes, a line per binary
 * change and one per symbolic link, into s. */
static void write_diffs(struct sink *s, const struct ws_changeset *cs)
{
	int ws = open(cs->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int files = openat(cs->dirfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	for (size_t i = 0; i < cs->n; i++) {
		const struct ws_entry *e = &cs->e[i];
		char now[68], name[32];
		int oldfd = -1, newfd = -1;

		char *path;

		if (e->after[0] == 'l') {
			link_line(s, files, e);
			continue;
		}
		if (e->before[0] != 'f' && e->after[0] != 'f')
			continue;
		/* past the bound nothing more is shown: count, do not diff */
		if (s->to_buf && s->len >= s->max) {
			s->files_omitted++;
			continue;
		}
		path = shown(e->path);
		if (e->before[0] == 'f' && ws >= 0) {
			ws_state_now(ws, e->path, now, sizeof(now));
			if (strcmp(now, e->before) == 0)
				oldfd = open_beneath(ws, e->path);
			else {
				sink_printf(s, "--- a/%s: changed on disk since the run; its before content is not kept\n",
					    path);
				free(path);
				continue;
			}
		}
		if (e->after[0] == 'f' && files >= 0) {
			snprintf(name, sizeof(name), "%ld", e->file);
			newfd = openat(files, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		}
		diff(s, oldfd, newfd, path);
		free(path);
		if (oldfd >= 0)
			close(oldfd);
		if (newfd >= 0)
			close(newfd);
	}
	if (files >= 0)
		close(files);
	if (ws >= 0)
		close(ws);
}

static void print_json(const struct ws_changeset *cs, bool with_diff, uint64_t max)
{
	json_t *j = entries_json(cs);
	char *t;

	if (j != NULL && with_diff) {
		struct sink s = {.to_buf = true, .max = max > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max};
		char *text;

		write_diffs(&s, cs);
		/* diff(1) passes the files' bytes through: JSON needs UTF-8 */
		text = sbx_utf8_sanitize(s.buf ? s.buf : "", s.len);
		if (text == NULL)
			cli_die("changes", "out of memory");
		/* each invalid byte became three (U+FFFD): bound it again, on a
		 * character boundary */
		size_t tl = strlen(text), cut = tl > s.max ? s.max : tl;
		while (cut > 0 && cut < tl && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;
		s.omitted += tl - cut;
		text[cut] = '\0';
		json_object_set_new(j, "diff", json_string(text));
		json_object_set_new(j, "diff_omitted_bytes", json_integer((json_int_t)s.omitted));
		json_object_set_new(j, "diff_omitted_files", json_integer((json_int_t)s.files_omitted));
		free(text);
		free(s.buf);
	}
	t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	if (t == NULL)
		cli_die("changes", "out of memory");
	puts(t);
	free(t);
	json_decref(j);
}

int changes_main(int argc, char **argv)
{
	struct ws_changeset cs;
	struct sink out = {0};
	const char *id = NULL;
	bool json = false, with_diff = false;
	uint64_t max = 1u << 20;

	cli_std_opts(argc, argv, usage, (const char *const[]){"--max-bytes", NULL});
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--diff") == 0)
			with_diff = true;
		else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
			if (sbx_parse_size(argv[++i], &max) < 0)
				cli_die_usage("--max-bytes", "'%s' is not a size (examples: 64K, 1M)", argv[i]);
		} else if (argv[i][0] == '-' || id != NULL)
			cli_die_usage("changes", "unexpected argument '%s' (usage: sbx changes ID [--json [--diff]])",
				      argv[i]);
		else
			id = argv[i];
	}
	if (id == NULL)
		cli_die_usage("changes", "no changeset id (usage: sbx changes ID [--json])");
	if (with_diff && !json)
		cli_die_usage("--diff", "only with --json (the plain form always shows the diff)");
	ws_load(id, &cs);
	if (json) {
		print_json(&cs, with_diff, max);
		ws_free(&cs);
		return 0;
	}
	printf("changeset %s: %zu change(s) to %s%s%s\n", cs.id, cs.n, cs.workspace,
	       cs.incomplete[0] ? ", INCOMPLETE: " : "", cs.incomplete);
	for (size_t i = 0; i < cs.n; i++) {
		char *p = shown(cs.e[i].path);
		if (cs.e[i].after[0] == 'f')
			printf("  %-8s %s (mode %04o)\n", ws_action(&cs.e[i]), p, cs.e[i].mode & 07777);
		else
			printf("  %-8s %s%s\n", ws_action(&cs.e[i]), p,
			       cs.e[i].after[0] == 'd' ? "/" : cs.e[i].after[0] == 'l' ? " (symlink)" : "");
		free(p);
	}
	for (size_t i = 0; i < cs.n_skips; i++) {
		char *p = shown(cs.skips[i]);
		printf("  skipped  %s\n", p);
		free(p);
	}
	write_diffs(&out, &cs);
	ws_free(&cs);
	return 0;
}
