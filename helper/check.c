/* SPDX-License-Identifier: ISC */
/*
 * `sbx-helper --check`: the facts only root can see, for `sbx doctor`.
 * It takes no other argument and parses nothing but the root-owned
 * sbx.conf and the cgroup marker (through the same code a run uses). It
 * runs no payload and writes no audit record; the only thing it changes is
 * a probe cgroup (run-<random>, created and removed) so that "the subtree
 * is usable" is a fact, not a guess. Output, one line per check:
 *   ok: NAME: WHAT
 *   problem: NAME: WHAT; fix: HOW
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper.h"
#include "paths.h"

#define STATE SBX_LOCALSTATEDIR "/lib/sbx"
#define POSTINST "run sbx-postinst as root (share/sbx/sbx-postinst of the install)"

static int problems;
/* The report is gathered in memory and written to the caller's stdout by
 * a child running as the caller (msg.c): root never writes to it. */
static FILE *out;
static char *out_buf;
static size_t out_len;

static _Noreturn void check_exit(int code)
{
	if (out != NULL && fclose(out) == 0)
		msg_as_caller(1, out_buf, out_len);
	_exit(code);
}

static void ok(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "ok: %s: ", name);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* WHAT and HOW must not contain "; fix: " (the client splits there). */
static void problem(const char *name, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(const char *name, const char *fix, const char *fmt, ...)
{
	va_list ap;

	problems++;
	fprintf(out, "problem: %s: ", name);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fprintf(out, "; fix: %s\n", fix);
}

/* Owner, group (NULL: any) and permission bits of PATH, not following a
 * symlink. */
static void owned(const char *name, const char *path, bool dir, const char *user, const char *group,
		  mode_t mode, bool optional)
{
	struct passwd *pw = getpwnam(user);
	struct group *gr = group ? getgrnam(group) : NULL;
	char want[128];
	struct stat st;

	snprintf(want, sizeof(want), "%s%s%s mode %04o", user, group ? ":" : "", group ? group : "", (unsigned)mode);
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT && optional)
			ok(name, "%s not created yet (the first run creates it)", path);
		else
			problem(name, POSTINST, "%s: %s", path, strerror(errno));
		return;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		problem(name, POSTINST, "%s is not a %s", path, dir ? "directory" : "regular file");
		return;
	}
	if (pw == NULL || (group && (gr == NULL || st.st_gid != gr->gr_gid)) || st.st_uid != pw->pw_uid ||
	    (st.st_mode & 07777) != mode) {
		struct passwd *opw = getpwuid(st.st_uid);
		struct group *ogr = getgrgid(st.st_gid);
		char fix[PATH_MAX + 128];
		snprintf(fix, sizeof(fix), "chown %s%s%s %s && chmod %04o %s (or %s)", user, group ? ":" : "",
			 group ? group : "", path, (unsigned)mode, path, POSTINST);
		problem(name, fix, "%s is %s:%s mode %04o, want %s", path, opw ? opw->pw_name : "?",
			ogr ? ogr->gr_name : "?", (unsigned)(st.st_mode & 07777), want);
		return;
	}
	ok(name, "%s is %s", path, want);
}

static void check_accounts(void)
{
	struct passwd *pw = getpwnam("_sbx");

	if (pw == NULL || pw->pw_uid == 0)
		problem("accounts", POSTINST, "system user _sbx is missing (it owns the audit log)");
	else if (getgrnam("sbx") == NULL || getgrnam("sbx-audit") == NULL)
		problem("accounts", POSTINST, "group sbx or sbx-audit is missing");
	else
		ok("accounts", "user _sbx, groups sbx and sbx-audit exist");
}

/* Create and remove one run cgroup where a run would. */
static void check_cgroup(void)
{
	static struct sbx_config conf;
	struct sbx_limits l = {.memory_bytes = 64u << 20, .pids = 16, .cpus_milli = 1000};
	char err[HELPER_ERR_LEN], root[PATH_MAX], id[SBX_ID_LEN + 1];
	unsigned char rnd[SBX_ID_LEN / 2];
	struct cgroup *cg;
	bool v2;

	if (load_sbx_conf(&conf, err, sizeof(err)) < 0) {
		problem("config", "correct the file and line named", "%s", err);
		return;
	}
	ok("config", "%s/sbx/sbx.conf is valid", SBX_SYSCONFDIR);
	if (cgroup_place(&conf, root, sizeof(root), &v2, err, sizeof(err)) < 0) {
		problem("cgroup-subtree", cgroup_fix_hint(), "%s", err);
		return;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		problem("cgroup-subtree", "retry", "getrandom: %s", strerror(errno));
		return;
	}
	sbx_hex(rnd, sizeof(rnd), id);
	if (cgroup_create(&conf, id, &l, &cg, err, sizeof(err)) < 0) {
		problem("cgroup-subtree", v2 ? cgroup_fix_hint() : "set cgroup_root in " SBX_SYSCONFDIR
			"/sbx/sbx.conf to where the v1 hierarchies are mounted", "%s", err);
		return;
	}
	if (cgroup_destroy(cg) < 0) {
		problem("cgroup-subtree", "see the system log", "a probe cgroup under %s could not be removed", root);
		return;
	}
	if (v2)
		ok("cgroup-subtree", "v2: run cgroups with memory, pids and cpu limits can be created under %s/sbx%s "
		   "(probe run-%s created and removed)", root, conf.cgroup_root[0] ? " (cgroup_root in sbx.conf)" : "", id);
	else
		ok("cgroup-subtree", "v1: run cgroups can be created in the sbx/ subtrees of %s/{memory,pids,cpu,cpuacct} "
		   "(probe run-%s created and removed)", root, id);
}

/* The namespaces a run's clone asks for, created here as root the same way. */
static void check_namespaces(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
			      CLONE_NEWUTS | CLONE_NEWCGROUP) < 0 ? (errno & 0xff) : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		problem("namespaces", "retry", "could not test (fork failed)");
		return;
	}
	if (WEXITSTATUS(st) != 0)
		problem("namespaces", "sysctl -w user.max_user_namespaces=10000 (and persist it in /etc/sysctl.d); "
			"a kernel with CONFIG_USER_NS and the other namespaces",
			"root cannot create user, mount, net, pid, ipc, uts and cgroup namespaces: %s",
			strerror(WEXITSTATUS(st)));
	else
		ok("namespaces", "user, mount, net, pid, ipc, uts and cgroup namespaces can be created");
}

void check_main(void)
{
	char fix[PATH_MAX + 128];

	out = open_memstream(&out_buf, &out_len);
	if (out == NULL)
		die("out of memory");
	if (geteuid() != 0) {
		snprintf(fix, sizeof(fix), "chown root:sbx %s/sbx/sbx-helper && chmod 4754 %s/sbx/sbx-helper (or %s)",
			 SBX_LIBEXECDIR, SBX_LIBEXECDIR, POSTINST);
		problem("helper-root", fix, "sbx-helper runs as uid %u, not root: it is not installed setuid root",
			(unsigned)geteuid());
		check_exit(1);
	}
	/* as a run does: all three uids 0, so the caller cannot signal us */
	if (setresuid(0, 0, 0) < 0 || setresgid(0, 0, 0) < 0 || setgroups(0, NULL) < 0) {
		problem("helper-root", "retry", "setresuid: %s", strerror(errno));
		check_exit(1);
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	ok("helper-root", "sbx-helper runs as root");
	check_accounts();
	check_cgroup();
	check_namespaces();
	owned("audit-dir", STATE, true, "_sbx", "sbx-audit", 02750, false);
	owned("audit-key", STATE "/audit.key", false, "_sbx", NULL, 0400, false);
	owned("audit-log", STATE "/audit.db", false, "_sbx", "sbx-audit", 0640, true);
	owned("public-key", SBX_SYSCONFDIR "/sbx/audit.pub", false, "root", NULL, 0644, false);
	owned("recorder", SBX_RECORDER_PATH, false, "root", NULL, 0755, false);
	check_exit(problems ? 1 : 0);
}
