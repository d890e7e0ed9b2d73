/* SPDX-License-Identifier: ISC */
/*
 * --dry-run: after every check a real run makes (caller, policy, the
 * tighten-only merge, code, inputs, session directory), print what the run
 * would get and exit 0, before any cgroup, recorder or sandbox exists.
 * One "key: value" line per fact on stdout; keys that repeat (mount,
 * input, env) are lists. sbx(1) prints these lines or turns them into JSON.
 * Values come from argv (already validated) and root-owned files only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"
#include "paths.h"
#include "runenv.h"

static void line(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void bind_line(const char *path, bool ro)
{
	struct stat st;

	/* a policy path: root-owned configuration, not the caller's */
	if (lstat(path, &st) < 0)
		line("mount", "%s (missing: skipped)", path);
	else if (S_ISLNK(st.st_mode))
		line("mount", "%s symlink (copied as is)", path);
	else
		line("mount", "%s bind %s,nosuid,nodev", path, ro ? "ro" : "rw");
}

void dry_run_print(const struct run *r)
{
	const struct sbx_limits *l = &r->limits;
	const struct sbx_policy *p = &r->policy;
	char sha[65];

	/* stdout is the caller's: a pipe it keeps full must not hold this
	 * root process for ever (the default SIGALRM action ends it) */
	alarm(10);
	hex(p->sha256, 32, sha);
	line("policy", "%s", p->name);
	line("policy_sha256", "%s", sha);
	line("user", "%s (uid %u, gid %u)", r->user, (unsigned)r->uid, (unsigned)r->gid);
	line("language", "%s", r->lang_name);
	{
		printf("command:");
		for (size_t i = 0; r->argv[i] != NULL; i++)
			printf(" %s", r->argv[i]);
		putchar('\n');
	}
	line("wall_time_ms", "%llu", (unsigned long long)l->wall_ms);
	line("cpu_time_ms", "%llu", (unsigned long long)l->cpu_ms);
	line("memory_bytes", "%llu", (unsigned long long)l->memory_bytes);
	line("swap_bytes", "0");
	line("pids", "%llu", (unsigned long long)l->pids);
	line("cpus", "%llu.%03llu", (unsigned long long)(l->cpus_milli / 1000),
	     (unsigned long long)(l->cpus_milli % 1000));
	line("tmp_bytes", "%llu", (unsigned long long)l->tmp_bytes);
	line("out_bytes", "%llu", (unsigned long long)l->out_bytes);
	line("shm_bytes", "%llu", (unsigned long long)l->shm_bytes);
	line("input_bytes", "%llu", (unsigned long long)l->input_bytes);
	line("output_bytes", "%llu", (unsigned long long)l->output_bytes);
	line("file_size_bytes", "%llu", (unsigned long long)l->file_size_bytes);
	line("open_files", "%llu", (unsigned long long)l->open_files);
	line("max_attempts", "%llu", (unsigned long long)l->max_attempts);
	line("sessions", "%s", p->sessions ? "yes" : "no");
	line("namespaces", "user mount pid net ipc uts cgroup");
	line("network", "%s", sbx_net_mode_name(p->net));
	egress_dry_run(r);
	line("seccomp", "%s", p->seccomp == SBX_SECCOMP_STRICT ? "strict" : "default");
	line("mount", "/ tmpfs ro,nosuid,nodev");
	if (p->image[0])
		line("image", "%s %s (/usr /bin /sbin /lib* /etc/alternatives /etc/ld.so.cache /etc/ssl "
		     "and the ro entries below /etc from the image, ro,nosuid,nodev)", p->image, r->image_digest);
	for (size_t i = 0; i < p->n_ro; i++)
		if (!image_provides(r, p->ro[i]))
			bind_line(p->ro[i], true);
	for (size_t i = 0; i < p->n_rw; i++)
		bind_line(p->rw[i], false);
	line("mount", "/etc tmpfs ro (passwd, group, hosts, hostname, nsswitch.conf, resolv.conf)");
	line("mount", "/proc proc nosuid,nodev,noexec");
	line("mount", "/dev tmpfs ro,nosuid,noexec (null zero full random urandom)");
	line("mount", "/dev/shm tmpfs rw,nosuid,nodev,noexec size=%llu nr_inodes=%llu",
	     (unsigned long long)l->shm_bytes, tmpfs_inodes(l->shm_bytes));
	line("mount", "/tmp tmpfs rw,nosuid,nodev size=%llu nr_inodes=%llu", (unsigned long long)l->tmp_bytes,
	     tmpfs_inodes(l->tmp_bytes));
	line("mount", "/out tmpfs rw,nosuid,nodev,noexec size=%llu nr_inodes=%llu", (unsigned long long)l->out_bytes,
	     tmpfs_inodes(l->out_bytes));
	line("mount", "/sbx bind ro,nosuid,nodev,noexec (%s)", SBX_DATADIR "/sbx/sandbox");
	line("mount", "%s tmpfs ro,nosuid,nodev,noexec size=%zu", r->code_path, r->code_len);
	if (r->n_inputs > 0)
		line("mount", "/in tmpfs ro,nosuid,nodev,noexec size=%llu (%zu files)",
		     (unsigned long long)r->inputs_bytes, r->n_inputs);
	for (size_t i = 0; i < r->n_inputs; i++)
		line("input", "/in/%s %llu", r->inputs[i].name, (unsigned long long)r->inputs[i].size);
	if (r->work_tree >= 0)
		line("mount", "/work session rw,nosuid,nodev (%s)", r->session[0] ? r->session : "session");
	line("cwd", "%s", r->work_tree >= 0 ? "/work" : "/tmp");
	{
		static struct sbx_runenv env;
		cpu_set_t set;
		unsigned n = run_cpu_set(r, &set);
		char list[256] = "";

		for (int c = 0, k = 0; c < CPU_SETSIZE && k < CPU_COUNT(&set); c++)
			if (CPU_ISSET(c, &set)) {
				size_t at = strlen(list);
				snprintf(list + at, sizeof(list) - at, "%s%d", k++ ? "," : "", c);
			}
		line("cpu_affinity", "%u (%s)", n, list[0] ? list : "not set");
		sbx_runenv_build(&env, p, r->lang, n);
		for (size_t i = 0; i < env.n; i++)
			line("env", "%s", env.entry[i]);
	}
	fflush(stdout);
	_exit(ferror(stdout) ? SBX_EXIT_FAILURE : 0);
}
