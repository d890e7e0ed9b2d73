/* SPDX-License-Identifier: ISC */
/*
 * `sbx doctor`: can this host and this install run sandboxes, and if not,
 * what to do. The client checks what an unprivileged user can see (cgroup
 * mode and controllers, namespace and seccomp support, the helper's mode,
 * the caller's groups); `sbx-helper --check` adds what only root can (the
 * delegated cgroup subtree, the audit key and log). Each check is one
 * line, "ok: NAME: WHAT" or "problem: NAME: WHAT; fix: HOW".
 */
#include "stack.h"
#include "cli.h"
#include "doctor.h"
#include "access.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/seccomp.h>

#include "fail.h"
#include "paths.h"
#include "spawn.h"

#define MAX_CHECKS 32
#define CG "/sys/fs/cgroup"

struct check {
	char name[32];
	bool ok;
	char what[512];
	char fix[512];  /* "" when ok */
};

static struct check checks[MAX_CHECKS];
static size_t n_checks;

static void add(bool ok, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(bool ok, const char *name, const char *fix, const char *fmt, ...)
{
	struct check *c;
	va_list ap;

	if (n_checks == MAX_CHECKS)
		return;
	c = &checks[n_checks++];
	c->ok = ok;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->fix, sizeof(c->fix), "%s", ok ? "" : fix);
	va_start(ap, fmt);
	vsnprintf(c->what, sizeof(c->what), fmt, ap);
	va_end(ap);
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Is word W in the space-separated list? */
static bool has_word(const char *list, const char *w)
{
	size_t l = strlen(w);

	for (const char *p = list; (p = strstr(p, w)) != NULL; p += l)
		if ((p == list || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0'))
			return true;
	return false;
}

/* v1 controllers from /proc/cgroups ("name hierarchy num_cgroups enabled") */
static void v1_controllers(char *out, size_t len)
{
	char line[256], name[64];
	int hier, num, enabled;
	FILE *f = fopen("/proc/cgroups", "re");

	out[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
		/* /proc/cgroups, written by the kernel: no conversion errors to report */
		if (sscanf(line, "%63s %d %d %d", name, &hier, &num, &enabled) == 4 && enabled && hier > 0) { // NOLINT(cert-err34-c)
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, name, len - strlen(out) - 1);
		}
	fclose(f);
}

static void check_cgroup_mode(void)
{
	static const char *const need[] = {"memory", "pids", "cpu"};
	char ctl[512] = "", missing[64] = "";
	struct statfs sf, uf;
	const char *mode;

	if (statfs(CG, &sf) < 0) {
		add(false, "cgroup-mode", "mount the cgroup file system on " CG " (your init system does this)",
		    CG ": %s", strerror(errno));
		return;
	}
	if (sf.f_type == CGROUP2_SUPER_MAGIC) {
		mode = "v2";
		read_small(CG "/cgroup.controllers", ctl, sizeof(ctl));
	} else {
		mode = statfs(CG "/unified", &uf) == 0 && uf.f_type == CGROUP2_SUPER_MAGIC ? "hybrid" : "v1";
		v1_controllers(ctl, sizeof(ctl));
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has_word(ctl, need[i]))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s", need[i]);
	if (missing[0])
		add(false, "cgroup-mode", "enable the controllers in the kernel (for memory: boot with cgroup_enable=memory)",
		    "%s, controllers: %s; missing:%s", mode, ctl[0] ? ctl : "none", missing);
	else
		add(true, "cgroup-mode", "", "%s, controllers: %s", mode, ctl);
}

static void check_userns(void)
{
	char max[32] = "", unpriv[32] = "";

	read_small("/proc/sys/user/max_user_namespaces", max, sizeof(max));
	read_small("/proc/sys/kernel/unprivileged_userns_clone", unpriv, sizeof(unpriv));
	if (max[0] == '\0')
		add(false, "user-namespaces", "a kernel built with CONFIG_USER_NS",
		    "the kernel has no user namespaces (/proc/sys/user/max_user_namespaces missing)");
	else if (strcmp(max, "0") == 0)
		add(false, "user-namespaces",
		    "sysctl -w user.max_user_namespaces=10000 and persist it in /etc/sysctl.d/",
		    "user.max_user_namespaces is 0: no user namespace can be created");
	else
		add(true, "user-namespaces", "", "max_user_namespaces %s%s%s", max,
		    unpriv[0] ? ", unprivileged_userns_clone " : "",
		    unpriv[0] ? (strcmp(unpriv, "0") == 0 ? "0 (not needed: the helper creates them as root)" : unpriv) : "");
}

static void check_seccomp(void)
{
	unsigned int action = SECCOMP_RET_ERRNO;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		add(false, "seccomp", "a kernel built with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER",
		    "seccomp is not available: %s", strerror(errno));
	else if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
		add(false, "seccomp", "a kernel built with CONFIG_SECCOMP_FILTER (4.14 or later)",
		    "seccomp filters cannot return errors: %s", strerror(errno));
	else
		add(true, "seccomp", "", "filters available");
}

static void check_install(void)
{
	struct group *gr = getgrnam("sbx");
	struct passwd *pw = getpwuid(getuid());
	char fix[512];
	struct stat st;

	snprintf(fix, sizeof(fix), "as root: chown root:sbx %s && chmod 4754 %s (or run sbx-postinst)",
		 SBX_HELPER_PATH, SBX_HELPER_PATH);
	if (stat(SBX_HELPER_PATH, &st) < 0)
		add(false, "helper-mode", "install sbx again (make install or the package)", "%s: %s",
		    SBX_HELPER_PATH, strerror(errno));
	else if (st.st_uid != 0 || gr == NULL || st.st_gid != gr->gr_gid || (st.st_mode & 07777) != 04754) {
		struct group *og = getgrgid(st.st_gid);
		add(false, "helper-mode", fix, "%s is uid %u group %s mode %04o, want setuid root, group sbx, 4754",
		    SBX_HELPER_PATH, (unsigned)st.st_uid, og ? og->gr_name : "?", (unsigned)(st.st_mode & 07777));
	} else
		add(true, "helper-mode", "", "%s is setuid root, group sbx, mode 4754", SBX_HELPER_PATH);

	if (gr == NULL)
		add(false, "caller-group", "run sbx-postinst as root (it creates the group)", "group sbx does not exist");
	else if (!caller_in_gid(gr->gr_gid)) {
		snprintf(fix, sizeof(fix), "as root: usermod -a -G sbx %s, then log in again",
			 pw ? pw->pw_name : "USER");
		add(false, "caller-group", fix, "%s is not in group sbx, so it may not run the helper",
		    pw ? pw->pw_name : "this user");
	} else
		add(true, "caller-group", "", "%s is in group sbx", pw ? pw->pw_name : "this user");
}

/* One line of `sbx-helper --check`. */
static void parse_helper_line(char *line)
{
	bool ok = strncmp(line, "ok: ", 4) == 0;
	char *name, *what, *fix = NULL;

	if (!ok && strncmp(line, "problem: ", 9) != 0) {
		if (line[0])
			add(false, "helper-check", "see sbx-helper(8)", "unexpected output: %.200s", line);
		return;
	}
	name = line + (ok ? 4 : 9);
	what = strstr(name, ": ");
	if (what == NULL) {
		add(false, "helper-check", "see sbx-helper(8)", "unexpected output: %.200s", line);
		return;
	}
	*what = '\0';
	what += 2;
	if (!ok && (fix = strstr(what, "; fix: ")) != NULL) {
		*fix = '\0';
		fix += 7;
	}
	add(ok, name, fix ? fix : "see sbx-helper(8)", "%s", what);
}

static void run_helper_check(void)
{
	char buf[16384], *line, *save = NULL;
	size_t len = 0;
	int p[2], st;
	pid_t pid;

	if (access(SBX_HELPER_PATH, X_OK) < 0) {
		add(false, "helper-check", "see caller-group and helper-mode above",
		    "cannot run %s --check: %s; root-side facts (cgroup subtree, audit key and log) not checked",
		    SBX_HELPER_PATH, strerror(errno));
		return;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		cli_die("doctor", "pipe/fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(p[1], 1);
		cli_stack_restore();
		execl(SBX_HELPER_PATH, "sbx-helper", "--check", (char *)NULL);
		dprintf(2, "sbx: %s: %s\n", SBX_HELPER_PATH, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	for (ssize_t n; len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) != 0;)
		if (n > 0)
			len += (size_t)n;
		else if (errno != EINTR)
			break;
	close(p[0]);
	buf[len] = '\0';
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse_helper_line(line);
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		add(false, "helper-check", "see the error above and sbx-helper(8)",
		    "%s --check failed (status %d)", SBX_HELPER_PATH, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void print_json(bool all_ok)
{
	json_t *arr = json_array();
	char *text;

	for (size_t i = 0; i < n_checks; i++)
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o}", "name", checks[i].name, "status",
						     checks[i].ok ? "ok" : "problem", "what", checks[i].what, "fix",
						     checks[i].ok ? json_null() : json_string(checks[i].fix)));
	text = json_dumps(json_pack("{s:b,s:o}", "ok", all_ok, "checks", arr), JSON_INDENT(2));
	if (text)
		puts(text);
	free(text);
}

void doctor_usage(FILE *out)
{
	fputs("Usage: sbx doctor [--json]\n"
	      "\n"
	      "Check that this host and this installation can run sandboxes: cgroup mode\n"
	      "(v1, v2, hybrid) and controllers, the delegated cgroup v2 subtree or the v1\n"
	      "sbx/ subtrees, user namespaces, seccomp, the helper's mode (setuid root,\n"
	      "group sbx, 4754), the audit key and log, and your membership in group sbx.\n"
	      "Prints one line per check, \"ok: NAME: WHAT\" or \"problem: NAME: WHAT;\n"
	      "fix: HOW\". Root-side facts come from `sbx-helper --check`.\n"
	      "\n"
	      "Options:\n"
	      "  --json      print {\"ok\": BOOL, \"checks\": [{\"name\", \"status\" (\"ok\" or\n"
	      "              \"problem\"), \"what\", \"fix\" (null when ok)}]} instead\n"
	      "  -h, --help  show this help\n"
	      "\n"
	      "Exit status: 0 every check passed, 1 a problem was found, 2 usage error.\n",
	      out);
}

int doctor_main(int argc, char **argv)
{
	bool json = false, all_ok = true;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			doctor_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0)
			cli_version();
		else
			cli_die_usage(argv[i], "unknown argument (see sbx doctor --help)");
	}
	check_cgroup_mode();
	check_userns();
	check_seccomp();
	check_install();
	run_helper_check();
	for (size_t i = 0; i < n_checks; i++)
		all_ok = all_ok && checks[i].ok;
	if (json)
		print_json(all_ok);
	else
		for (size_t i = 0; i < n_checks; i++) {
			if (checks[i].ok)
				printf("ok: %s: %s\n", checks[i].name, checks[i].what);
			else
				printf("problem: %s: %s; fix: %s\n", checks[i].name, checks[i].what, checks[i].fix);
		}
	fflush(stdout);
	return all_ok ? 0 : 1;
}
