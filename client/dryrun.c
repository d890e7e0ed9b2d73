/* SPDX-License-Identifier: ISC */
#include "dryrun.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "code.h"
#include "fail.h"
#include "proto.h"
#include "signals.h"
#include "spawn.h"

struct buf {
	char *p;
	size_t len;
};

static void append(struct buf *b, const char *data, size_t n)
{
	char *q = realloc(b->p, b->len + n + 1);

	if (q == NULL)
		cli_die("dry-run", "out of memory");
	memcpy(q + b->len, data, n);
	b->len += n;
	q[b->len] = '\0';
	b->p = q;
}

/* both pipes to EOF (the helper writes a few kilobytes at most) */
static void slurp(struct helper *h, struct buf *out, struct buf *err)
{
	int *fdp[2] = {&h->out_fd, &h->err_fd};
	struct buf *bufs[2] = {out, err};
	char chunk[4096];

	while (h->out_fd >= 0 || h->err_fd >= 0) {
		struct pollfd p[2] = {{.fd = h->out_fd, .events = POLLIN}, {.fd = h->err_fd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			cli_die("poll", "%s", strerror(errno));
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (*fdp[i] < 0 || !p[i].revents)
				continue;
			n = read(*fdp[i], chunk, sizeof(chunk));
			if (n > 0) {
				append(bufs[i], chunk, (size_t)n);
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				int fd = *fdp[i];

				*fdp[i] = -1;
				close(fd);
			}
		}
	}
}

static json_t *to_json(char *text)
{
	json_t *o = json_object();
	char *save = NULL;

	json_object_set_new(o, "dry_run", json_true());
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sep = strstr(l, ": ");
		json_t *v;

		if (sep == NULL)
			continue;
		*sep = '\0';
		sep += 2;
		/* counts and sizes as numbers */
		if (sep[0] != '\0' && strspn(sep, "0123456789") == strlen(sep) && strlen(sep) < 19)
			v = json_integer((json_int_t)strtoll(sep, NULL, 10));
		else
			v = json_string(sep);
		if (strcmp(l, "mount") == 0 || strcmp(l, "input") == 0 || strcmp(l, "env") == 0 ||
		    strcmp(l, "network_allow") == 0) {
			json_t *a = json_object_get(o, l);
			if (a == NULL) {
				a = json_array();
				json_object_set_new(o, l, a);
			}
			json_array_append_new(a, v);
		} else {
			json_object_set_new(o, l, v);
		}
	}
	return o;
}

int run_dry(const struct run_opts *o)
{
	struct buf out = {0}, err = {0};
	struct helper h;
	sigset_t old;
	int st, code;

	helper_spawn(o, code_memfd(o), &h, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(h.control_fd);
	close(h.result_fd);
	if (o->json)
		slurp(&h, &out, &err);
	while (waitpid(h.pid, &st, 0) < 0)
		if (errno != EINTR)
			cli_die("waitpid", "%s", strerror(errno));
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (!o->json)
		return code;
	if (code != 0) {
		char *msg = err.p ? err.p : (char *)"sbx-helper failed", *nl;

		if (strncmp(msg, "sbx-helper: ", 12) == 0)
			msg += 12;
		if ((nl = strchr(msg, '\n')) != NULL)
			*nl = '\0';
		cli_die("dry-run", "%s", msg);
	}
	{
		json_t *j = to_json(out.p ? out.p : (char *)"");
		char *s = json_dumps(j, JSON_INDENT(2));
		puts(s ? s : "{}");
		free(s);
		json_decref(j);
	}
	free(out.p);
	free(err.p);
	return 0;
}
