/* SPDX-License-Identifier: ISC */
/*
 * sbx-helper internals. The process tree of one run (sbx-helper(8),
 * HACKING.md):
 *
 *   supervisor (root: ruid = euid = suid = 0, so the caller cannot signal,
 *   stop or ptrace it). Parses argv and root-owned files only; creates the
 *   cgroup, clones the sandbox, maps ids, waits, kills, reads accounting,
 *   classifies the outcome, removes the cgroup. Links no SQLite, jansson or
 *   libsodium (make check-linkage).
 *    |- recorder: a child that becomes _sbx (no capabilities, no_new_privs)
 *    |  and execs sbx-recorder (recorder/): a fresh address space, nothing
 *    |  of root's heap. Audit log, output frames, traceback, result JSON.
 *    |  What it knows of the run is one message (rundesc.h, proto.h).
 *    |- sandbox init (pid 1 of new user, mount, net, pid, ipc, uts and cgroup
 *    |  namespaces; the caller's uid, no capabilities, seccomp filter)
 *    |   `- payload (the interpreter)
 *    |   `- sbx-signer: the recorder's child, exec'd as _sbxsign (signer/)
 *    `- artifact collector: a child that becomes the caller (no
 *       capabilities, no_new_privs) and execs sbx-collector (collector/),
 *       root's 0711 file, so not dumpable; started only after every
 *       sandboxed process is dead; copies /out and the changeset.
 */
#ifndef SBX_HELPER_H
#define SBX_HELPER_H
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "egress.h"
#include "policy.h"
#include "proto.h"
#include "rundesc.h"
#include "fdio.h"
#include "paths.h"

#define HELPER_ERR_LEN 256
/* Open files the helper's processes need at once, at most: the recorder
 * holds every artifact's memfd and every input until the result is sent,
 * plus the log, its sockets and pipes. Below this hard RLIMIT_NOFILE a run
 * is refused (rlimits.c): files would be dropped. */
#define HELPER_NOFILE (SBX_MAX_ARTIFACTS + SBX_MAX_INPUTS + 64)
/* RLIMIT_NPROC for the helper's processes where root may not raise it to
 * unlimited (no CAP_SYS_RESOURCE): the kernel counts every process of the
 * shared uids _sbx, _sbxsign and _sbxnet, every user's runs together,
 * against the limit the caller brought in (execve(2) EAGAIN after
 * setresuid, fork(2)). 4096 covers 128 users at the default
 * max_runs_per_user (32) with one recorder, signer and relay each; below
 * this hard limit a run is refused (rlimits.c), else another user's runs
 * would decide whether this one's recorder starts. */
#define HELPER_NPROC 4096
/* How long a privileged process waits for a process the caller can
 * influence to die of SIGKILL (ms): one in a frozen cgroup v1 freezer of
 * the caller's does not until it is thawed, so no wait is longer. */
#define HELPER_REAP_MS 5000

/* Compiled in, never from argv or the environment; the hooked test helper
 * execs the hooked test recorder (testhook.h). */
#ifdef SBX_TEST_HOOKS
#define SBX_RECORDER_PATH SBX_LIBEXECDIR "/sbx/sbx-recorder-hooked"
#define SBX_COLLECTOR_PATH SBX_LIBEXECDIR "/sbx/sbx-collector-hooked"
#else
#define SBX_RECORDER_PATH SBX_LIBEXECDIR "/sbx/sbx-recorder"
#define SBX_COLLECTOR_PATH SBX_LIBEXECDIR "/sbx/sbx-collector"
#endif
/* sbx-signer, exec'd as _sbxsign with the recorder's signing socket */
#define SBX_SIGNER_PATH SBX_LIBEXECDIR "/sbx/sbx-signer"

/* One --input-fd/--input-name pair: a sealed memfd the client filled. */
struct run_input {
	int fd;
	char name[65];
	uint64_t size;
};

/* Everything known about one run before the sandbox starts. Filled by the
 * supervisor, inherited by the recorder through fork(). */
struct run {
	/* caller */
	uid_t uid;
	gid_t gid;
	char user[65];
	char group[65];
	/* request (argv) */
	char policy_name[SBX_NAME_MAX + 1];
	char lang_name[SBX_NAME_MAX + 1];
	char code_name[SBX_TOKEN_MAX + 1];
	int code_fd, result_fd;
	int slot_fd;        /* this run's slot of max_runs_per_user (slots.c), never closed */
	int ws_tree;        /* --workspace: detached read-only clone of ws_fd's mount (open_tree), or -1 */
	uint64_t unrecorded_refusals; /* this user's requests refused unrecorded since boot (quota.c) */
	uint64_t alloc_tightened;     /* bits 1ULL << SBX_LIMIT_x lowered by the caller's cgroups (cgcaller.c) */
	char alloc_nested[64];        /* v1 controllers whose run cgroup is beneath the caller's */
	uint64_t work_dev, work_ino; /* the session directory's identity (check_work), for START */
	uint64_t ws_dev, ws_ino;     /* the workspace's (check_workspace), for START */
	int image_tree;         /* detached clone of the policy's image mount (image.c), or -1 */
	/* the policy's ro and rw paths, opened by the supervisor (mounts.c
	 * open_policy_paths): an O_PATH fd, or SRC_MISSING, SRC_SYMLINK, SRC_NONE */
	int ro_fd[SBX_MAX_PATHS], rw_fd[SBX_MAX_PATHS];
	int stdin_fd;       /* --stdin-fd: sealed memfd, the payload's stdin; -1: /dev/null */
	struct sbx_limits request;  /* zero fields: not asked */
	char session[65];
	uint32_t attempt;
	char parent_id[SBX_ID_LEN + 1];
	struct run_input inputs[SBX_MAX_INPUTS];
	size_t n_inputs;
	int work_fd;        /* --work-fd, -1 if none; closed once work_tree is made */
	int ws_fd;          /* --workspace-fd: the caller's directory, kept for the collector (the
	                     * overlay's lower layer is ws_tree, its read-only clone), or -1 */
	int cs_fd;          /* --changeset-fd: the caller's empty directory the collector writes
	                     * the changeset into, as the caller, or -1 */
	bool dry_run;       /* --dry-run: check and print, never run */
	bool apply;         /* --apply: record sbx apply's report (code fd) as one APPLY record */
	bool live;          /* --live: a live session (sbx(1) SESSIONS): the payload is the
	                     * session's driver, its stdin the recorder's call channel, the
	                     * wall-clock deadline live_lifetime; wall_time and cpu_time
	                     * are per call (the driver and the recorder) */
	bool code_checked;  /* check_code passed: a refused run's code is hashed, never recorded */
	struct egress_run egress; /* --allow, and the run's egress state (egress.h) */
	/* resolved */
	struct sbx_config conf;
	struct sbx_policy policy;
	struct sbx_limits limits;   /* effective */
	struct rlimit caller_rlimits[RLIMIT_NLIMITS]; /* as the caller's execve(2) left them */
	const struct sbx_language *lang;
	const char *error_code; /* when refused: its code (common/errcode.c), NULL = setup */
	char *argv[SBX_MAX_ARGV + 2]; /* interpreter argv + code path, NULL-terminated */
	char code_path[128];
	char image_digest[72];  /* the image's content digest, "sha256:..."; "" without an image */
	uint64_t code_len;      /* bytes in the code memfd (never read by root) */
	uint64_t inputs_bytes;  /* sum of the inputs' sizes, and stdin's */
	uint64_t stdin_size;    /* bytes of --stdin-fd */
	int work_tree;          /* detached copy of the session directory's mount (open_tree), or -1 */
	char run_id[SBX_ID_LEN + 1];
	int64_t realtime_ns, boottime_ns;
	/* refused after the policy was loaded: recorded as sandbox_error */
	bool refused;
	char error[HELPER_ERR_LEN]; /* why, when refused */
	bool policy_loaded; /* false when refused: the request is one REFUSED record */
	int policy_fd;      /* load_policy's sealed memfd of the text, or -1 */
	size_t policy_len;
	bool stdin_hashed;
	uid_t sbx_uid;       /* the recorder's account, _sbx */
	gid_t sbx_gid;
	uid_t sign_uid;      /* sbx-signer's account, _sbxsign */
	gid_t sign_gid;
};

/* sanitize.c */
void sanitize_process(int argc, char **argv);
void keep_fds(const int *fds, size_t n);
void reset_oom_score(void);

/* rlimits.c: save the caller's limits (all of them) and raise the helper's
 * own; -1 with one line in err when a hard limit is too low for sbx and
 * cannot be raised. payload_rlimit: the payload's limit for resource res,
 * from the policy and the caller's original (never above the latter's
 * hard limit); payload_rlimits sets all of them (-1 with err). */
int raise_rlimits(struct rlimit caller[RLIMIT_NLIMITS], char *err, size_t errlen);
void payload_rlimit(int res, const struct rlimit *caller, const struct sbx_limits *l, struct rlimit *out);
int payload_rlimits(const struct rlimit caller[RLIMIT_NLIMITS], const struct sbx_limits *l, char *err,
		    size_t errlen);

/* args.c: parse argv into run; returns 0 or -1 with err set. */
int parse_args(int argc, char **argv, struct run *r, char *err, size_t errlen);

/* load.c */
int load_sbx_conf(struct sbx_config *conf, char *err, size_t errlen); /* sbx.conf only */
int load_config(struct run *r, char *err, size_t errlen);
/* --lang in sbx.conf's languages: 0, or -1 with err naming the ones there are. */
int resolve_language(struct run *r, char *err, size_t errlen);
/* On success the text is also in r->policy_fd (a sealed memfd of
 * r->policy_len bytes) for the recorder (proto.h SBX_REC_FD_POLICY).
 * Returns 0; -2 when the policy does not exist (refused with the same
 * words and exit status as a policy that does not allow the caller, so that
 * asking tells nothing: escape 05); -1 on another error (set-up, 125). */
int load_policy(struct run *r, char *err, size_t errlen);
int caller_may_use(const struct run *r, char *err, size_t errlen);
/* --attempt within the policy's max_attempts; -1 with err. */
int check_attempt(const struct run *r, char *err, size_t errlen);
/* The code fd: a sealed memfd of at most SBX_CODE_MAX bytes (never read
 * here). 0, or -1 with err. */
int check_code(struct run *r, char *err, size_t errlen);
/* The result socket: AF_UNIX, SOCK_STREAM. 0, or -1 with err. */
int check_result_socket(const struct run *r, char *err, size_t errlen);
int lookup_caller(struct run *r, char *err, size_t errlen);

/* load.c: open a root-owned file not writable by others, walking from "/"
 * without following symlinks. fd, -1 (err set), -2 missing (err set). */
int open_trusted(const char *path, char *err, size_t errlen);
int open_trusted_dir(const char *path, char *err, size_t errlen);

/* slots.c: hold one of the max run slots of uid (user names it in the
 * message) for the life of this process and its children: the lock's fd,
 * or -1 with one line in err (all taken, or the lock files unusable). */
int take_run_slot(uid_t uid, const char *user, uint64_t max, char *err, size_t errlen);
/* The user's audit-log bounds (quota.c, sbx.conf(5)), on r->slot_fd:
 * quota_request counts this request against max_requests_per_minute
 * (-1 past it: refuse unrecorded); quota_code charges r->code_len to
 * audit_code_per_day (-1 past it: refuse, recorded by size). */
int quota_request(struct run *r, char *err, size_t errlen);
int quota_code(struct run *r, char *err, size_t errlen);

/* mounts.c: the policy's ro and rw paths, opened as root in the host's
 * user namespace before the sandbox is cloned, where owners are the real
 * ones (inside, root and nobody both read as the overflow uid): each
 * component without following a symbolic link, in a directory everyone
 * may write only an entry of root's or the caller's. 0, or -1 with one
 * line in err naming the path and why. */
#define SRC_NONE (-1)    /* not opened: an image provides it, or not yet */
#define SRC_MISSING (-2) /* a component does not exist: skipped, sbx.policy(5) */
#define SRC_SYMLINK (-3) /* the path is a symbolic link: replicated inside */
int open_policy_paths(struct run *r, char *err, size_t errlen);

/* image.c: the policy's image (sbx-image(8)). In the supervisor, as root:
 * check it and clone its mount (r->image_tree); 0 without an image key. In
 * the sandbox child: bind the image's system paths into newroot. */
int image_open(struct run *r, char *err, size_t errlen);
int image_bind(const struct run *r, const char *newroot, char *err, size_t errlen);
/* true if path is taken from the image, not bound from the host */
bool image_provides(const struct run *r, const char *path);
void image_close(struct run *r);

/* cgplace.c: the directory under which run cgroups go, and whether it is
 * cgroup v2. -1 with one actionable line in err when there is none. */
int cgroup_place(const struct sbx_config *c, char *root, size_t len, bool *v2, char *err, size_t errlen);
const char *cgroup_marker_path(void);
/* cgroup.c: ROOT/sbx with memory, pids and cpu enabled on the way, its
 * path in sbx; -1 with one line in err. */
int cgroup_v2_sbx_dir(const char *root, char *sbx, size_t len, char *err, size_t errlen);
/* cgleave.c: move this process out of every cgroup the caller (or anyone
 * but root) may write to; -1 with err. Called before anything else. */
int cgroup_leave_caller(const struct sbx_config *c, char *err, size_t errlen);
/* The caller's cgroup in the hierarchy of controller ctrl ("memory"; ""
 * for the v2 hierarchy) as the kernel listed it before cgroup_leave_caller
 * moved this process, or NULL if it is not known. *hier: that hierarchy's
 * directory under the v1 mount ("cpu,cpuacct"; "unified" for v2). Who
 * owns its files is checked by each user (cgcaller.c), through the fds
 * it walks. */
const char *cgroup_caller_path(const char *ctrl, const char **hier);
/* Whether every control file of the cgroup open as dfd (and, with
 * dir_too, the directory itself) is root's alone: owned by root, writable
 * by no other user or group. Child cgroups are not looked at. */
bool cgroup_files_root_only(int dfd, bool dir_too);
/* cgcaller.c: the caller's allocation (issue 21). Lower l's memory, pids
 * and cpus to the tightest limit on the caller's cgroup path; *tightened
 * gets the bit (1ULL << SBX_LIMIT_x) of every limit lowered. 0, or -1 with
 * err set when a level of that path is gone (fail closed: the limits below
 * it are unknown). */
int cgroup_caller_cap(const struct sbx_config *c, struct sbx_limits *l, uint64_t *tightened, char *err,
		      size_t errlen);
/* The caller's cgroup in v1 controller ctrl, open (O_RDONLY|O_DIRECTORY),
 * when the run's cgroup goes beneath it: under one of sbx.conf's
 * cgroup_nest patterns, and every control file from the hierarchy's root
 * down to it root's alone (its directories may be the caller's: Slurm
 * chowns a step's). Else -1. *path: the caller's cgroup path. */
int cgroup_nest_open(const struct sbx_config *c, const char *ctrl, const char **path);
/* The controllers whose run cgroup goes beneath the caller's, space-separated. */
void cgroup_nest_names(const struct sbx_config *c, char *out, size_t len);
const char *cgroup_fix_hint(void);
/* inputs.c: the caller's input files and session directory, checked as
 * root but only through the fds the client passed (never by path). */
int check_inputs(struct run *r, char *err, size_t errlen);
int check_work(struct run *r, char *err, size_t errlen);
int mount_inputs(const struct run *r, const char *dir, char *err, size_t errlen);
/* Copy size bytes of the sealed memfd src to a new file path (mode 0444). */
int copy_memfd(int src, uint64_t size, const char *path);
int mount_work(const struct run *r, const char *dir, char *err, size_t errlen);
bool session_fs(long type);
/* workspace.c: --workspace (docs/workspace.md). check_workspace in the
 * supervisor: the caller's directory fd checked and cloned read-only
 * (ws_tree); mount_workspace in the sandbox child: the overlay on dir,
 * on root's /work, the upper layer's O_PATH fd in *upper (-1 without
 * a workspace). */
int check_workspace(struct run *r, char *err, size_t errlen);
int mount_workspace(const struct run *r, const char *root, int *upper, char *err, size_t errlen);
extern int sandbox_ws_upper; /* the sandbox child's upper-layer fd, for the supervisor */
/* the code, input and session fds, for keep_fds() and closing: returns how
 * many went into fds (at most RUN_EXTRA_FDS) */
#define RUN_EXTRA_FDS (SBX_MAX_INPUTS + 6 + 2 * SBX_MAX_PATHS)
size_t run_extra_fds(const struct run *r, int *fds, size_t max);
void close_run_extra_fds(struct run *r);

/* describe.c: the run description the recorder gets (rundesc.h), and
 * --dry-run's answer, one SBX_FRAME_DRY_RUN frame, then exit 0. */
void describe_run(const struct run *r, struct sbx_run_desc *d);
_Noreturn void dry_run_send(const struct run *r);

/* cgroup.c */
struct cgroup;
/* nested: the controllers START said the run is nested in (run.alloc_nested),
 * checked against what is found now; NULL: not checked (sbx-helper --check). */
int cgroup_create(const struct sbx_config *c, const char *run_id, const struct sbx_limits *l,
		  const char *nested, struct cgroup **out, char *err, size_t errlen);
int cgroup_attach(struct cgroup *cg, pid_t pid, char *err, size_t errlen);
/* The cheap ways in (cgroup.c): on v2 an fd of the run's directory for
 * clone3(2)'s CLONE_INTO_CGROUP, -1 on v1; on v1 the "tasks" files of
 * the run's hierarchies, open for writing, for the sandbox to join them
 * itself (cgroup_join_self); 0 on v2. -1 with err on failure. */
int cgroup_clone_fd(struct cgroup *cg, char *err, size_t errlen);
#define CGROUP_MAX_TASKS 5
int cgroup_tasks_fds(struct cgroup *cg, int fds[CGROUP_MAX_TASKS], char *err, size_t errlen);
int cgroup_join_self(const int *fds, int n, char *err, size_t errlen);
struct cgroup_usage {
	uint64_t cpu_ms, memory_peak_bytes, oom_kills, pids_max_hits, pids_peak;
};
int cgroup_usage(struct cgroup *cg, struct cgroup_usage *u);
/* The run's memory usage file, or with peak its high-water mark (v1
 * memory.usage_in_bytes / max_usage_in_bytes, v2 memory.current / peak),
 * opened read-only through the directory fd this supervisor holds, never
 * by a path the caller could have swapped: the fd, or -1. */
int cgroup_open_memory(const struct cgroup *cg, bool peak, bool *v2);
void cgroup_kill(struct cgroup *cg);
int cgroup_destroy(struct cgroup *cg);

/* check.c: `sbx-helper --check`: print the root-side facts of this host
 * and install, one "ok: NAME: ..." or "problem: NAME: ...; fix: ..." line
 * each, and exit 0 (all ok) or 1. Runs no payload. */
_Noreturn void check_main(void);

/* sandbox.c: runs in the cloned child, never returns. */
struct sandbox_fds {
	int sync;         /* socket to the supervisor */
	int out_w, err_w; /* payload stdout/stderr */
	int cg_tasks[CGROUP_MAX_TASKS]; /* v1: the run's "tasks" files (cgroup_tasks_fds) */
	int n_cg_tasks;
};
_Noreturn void sandbox_main(const struct run *r, const struct sandbox_fds *f);

/* mounts.c: build the new root and pivot into it. */
int setup_mounts(const struct run *r, char *err, size_t errlen);
/* Create the new root's directories for path (the last one an empty file
 * with as_file), never through a symlink. */
int make_path(const char *path, bool as_file, char *err, size_t errlen);
/* mounts.c: the inode cap (nr_inodes) of a writable tmpfs of size bytes. */
unsigned long long tmpfs_inodes(uint64_t size);

/* cpus.c: fill set with the CPUs run r may use (ceil of its cpus limit,
 * at most those of the helper's own affinity mask) and return how many;
 * set stays empty when the mask cannot be read (the count is then
 * ceil(cpus) and only the cgroup quota applies). Deterministic in the run
 * id, so a dry run shows the same. */
#include <sched.h>
unsigned run_cpu_set(const struct run *r, cpu_set_t *set);

/* seccomp.c */
/* One precompiled program (seccomp/gen.c): len instructions; listener:
 * it returns SECCOMP_RET_USER_NOTIF, so it is loaded with a listener. */
struct sock_filter;
struct sbx_bpf {
	const struct sock_filter *insns;
	unsigned short len;
	bool listener;
};
/* The program of p's seccomp profile and network mode, NULL if either is
 * out of range. */
const struct sbx_bpf *seccomp_program(const struct sbx_policy *p);
/* Load it into the calling thread (seccomp(2) SECCOMP_SET_MODE_FILTER,
 * after no_new_privs); *listener: the notification descriptor of a
 * program that has one (network mode allow), else -1. -1 with err set. */
int install_seccomp(const struct sbx_policy *p, int *listener, char *err, size_t errlen);

/* collexec.c: in the supervisor's child, as root: become the caller and
 * exec sbx-collector (exe, from open_trusted) with /out's fd, the upper
 * layer's and art (common/proto.h enum sbx_collector_fd); outdir or upper
 * may be -1 (nothing to collect there). Never returns. */
/*
 * In a forked child, still root: src[i] at fd first+i (a negative src[i]
 * leaves that number closed), exe at first+n close-on-exec, 0-2 on
 * /dev/null, nothing else open (the hooked build keeps its two hook fds
 * when keep_hooks), drop_to(uid, gid), execveat(exe, argv, empty
 * environment). Never returns: any failure is _exit(SBX_EXIT_FAILURE),
 * which the parent sees as the program missing (helper/dropexec.c).
 */
_Noreturn void exec_dropped(uid_t uid, gid_t gid, int exe, const int *src, size_t n, int first,
			    char *const argv[], bool keep_hooks);
_Noreturn void collector_exec(const struct run *r, int exe, int outdir, int upper, int art);

/* util.c */
int write_file(const char *path, const char *data, char *err, size_t errlen);
int drop_to(uid_t uid, gid_t gid, char *err, size_t errlen);
int new_session_keyring(const char *name, char *err, size_t errlen);
/* Reap child pid within timeout_ms: its wait status, or -1 when it had
 * not exited by then; it is then sent SIGKILL and waited for at most
 * HELPER_REAP_MS more, never longer (it may be frozen, docs/threat-model.md
 * row 28). */
int wait_timeout(pid_t pid, int timeout_ms);

/*
 * msg.c: the helper's own messages ("sbx-helper: why", one line). Before
 * the result socket is checked they go to the caller's fd 2 through a
 * short-lived child running as the caller (never a write by root); after,
 * as SBX_FRAME_MESSAGE frames, sent without blocking (a client that does
 * not read within a second loses them). While the recorder runs it owns
 * the socket: messages wait until msg_release().
 */
void msg_init(void);             /* first thing in main(): remembers the caller's ids */
void msg_caller_ids(uid_t *uid, gid_t *gid); /* those ids (--check runs as root by then) */
void msg_use_socket(int sock);   /* the checked result socket */
void msg_hold(void);             /* the recorder writes the socket now */
void msg_release(void);          /* the recorder is gone: send what waited */
/* Send one frame on the result socket without blocking, waiting at most
 * timeout_ms for room; 0, or -1 (client gone or not reading). */
int msg_frame(uint32_t type, const void *data, size_t len, int timeout_ms);
/* Write n bytes to the caller's fd from a child that has become the
 * caller, waiting for it at most a second. */
void msg_as_caller(int fd, const void *buf, size_t n);
_Noreturn __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...);
/* The same with another exit status (SBX_EXIT_AUDIT: the audit log failed). */
_Noreturn __attribute__((format(printf, 2, 3))) void die_status(int status, const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warnx1(const char *fmt, ...);

#endif
