/* SPDX-License-Identifier: ISC */
#include "dryrun.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "code.h"
#include "fail.h"
#include "fdio.h"
#include "frames.h"
#include "limitjson.h"
#include "proto.h"
#include "rundesc.h"
#include "signals.h"
#include "spawn.h"

static void add_list(json_t *o, const char *key, json_t *v)
{
	json_t *a = json_object_get(o, key);

	if (a == NULL) {
		a = json_array();
		json_object_set_new(o, key, a);
	}
	json_array_append_new(a, v);
}

static json_t *num(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *str(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_t *j = json_string(buf);

	return j ? j : json_string("?");
}

json_t *dry_run_json(const struct sbx_dry_run *dr)
{
	const struct sbx_run_desc *d = &dr->run;
	const struct sbx_limits *l = &d->limits;
	json_t *o = json_object();
	char sha[65], cmd[SBX_DESC_ARGV_LEN];

	json_object_set_new(o, "dry_run", json_true());
	sbx_hex(d->policy_sha256, 32, sha);
	json_object_set_new(o, "policy", json_string(d->policy));
	json_object_set_new(o, "policy_sha256", json_string(sha));
	json_object_set_new(o, "user", str("%s (uid %u, gid %u)", d->user, (unsigned)d->uid, (unsigned)d->gid));
	json_object_set_new(o, "language", json_string(d->language));
	memcpy(cmd, d->argv, d->argv_len);
	for (uint32_t i = 0; i + 1 < d->argv_len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	json_object_set_new(o, "command", str("%s", cmd));
	/* every limit under its JSON key (limit.h), swap after memory */
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *ld = &sbx_limit_defs[i];

		json_object_set_new(o, ld->json, sbx_limit_json(ld, sbx_limit_get(l, ld->id)));
		if (ld->id == SBX_LIMIT_MEMORY)
			json_object_set_new(o, "swap_bytes", num(0));
	}
	json_object_set_new(o, "sessions", json_string(d->flags & SBX_DESC_SESSIONS ? "yes" : "no"));
	json_object_set_new(o, "namespaces", json_string("user mount pid net ipc uts cgroup"));
	json_object_set_new(o, "network", json_string(sbx_net_mode_name((int)d->net)));
	if (d->net == SBX_NET_ALLOW) {
		for (uint32_t i = 0; i < dr->n_allow; i++) {
			char hp[SBX_HOSTPORT_LEN];

			sbx_hostport_format(dr->allow[i].host, dr->allow[i].port, hp, sizeof(hp));
			add_list(o, "network_allow", json_string(hp));
		}
		json_object_set_new(o, "network_connections", num(dr->net_connections));
		json_object_set_new(o, "network_bytes_out", num(dr->net_bytes_out));
		json_object_set_new(o, "network_bytes_in", num(dr->net_bytes_in));
	}
	json_object_set_new(o, "seccomp", json_string(d->seccomp == SBX_SECCOMP_STRICT ? "strict" : "default"));
	add_list(o, "mount", json_string("/ tmpfs ro,nosuid,nodev"));
	if (d->image[0])
		json_object_set_new(o, "image", str("%s %s (/usr /bin /sbin /lib* /etc/alternatives /etc/ld.so.cache "
						    "/etc/ssl and the ro entries below /etc from the image, ro,nosuid,nodev)",
						    d->image, d->image_digest));
	for (uint32_t i = 0; i < dr->n_binds; i++) {
		const struct sbx_dry_bind *b = &dr->binds[i];
		if (b->state == SBX_BIND_MISSING)
			add_list(o, "mount", str("%s (missing: skipped)", b->path));
		else if (b->state == SBX_BIND_SYMLINK)
			add_list(o, "mount", str("%s symlink (copied as is)", b->path));
		else
			add_list(o, "mount", str("%s bind %s,nosuid,nodev", b->path, b->rw ? "rw" : "ro"));
	}
	add_list(o, "mount", json_string("/etc tmpfs ro (passwd, group, hosts, hostname, nsswitch.conf, resolv.conf)"));
	add_list(o, "mount", json_string("/proc proc nosuid,nodev,noexec"));
	add_list(o, "mount", json_string("/dev tmpfs ro,nosuid,noexec (null zero full random urandom)"));
	add_list(o, "mount", str("/dev/shm tmpfs rw,nosuid,nodev,noexec size=%" PRIu64 " nr_inodes=%" PRIu64,
				 l->shm_bytes, dr->shm_inodes));
	add_list(o, "mount", str("/tmp tmpfs rw,nosuid,nodev size=%" PRIu64 " nr_inodes=%" PRIu64, l->tmp_bytes,
				 dr->tmp_inodes));
	add_list(o, "mount", str("/out tmpfs rw,nosuid,nodev,noexec size=%" PRIu64 " nr_inodes=%" PRIu64, l->out_bytes,
				 dr->out_inodes));
	add_list(o, "mount", json_string("/sbx bind ro,nosuid,nodev,noexec (" SBX_DATADIR "/sbx/sandbox)"));
	add_list(o, "mount", str("%s tmpfs ro,nosuid,nodev,noexec size=%" PRIu64, d->code_path, d->code_bytes));
	if (d->n_inputs > 0)
		add_list(o, "mount", str("/in tmpfs ro,nosuid,nodev,noexec size=%" PRIu64 " (%u files)", d->inputs_bytes,
					 (unsigned)d->n_inputs));
	for (uint32_t i = 0; i < d->n_inputs; i++)
		add_list(o, "input", str("/in/%s %" PRIu64, d->inputs[i].name, d->inputs[i].size));
	if (d->flags & SBX_DESC_WORK)
		add_list(o, "mount", str("/work session rw,nosuid,nodev (%s)", d->session[0] ? d->session : "session"));
	json_object_set_new(o, "cwd", json_string(d->flags & SBX_DESC_WORK ? "/work" : "/tmp"));
	json_object_set_new(o, "cpu_affinity", str("%u (%s)", (unsigned)dr->cpus, dr->cpu_list[0] ? dr->cpu_list : "not set"));
	for (uint32_t i = 0; i < dr->n_env; i++)
		add_list(o, "env", json_string(dr->env[i]));
	return o;
}

/* "key: value" lines, one per list element. */
static void print_text(json_t *o)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		json_t *items = json_is_array(v) ? v : NULL, *it;
		size_t i, n = items ? json_array_size(items) : 1;

		if (strcmp(k, "dry_run") == 0)
			continue;
		for (i = 0; i < n; i++) {
			it = items ? json_array_get(items, i) : v;
			if (json_is_integer(it))
				printf("%s: %" JSON_INTEGER_FORMAT "\n", k, json_integer_value(it));
			else if (json_is_real(it))
				printf("%s: %.3f\n", k, json_real_value(it));
			else
				printf("%s: %s\n", k, json_string_value(it) ? json_string_value(it) : "");
		}
	}
}

struct answer {
	struct sbx_dry_run *dr;
	char message[SBX_FRAME_LINE_MAX + 1];
	char proto[512];
};

/* Frames until EOF: the description, or the helper's message. */
static void read_answer(int sock, struct answer *a)
{
	struct frame_reader fr;
	struct frame f;
	char err[256];

	frame_reader_init(&fr, sock);
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		enum frame_status st = frame_read(&fr, &f, err, sizeof(err));

		if (st == FRAME_AGAIN) {
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				cli_die("poll", "%s", strerror(errno));
			continue;
		}
		if (st == FRAME_EOF)
			break;
		if (st == FRAME_ERROR) {
			snprintf(a->proto, sizeof(a->proto), "protocol error: %s", err);
			frame_reader_free(&fr);
			break;
		}
		if (f.fd >= 0)
			close(f.fd);
		if (f.type == SBX_FRAME_MESSAGE) {
			snprintf(a->message, sizeof(a->message), "%s", f.payload);
		} else if (f.type == SBX_FRAME_DRY_RUN && a->dr == NULL &&
			   sbx_run_desc_check(f.payload, f.len, true, err, sizeof(err)) == 0) {
			a->dr = (struct sbx_dry_run *)(void *)f.payload;
			continue;
		} else if (a->proto[0] == '\0') {
			snprintf(a->proto, sizeof(a->proto), "protocol error: frame type %u in a dry run%s%s",
				 (unsigned)f.type, f.type == SBX_FRAME_DRY_RUN ? ": " : "",
				 f.type == SBX_FRAME_DRY_RUN ? err : "");
		}
		free(f.payload);
	}
}

int run_dry(const struct run_opts *o)
{
	struct answer a;
	struct helper h;
	sigset_t old;
	int st, code;

	memset(&a, 0, sizeof(a));
	helper_spawn(o, code_memfd(o), &h, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	read_answer(h.result_fd, &a);
	close(h.result_fd);
	while (waitpid(h.pid, &st, 0) < 0)
		if (errno != EINTR)
			cli_die("waitpid", "%s", strerror(errno));
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (code == 0 && a.dr == NULL)
		code = SBX_EXIT_FAILURE;
	if (code != 0) {
		const char *msg = a.message[0] ? a.message : a.proto[0] ? a.proto : "sbx-helper failed";

		free(a.dr);
		if (o->json)
			cli_die("dry-run", "%s", msg);
		/* the helper's own words, as it would have printed them */
		if (a.message[0])
			fprintf(stderr, "sbx-helper: %s\n", a.message);
		else
			fprintf(stderr, "sbx: dry-run: %s\n", msg);
		return code;
	}
	{
		json_t *j = dry_run_json(a.dr);

		if (o->json) {
			char *s = json_dumps(j, JSON_INDENT(2));
			puts(s ? s : "{}");
			free(s);
		} else {
			print_text(j);
		}
		json_decref(j);
	}
	free(a.dr);
	return fflush(stdout) == 0 ? 0 : SBX_EXIT_FAILURE;
}
