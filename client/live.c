/* SPDX-License-Identifier: ISC */
/*
 * Live sessions, the caller's side (sbx(1) SESSIONS; proto.h "live
 * sessions"). `sbx session start NAME` runs the session as a run whose code
 * is the driver (SBX_DATADIR/sbx/sandbox/python/sbx_live.py) with helper
 * --live, from a keeper process of the caller's that holds the run's result
 * socket: it tells the starter the session's id, then waits for the
 * session's result and leaves it in $XDG_DATA_HOME/sbx/live/NAME.json, so
 * that a later call can say why the session ended. Calls, stops and status
 * go to the session's recorder (_sbx) on its abstract socket; the
 * recorder checks our uid, we check its.
 */
#include "live.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "code.h"
#include "errcode.h"
#include "fail.h"
#include "frames.h"
#include "name.h"
#include "policies.h"
#include "run.h"
#include "session.h"
#include "spawn.h"
#include "units.h"
#include "version.h"


/* $XDG_DATA_HOME/sbx/live/NAME.json (or ~/.local/share/...) */
static void state_path(const char *name, char *out, size_t len, bool mkdirs)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];

	if (x != NULL && x[0] == '/')
		snprintf(dir, sizeof(dir), "%s/sbx/live", x);
	else {
		if (home == NULL || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : "/";
		}
		snprintf(dir, sizeof(dir), "%s/.local/share/sbx/live", home);
	}
	if (mkdirs)
		session_make_dirs(dir);
	if (snprintf(out, len, "%s/%s.json", dir, name) >= (int)len)
		cli_die("session", "%s: path too long", dir);
}

int live_connect(const char *name)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct passwd *pw = getpwnam("_sbx");
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int n, fd;

	n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, SBX_LIVE_PREFIX "%u/%s", (unsigned)getuid(), name);
	if (n < 0 || (size_t)n >= sizeof(a.sun_path) - 1)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		cli_die("socket", "%s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) <
	    0) {
		close(fd);
		return -1;
	}
	/* only sbx-recorder (_sbx) may hear our code: anybody can bind a name */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || pw == NULL || cr.uid != pw->pw_uid)
		cli_die("--session", "%s: the session's socket is held by uid %u, not by sbx-recorder (_sbx): refused",
			name, (unsigned)cr.uid);
	return fd;
}

/* One request: the code (CALL) and the call's inputs as sealed memfds in
 * one SCM_RIGHTS, the inputs' names after the request (proto.h). */
static void send_req(int fd, uint16_t op, const struct run_opts *o, int code_fd, uint32_t flags)
{
	static struct {
		struct sbx_live_req q;
		struct sbx_live_input in[SBX_MAX_INPUTS];
	} b;
	int fds[1 + SBX_MAX_INPUTS], nfd = 0;
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = {.iov_base = &b};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	size_t n_in = o != NULL && code_fd >= 0 ? o->n_inputs : 0;

	memset(&b, 0, sizeof(b));
	b.q = (struct sbx_live_req){.magic = SBX_LIVE_MAGIC, .version = SBX_LIVE_VERSION, .op = op, .flags = flags};
	if (o != NULL)
		b.q.wall_ms = o->timeout_ms;
	if (code_fd >= 0)
		fds[nfd++] = code_fd;
	for (size_t i = 0; i < n_in; i++) {
		fds[nfd++] = o->input_fds[i];
		snprintf(b.in[i].name, sizeof(b.in[i].name), "%s", o->input_names[i]);
	}
	b.q.n_inputs = (uint32_t)n_in;
	iov.iov_len = sizeof(b.q) + n_in * sizeof(b.in[0]);
	if (nfd > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
		memcpy(CMSG_DATA(h), fds, sizeof(int) * (size_t)nfd);
	}
	if (sendmsg(fd, &m, MSG_NOSIGNAL) != (ssize_t)iov.iov_len)
		cli_die("--session", "the session did not take the request: %s", strerror(errno));
}

/* NAME's keeper holds an exclusive flock(2) on its lock file from before
 * the session starts until its state file is written: a call that finds
 * no socket waits for it (at most 5 s) before it reads that file. */
static int lock_path(const char *name, char *out, size_t len)
{
	char s[PATH_MAX];

	state_path(name, s, sizeof(s), false);
	s[strlen(s) - 5] = '\0'; /* ".json" */
	return snprintf(out, len, "%s.lock", s) >= (int)len ? -1 : 0;
}

/* $XDG_DATA_HOME/sbx/live/NAME.restarted: set by a restart, taken by the
 * next call (only the caller's own files: the caller's word, recorded as
 * its session_state) */
static void restart_mark(const char *name, char *out, size_t len)
{
	char s[PATH_MAX];

	state_path(name, s, sizeof(s), false);
	s[strlen(s) - 5] = '\0';
	if (snprintf(out, len, "%s.restarted", s) >= (int)len)
		cli_die("session", "%s: path too long", s);
}

/* The ended session's last word, from its keeper's state file. */
static bool ended(const char *name, char *why, size_t len)
{
	char path[PATH_MAX];
	json_t *j;
	int lk;

	if (lock_path(name, path, sizeof(path)) == 0 && (lk = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		for (int i = 0; i < 100 && flock(lk, LOCK_SH | LOCK_NB) < 0; i++)
			usleep(50000);
		close(lk);
	}
	state_path(name, path, sizeof(path), false);
	j = json_load_file(path, 0, NULL);
	if (j == NULL)
		return false;
	snprintf(why, len, "%s (run %s)",
		 json_string_value(json_object_get(j, "session_state")) ? json_string_value(json_object_get(j, "session_state"))
									 : "ended",
		 json_string_value(json_object_get(j, "id")) ? json_string_value(json_object_get(j, "id")) : "?");
	json_decref(j);
	return true;
}

int live_run(const struct run_opts *o, bool *handled)
{
	char why[256];
	int fd = live_connect(o->work_session);

	*handled = true;
	if (fd < 0) {
		if (ended(o->work_session, why, sizeof(why))) {
			if (o->json)
				cli_print_json_error("session_ended", why);
			else
				fprintf(stderr, "sbx: --session %s: the live session is not running: %s; "
					"sbx session start %s for a new one\n", o->work_session, why, o->work_session);
			return SBX_EXIT_NO_SESSION;
		}
		*handled = false; /* no live session: a session directory at /work */
		return 0;
	}
	if (o->stdin_fd >= 0 || o->fix || o->dry_run)
		cli_die_usage("--session", "%s is live: its calls take -c CODE or FILE, --input and --timeout only "
			      "(no --stdin, --fix or --dry-run)", o->work_session);
	int code_fd = code_memfd(o);
	char mark[PATH_MAX];
	restart_mark(o->work_session, mark, sizeof(mark));
	/* the first call after a restart says so (session_state restarted) */
	bool restarted = access(mark, F_OK) == 0;
	send_req(fd, SBX_LIVE_CALL, o, code_fd, restarted ? SBX_LIVE_F_RESTARTED : 0);
	close(code_fd);
	if (restarted)
		unlink(mark);
	return run_on_socket(o, fd);
}

void live_mark_restarted(const char *name)
{
	char mark[PATH_MAX];
	int fd;

	restart_mark(name, mark, sizeof(mark));
	fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
}

/* Frames until EOF; the RESULT's text (malloc'ed) or NULL; MESSAGEs to fd 2. */
static char *read_result(int fd, char *id, size_t idlen, bool stop_at_started)
{
	struct frame_reader fr;
	struct frame f;
	char err[256], *res = NULL;

	frame_reader_init(&fr, fd);
	for (;;) {
		enum frame_status st = frame_read(&fr, &f, err, sizeof(err));
		if (st == FRAME_AGAIN) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			(void)poll(&p, 1, -1);
			continue;
		}
		if (st != FRAME_READY)
			break;
		if (f.fd >= 0)
			close(f.fd);
		if (f.type == SBX_FRAME_MESSAGE)
			fprintf(stderr, "sbx: %s\n", f.payload);
		if (f.type == SBX_FRAME_STARTED && id != NULL)
			snprintf(id, idlen, "%s", f.payload);
		if (f.type == SBX_FRAME_RESULT) {
			free(res);
			res = f.payload;
			continue;
		}
		free(f.payload);
		if (f.type == SBX_FRAME_STARTED && stop_at_started)
			break;
	}
	frame_reader_free(&fr);
	return res;
}

static int usage_start(void)
{
	fputs("Usage: sbx session start NAME [--policy P] [--lang L] [--idle DURATION] [--lifetime DURATION] [--json]\n",
	      stderr);
	return SBX_EXIT_FAILURE;
}

int live_start(int argc, char **argv)
{
	const char *name = NULL, *policy = NULL, *lang = "python";
	uint64_t idle = 0, life = 0;
	bool json = false;
	char id[80];
	int rc;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0)
			json = true;
		else if (strcmp(a, "--lang") == 0 && i + 1 < argc)
			lang = argv[++i];
		else if ((strcmp(a, "--policy") == 0 || strcmp(a, "--idle") == 0 || strcmp(a, "--lifetime") == 0) &&
			 i + 1 < argc) {
			const char *v = argv[++i];
			uint64_t *ms = a[2] == 'i' ? &idle : &life;
			if (a[2] == 'p')
				policy = v;
			else if (sbx_parse_duration_ms(v, ms) < 0 || *ms == 0)
				cli_die_usage(a, "'%s' is not a duration (30s, 15m, 8h)", v);
		} else if (a[0] != '-' && name == NULL)
			name = a;
		else
			return usage_start();
	}
	if (name == NULL || !code_name_valid(name))
		return usage_start();
	rc = live_begin(name, policy, lang, idle, life, id, sizeof(id));
	if (rc != 0) {
		if (json)
			cli_print_json_error("setup", "the session did not start");
		return rc;
	}
	if (json)
		printf("{\"session\":\"%s\",\"id\":\"%s\",\"session_state\":\"live\"}\n", name, id);
	else
		printf("%s\n", id);
	return 0;
}

/* Close every fd but the n in keep (each >= 0 or -1 for none):
 * close_range(2) over the gaps between them. */
static void keep_only(int *keep, size_t n)
{
	unsigned lo = 0;

	for (size_t i = 1; i < n; i++) /* a handful: insertion sort */
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0U, 0);
}

int live_begin(const char *name, const char *policy, const char *lang, uint64_t idle_ms, uint64_t lifetime_ms,
	       char *sid, size_t sidlen)
{
	struct run_opts o;
	char path[PATH_MAX], id[80] = "";
	int ep[2];

	int live = live_connect(name);
	if (live >= 0) {
		close(live);
		fprintf(stderr, "sbx: session start %s: already live (sbx session stop %s first)\n", name, name);
		return SBX_EXIT_FAILURE;
	}
	run_opts_init(&o);
	o.policy = policy;
	o.idle_ms = idle_ms;
	o.lifetime_ms = lifetime_ms;
	/* the language's driver (sbx.conf live_driver), recorded as the
	 * session's code */
	char dpath[PATH_MAX];
	policies_check_language(lang);
	int drc = policies_live_driver(lang, dpath, sizeof(dpath));
	if (drc == -3) {
		fprintf(stderr, "sbx: session start %s: language '%s' has no live_driver in %s/sbx/sbx.conf: "
			"it has no live sessions\n", name, lang, SBX_SYSCONFDIR);
		return SBX_EXIT_USAGE;
	}
	if (drc < 0)
		cli_die("session start", "%s/sbx/sbx.conf: unreadable or invalid (sbx doctor)", SBX_SYSCONFDIR);
	FILE *f = fopen(dpath, "re");
	static char driver[256 << 10];
	size_t n = f ? fread(driver, 1, sizeof(driver) - 1, f) : 0;
	if (f == NULL || n == 0)
		cli_die("session start", "%s: %s", dpath, f ? "empty" : strerror(errno));
	fclose(f);
	driver[n] = '\0';
	o.code = driver;
	o.code_len = n;
	o.lang = lang;
	{
		const char *base = strrchr(dpath, '/') + 1;
		snprintf(o.name, sizeof(o.name), "%s", base);
	}
	o.work_session = o.session = name;
	o.work_fd = session_open(name);
	o.live = true;
	state_path(name, path, sizeof(path), true);
	if (pipe2(ep, O_CLOEXEC) < 0)
		cli_die("pipe", "%s", strerror(errno));
	fflush(NULL);
	pid_t k = fork();
	if (k < 0)
		cli_die("fork", "%s", strerror(errno));
	if (k == 0) {
		/* the keeper: out of the terminal's session, holding the result
		 * socket for the session's life */
		struct helper h;
		sigset_t old;
		int code_fd, dn = open("/dev/null", O_RDWR | O_CLOEXEC);

		close(ep[0]);
		o.json = false; /* the keeper reads frames; it prints nothing */
		char lp[PATH_MAX];
		int lk = lock_path(name, lp, sizeof(lp)) == 0 ? open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
		/* the last session's keeper may still be writing how it ended */
		for (int i = 0; lk >= 0 && i < 200 && flock(lk, LOCK_EX | LOCK_NB) < 0; i++)
			usleep(50000);
		if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0) {
			fprintf(stderr, "sbx: session start %s: a session of that name is live or ending "
				"(sbx session stop %s)\n", name, name);
			_exit(SBX_EXIT_FAILURE);
		}
		unlink(path); /* a new session: the last one's end is history (the audit log keeps it) */
		restart_mark(name, lp, sizeof(lp));
		unlink(lp); /* a restart marks the new session after it started */
		/* nothing of the starter's stdio is held for the session's life
		 * (a shell's $(sbx session start) would never end); until START,
		 * what the helper and we have to say goes to the starter */
		if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(ep[1], 2) < 0)
			_exit(SBX_EXIT_FAILURE);
		setsid();
		signal(SIGHUP, SIG_IGN);
		/* a fork without exec inherits every fd of the starter, CLOEXEC or
		 * not: an MCP server's pipes to its other calls, the pipe its
		 * session starter reports on. The keeper lives as long as the
		 * session, so it keeps only its own. */
		keep_only((int[]){0, 1, 2, dn, ep[1], lk, o.work_fd}, 7);
		code_fd = code_memfd(&o);
		helper_spawn(&o, code_fd, &h, &old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(code_fd);
		char *res = read_result(h.result_fd, id, sizeof(id), true);
		/* the starter learns the id (or, without one, the reason) */
		if (id[0])
			dprintf(ep[1], "S%s\n", id);
		close(ep[1]);
		dup2(dn, 2);
		if (res == NULL)
			res = read_result(h.result_fd, NULL, 0, false);
		char tmp[PATH_MAX + 8];
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		FILE *s = id[0] ? fopen(tmp, "we") : NULL;
		if (s != NULL) {
			fputs(res ? res : "{\"session_state\":\"died: no result\"}", s);
			if (fclose(s) == 0)
				rename(tmp, path);
		}
		int st = 0;
		waitpid(h.pid, &st, 0);
		_exit(id[0] ? 0 : WIFEXITED(st) ? WEXITSTATUS(st) : SBX_EXIT_FAILURE);
	}
	close(ep[1]);
	close(o.work_fd); /* the keeper holds the session directory */
	FILE *r = fdopen(ep[0], "r");
	char line[1200] = "";
	bool started = false;
	/* the keeper's and the helper's lines until START: errors, or the id */
	if (r == NULL)
		cli_die("session start", "fdopen: %s", strerror(errno));
	while (fgets(line, sizeof(line), r) != NULL) {
		if (line[0] == 'S' && strlen(line) == 34 && line[33] == '\n') {
			started = true;
			break;
		}
		fputs(line, stderr);
	}
	fclose(r);
	if (!started) {
		int st = 0;
		waitpid(k, &st, 0);
		fprintf(stderr, "sbx: session start %s: the session did not start\n", name);
		return WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : SBX_EXIT_FAILURE;
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(sid, sidlen, "%s", line + 1);
	return 0;
}


int live_stop(const char *name, bool json, bool quiet)
{
	int fd = live_connect(name);
	char *res;

	if (fd < 0) {
		fprintf(stderr, "sbx: session stop %s: no live session of that name\n", name);
		return SBX_EXIT_NO_SESSION;
	}
	send_req(fd, SBX_LIVE_STOP, NULL, -1, 0);
	res = read_result(fd, NULL, 0, false);
	close(fd);
	/* the keeper writes the session's end once the recorder has recorded it */
	for (int i = 0; i < 100 && (fd = live_connect(name)) >= 0; i++) {
		close(fd);
		usleep(50000);
	}
	if (json && !quiet)
		printf("%s\n", res ? res : "{}");
	else if (!quiet)
		printf("session %s stopped\n", name);
	free(res);
	return res ? 0 : SBX_EXIT_FAILURE;
}

int live_status(const char *name, json_t **out)
{
	int fd = live_connect(name);
	char *res;

	if (fd < 0)
		return -1;
	send_req(fd, SBX_LIVE_STATUS, NULL, -1, 0);
	res = read_result(fd, NULL, 0, false);
	close(fd);
	*out = res ? json_loads(res, 0, NULL) : NULL;
	free(res);
	return *out ? 0 : -1;
}

json_t *live_info(const char *name)
{
	char path[PATH_MAX];
	json_t *j = NULL, *r;

	if (live_status(name, &j) == 0)
		return j;
	state_path(name, path, sizeof(path), false);
	r = json_load_file(path, 0, NULL);
	if (r == NULL)
		return NULL;
	j = json_pack("{s:O?,s:O?,s:O?}", "session_state", json_object_get(r, "session_state"), "id",
		      json_object_get(r, "id"), "outcome", json_object_get(r, "outcome"));
	json_decref(r);
	return j;
}
