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
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper.h"
#include "paths.h"
#include "units.h"

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
	else if (getpwnam("_sbxsign") == NULL)
		problem("accounts", POSTINST, "system user _sbxsign is missing (it runs sbx-signer)");
	else if (getgrnam("sbx") == NULL || getgrnam("sbx-audit") == NULL)
		problem("accounts", POSTINST, "group sbx or sbx-audit is missing");
	else if ((pw = getpwnam("_sbxnet")) == NULL || pw->pw_uid == 0)
		problem("accounts", POSTINST, "system user _sbxnet is missing (it runs sbx-relay for "
			"[network] mode = allow)");
	else
		ok("accounts", "users _sbx, _sbxsign and _sbxnet, groups sbx and sbx-audit exist");
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
	if (cgroup_create(&conf, id, &l, NULL, &cg, err, sizeof(err)) < 0) {
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

/* A run slot of the caller's (slots.c), taken and given back at exit. */
static void check_slots(void)
{
	static struct sbx_config conf;
	char err[HELPER_ERR_LEN];
	uid_t uid;
	gid_t gid;

	if (load_sbx_conf(&conf, err, sizeof(err)) < 0)
		return; /* check_cgroup named it */
	msg_caller_ids(&uid, &gid);
	if (take_run_slot(uid, "the caller", conf.max_runs_per_user, err, sizeof(err)) < 0)
		problem("run-slots", "see sbx.conf(5), max_runs_per_user", "%s", err);
	else
		ok("run-slots", "a run slot can be taken (max_runs_per_user = %llu)",
		   (unsigned long long)conf.max_runs_per_user);
}

/*
 * Free space where the audit log lives: every run is recorded before it
 * starts, so a full file system makes every user's runs fail closed
 * (audit_unavailable). The bounds a user may add are sbx.conf's
 * (quota.c); below LOW_SPACE (or 2% of the file system, the smaller) the
 * check is a problem, to be fixed before runs start failing.
 */
#define LOW_SPACE (256ULL << 20)
static void check_audit_space(void)
{
	static struct sbx_config conf;
	char err[HELPER_ERR_LEN], avail[32], size[32], code[32];
	struct statvfs sv;
	uint64_t free_b, total, low;

	if (load_sbx_conf(&conf, err, sizeof(err)) < 0)
		return; /* check_cgroup named it */
	if (statvfs(STATE, &sv) < 0) {
		problem("audit-space", POSTINST, "%s: %s", STATE, strerror(errno));
		return;
	}
	free_b = (uint64_t)sv.f_bavail * sv.f_frsize;
	total = (uint64_t)sv.f_blocks * sv.f_frsize;
	low = total / 50 < LOW_SPACE ? total / 50 : LOW_SPACE;
	sbx_format_size(free_b, avail, sizeof(avail));
	sbx_format_size(total, size, sizeof(size));
	sbx_format_size(conf.audit_code_per_day, code, sizeof(code));
	/* statvfs(3) filled sv; cppcheck 2.10 does not know it */
	// cppcheck-suppress knownConditionTrueFalse
	if (free_b < low)
		problem("audit-space", "free space on that file system, or move " STATE " to a larger one; "
			"lower audit_code_per_day and max_requests_per_minute in sbx.conf(5)",
			"%s free of %s on the file system of %s: when it is full every run fails closed", avail, size,
			STATE);
	else
		ok("audit-space", "%s free of %s on the file system of %s; each user may add %s of code a day "
		   "(audit_code_per_day) and %llu requests a minute (max_requests_per_minute)", avail, size, STATE,
		   code, (unsigned long long)conf.max_requests_per_minute);
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
	check_slots();
	check_audit_space();
	check_namespaces();
	owned("audit-dir", STATE, true, "_sbx", "sbx-audit", 02750, false);
	owned("signer-dir", SBX_LOCALSTATEDIR "/lib/sbx-signer", true, "_sbxsign", "_sbxsign", 0700, false);
	owned("audit-key", SBX_LOCALSTATEDIR "/lib/sbx-signer/audit.key", false, "_sbxsign", NULL, 0400, false);
	owned("audit-log", STATE "/audit.db", false, "_sbx", "sbx-audit", 0640, true);
	/* SQLite's write-ahead log and shared-memory index beside it: one
	 * left root-owned or read-only (by root running sbx-audit, a restore)
	 * makes every recorder fail to open the log */
	owned("audit-wal", STATE "/audit.db-wal", false, "_sbx", "sbx-audit", 0640, true);
	owned("audit-shm", STATE "/audit.db-shm", false, "_sbx", "sbx-audit", 0640, true);
	owned("public-key", SBX_SYSCONFDIR "/sbx/audit.pub", false, "root", NULL, 0644, false);
	/* exec'd as _sbxnet for [network] mode = allow, opened like a policy */
	owned("relay", SBX_LIBEXECDIR "/sbx/sbx-relay", false, "root", NULL, 0755, false);
	owned("recorder", SBX_RECORDER_PATH, false, "root", NULL, 0755, false);
	/* 0711: unreadable to the caller it runs as, hence not dumpable */
	owned("collector", SBX_COLLECTOR_PATH, false, "root", NULL, 0711, false);
	owned("signer", SBX_SIGNER_PATH, false, "root", NULL, 0755, false);
	check_exit(problems ? 1 : 0);
}
