/* SPDX-License-Identifier: ISC */
#include "fixer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "proto.h"
#include "signals.h"
#include "stack.h"
#include "clock.h"


static _Noreturn void exec_fixer(const char *cmd, int in_r, int out_w)
{
	sigset_t none;

	sigemptyset(&none);
	signals_child_reset(&none);
	setpgid(0, 0);
	if (dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0)
		_exit(127);
	cli_stack_restore();
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

static void kill_group(pid_t pid)
{
	/* Both: the group may not exist yet if the child has not reached
	 * setpgid(), and the child may have left it. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/* Read what is there; 1 at EOF, -1 when over the cap. */
static int read_some(int fd, struct fix_run *r, size_t *cap)
{
	for (;;) {
		ssize_t n;

		if (r->out_len + 65536 + 1 > *cap) {
			char *p = realloc(r->out, *cap * 2);
			if (p == NULL)
				return -1;
			r->out = p;
			*cap *= 2;
		}
		n = read(fd, r->out + r->out_len, *cap - r->out_len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : 1;
		if (n == 0)
			return 1;
		r->out_len += (size_t)n;
		if (r->out_len > SBX_CODE_MAX)
			return -1;
	}
}

static void describe_status(struct fix_run *r, int st)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		r->status = FIX_OK;
		return;
	}
	r->status = FIX_FAILED;
	if (WIFEXITED(st))
		snprintf(r->detail, sizeof(r->detail), "exited with status %d", WEXITSTATUS(st));
	else
		snprintf(r->detail, sizeof(r->detail), "killed by signal %d", WTERMSIG(st));
}

int fixer_run(const char *cmd, const char *in, size_t in_len, uint64_t timeout_ms,
	      struct fix_run *r, char *err, size_t errlen)
{
	int inp[2], outp[2], st = 0, over = 0;
	size_t cap = 1 << 16, sent = 0;
	long long start = sbx_mono_ms(), deadline = start + (long long)timeout_ms;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = malloc(cap);
	if (r->out == NULL || pipe2(inp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (pipe2(outp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_fixer(cmd, inp[0], outp[1]);
	setpgid(pid, pid); /* also here: no window where a kill misses it */
	close(inp[0]);
	close(outp[1]);
	fcntl(inp[1], F_SETFL, O_NONBLOCK);
	fcntl(outp[0], F_SETFL, O_NONBLOCK);
	if (in_len == 0) {
		close(inp[1]);
		inp[1] = -1;
	}
	/* Write and read at once: a fixer that answers before it has read
	 * everything must not deadlock against us. */
	while (outp[0] >= 0) {
		struct pollfd p[2];
		int np = 0, left = (int)(deadline - sbx_mono_ms()), rc;

		if (signals_stop_requested()) {
			r->status = FIX_INTERRUPTED;
			goto kill;
		}
		if (left <= 0) {
			r->status = FIX_TIMEOUT;
			goto kill;
		}
		p[np++] = (struct pollfd){.fd = outp[0], .events = POLLIN};
		if (inp[1] >= 0)
			p[np++] = (struct pollfd){.fd = inp[1], .events = POLLOUT};
		rc = poll(p, (nfds_t)np, left > 100 ? 100 : left);
		if (rc < 0 && errno != EINTR) {
			snprintf(r->detail, sizeof(r->detail), "poll: %s", strerror(errno));
			r->status = FIX_FAILED;
			goto kill;
		}
		if (rc <= 0)
			continue;
		if (np > 1 && p[1].revents) {
			ssize_t w = write(inp[1], in + sent, in_len - sent);
			if (w > 0)
				sent += (size_t)w;
			/* EPIPE: it does not want the rest; that is its choice. */
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == in_len) {
				close(inp[1]);
				inp[1] = -1;
			}
		}
		if (p[0].revents) {
			over = read_some(outp[0], r, &cap);
			if (over < 0) {
				r->status = FIX_TOO_BIG;
				goto kill;
			}
			if (over == 1) {
				close(outp[0]);
				outp[0] = -1;
			}
		}
	}
	if (inp[1] >= 0)
		close(inp[1]);
	/* stdout closed: wait for the exit, still under the deadline. */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (sbx_mono_ms() >= deadline || signals_stop_requested()) {
			r->status = signals_stop_requested() ? FIX_INTERRUPTED : FIX_TIMEOUT;
			kill_group(pid);
			waitpid(pid, NULL, 0);
			goto done;
		}
		usleep(5000);
	}
	kill(-pid, SIGKILL); /* nothing it left behind outlives the fixer */
	describe_status(r, st);
	goto done;
kill:
	kill_group(pid);
	if (inp[1] >= 0)
		close(inp[1]);
	if (outp[0] >= 0)
		close(outp[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
done:
	r->out[r->out_len] = '\0';
	r->wall_ms = (uint64_t)(sbx_mono_ms() - start);
	return 0;
}

static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

static int is_json_object_text(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i < len && s[i] == '{';
}

char *fixer_answer_code(const char *out, size_t len, size_t *code_len, char *why, size_t whylen)
{
	const char *src = out;
	size_t n = len;
	json_t *root = NULL;
	char *code;

	if (is_json_object_text(out, len)) {
		root = json_loadb(out, len, 0, NULL);
		/* Python code can start with '{' too: only a JSON object with a
		 * string "code" is the JSON form. */
		if (root != NULL && json_is_string(json_object_get(root, "code"))) {
			src = json_string_value(json_object_get(root, "code"));
			n = json_string_length(json_object_get(root, "code"));
		} else if (root != NULL && json_is_object(root)) {
			snprintf(why, whylen, "it answered a JSON object without a string \"code\"");
			json_decref(root);
			return NULL;
		}
	}
	if (is_blank(src, n) || memchr(src, '\0', n) != NULL) {
		snprintf(why, whylen, is_blank(src, n) ? "it answered no code" : "its code contains a NUL byte");
		json_decref(root);
		return NULL;
	}
	code = malloc(n + 1);
	if (code != NULL) {
		memcpy(code, src, n);
		code[n] = '\0';
		*code_len = n;
	} else {
		snprintf(why, whylen, "out of memory");
	}
	json_decref(root);
	return code;
}
