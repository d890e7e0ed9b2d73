/* SPDX-License-Identifier: ISC */
/*
 * sbx-helper internals. The process tree of one run:
 *
 *   supervisor (root: ruid = euid = suid = 0, so the caller cannot signal,
 *   stop or ptrace it). Parses argv and root-owned files only; creates the
 *   cgroup, clones the sandbox, waits, kills, reads accounting, removes the
 *   cgroup.
 *    |- recorder (user _sbx, no capabilities): audit log, output capping and
 *    |  forwarding, traceback parsing, result JSON. Everything that parses or
 *    |  writes structured data runs here, never as root.
 *    |- sandbox init (pid 1 of new user, mount, net, pid, ipc, uts and cgroup
 *    |  namespaces; the caller's uid, no capabilities, seccomp filter)
 *    |   `- payload (the interpreter)
 *    `- artifact collector (the caller's uid, no capabilities, not dumpable),
 *       started only after every sandboxed process is dead.
 */
#ifndef SBX_HELPER_H
#define SBX_HELPER_H
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress.h"
#include "policy.h"
#include "proto.h"
#include "record.h"

#define HELPER_ERR_LEN 256

/* One --input-fd/--input-name pair: a sealed memfd the client filled. */
struct run_input {
	int fd;
	char name[65];
	uint64_t size;
	unsigned char sha256[32]; /* set by the recorder before START */
	bool hashed;              /* sha256 holds the whole file's digest */
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
	char code_name[65];
	int code_fd, result_fd, control_fd;
	int image_tree;         /* detached clone of the policy's image mount (image.c), or -1 */
	int stdin_fd;       /* --stdin-fd: sealed memfd, the payload's stdin; -1: /dev/null */
	struct sbx_limits request;  /* zero fields: not asked */
	char session[65];
	uint32_t attempt;
	char parent_id[SBX_ID_LEN + 1];
	struct run_input inputs[SBX_MAX_INPUTS];
	size_t n_inputs;
	int work_fd;        /* --work-fd, -1 if none; closed once work_tree is made */
	bool dry_run;       /* --dry-run: check and print, never run */
	struct egress_run egress; /* --allow, and the run's egress state (egress.h) */
	/* resolved */
	struct sbx_config conf;
	struct sbx_policy policy;
	struct sbx_limits limits;   /* effective */
	const struct sbx_language *lang;
	char *argv[SBX_MAX_ARGV + 2]; /* interpreter argv + code path, NULL-terminated */
	char code_path[128];
	char image_digest[72];  /* the image's content digest, "sha256:..."; "" without an image */
	char *code;
	size_t code_len;
	uint64_t inputs_bytes;  /* sum of the inputs' sizes, and stdin's */
	uint64_t stdin_size;    /* bytes of --stdin-fd */
	unsigned char stdin_sha256[32]; /* set by the recorder for START (stdin_hashed) */
	int work_tree;          /* detached copy of the session directory's mount (open_tree), or -1 */
	unsigned char code_sha256[32];
	char run_id[SBX_ID_LEN + 1];
	int64_t realtime_ns, boottime_ns;
	/* a failure before the sandbox ran; recorded as sandbox_error */
	char error[HELPER_ERR_LEN];
	bool policy_loaded;
	bool stdin_hashed;
	uid_t sbx_uid;       /* the recorder's account, _sbx */
	gid_t sbx_gid;
};

/* Facts the supervisor hands the recorder when the sandbox is gone. */
struct run_end {
	uint32_t magic;
	int32_t exit_code;        /* -1 if killed by a signal */
	int32_t signal;
	char outcome[16];
	char limit[16];
	uint64_t wall_ms, cpu_ms, memory_peak_bytes, pids_peak;
	char error[HELPER_ERR_LEN];
	uint8_t disk_full;        /* DISK_FULL_* bits: tmpfs left full at the payload's exit */
};
#define DISK_FULL_TMP 1u
#define DISK_FULL_OUT 2u
#define DISK_FULL_SHM 4u
#define RUN_END_MAGIC 0x53425845u

/* recorder -> supervisor messages (one byte each on the control socket) */
enum { REC_START_OK = 'S', REC_START_FAIL = 'F', REC_KILL_OUTPUT = 'O' };

/* sanitize.c */
void sanitize_process(int argc, char **argv);
void keep_fds(const int *fds, size_t n);
void reset_oom_score(void);
int raise_rlimits(char *err, size_t errlen);

/* args.c: parse argv into run; returns 0 or -1 with err set. */
int parse_args(int argc, char **argv, struct run *r, char *err, size_t errlen);

/* load.c */
int load_sbx_conf(struct sbx_config *conf, char *err, size_t errlen); /* sbx.conf only */
int load_config(struct run *r, char *err, size_t errlen);
int load_policy(struct run *r, char *err, size_t errlen);
int caller_may_use(const struct run *r, char *err, size_t errlen);
int read_code(struct run *r, char *err, size_t errlen);
/* Replace the control fd with our own non-blocking description of its pipe
 * (load.c says why); -1 with err if it is not a pipe. */
int own_control_fd(struct run *r, char *err, size_t errlen);
int lookup_caller(struct run *r, char *err, size_t errlen);

/* load.c: open a root-owned file not writable by others, walking from "/"
 * without following symlinks. fd, -1 (err set), -2 missing (err set). */
int open_trusted(const char *path, char *err, size_t errlen);
/* The same walk to a directory (last component included): an O_PATH fd. */
int open_trusted_dir(const char *path, char *err, size_t errlen);

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
const char *cgroup_fix_hint(void);
/* inputs.c: the caller's input files and session directory, checked as
 * root but only through the fds the client passed (never by path). */
int check_inputs(struct run *r, char *err, size_t errlen);
int check_work(struct run *r, char *err, size_t errlen);
int mount_inputs(const struct run *r, const char *dir, char *err, size_t errlen);
int mount_work(const struct run *r, const char *dir, char *err, size_t errlen);
/* the fds above, for keep_fds() and closing: returns how many went into fds */
size_t run_extra_fds(const struct run *r, int *fds, size_t max);
void close_run_extra_fds(struct run *r);

/* dryrun.c: print the effective set-up of a checked request on stdout. */
_Noreturn void dry_run_print(const struct run *r);

/* cgroup.c */
struct cgroup;
int cgroup_create(const struct sbx_config *c, const char *run_id, const struct sbx_limits *l,
		  struct cgroup **out, char *err, size_t errlen);
int cgroup_attach(struct cgroup *cg, pid_t pid, char *err, size_t errlen);
struct cgroup_usage {
	uint64_t cpu_ms, memory_peak_bytes, oom_kills, pids_max_hits, pids_peak;
};
int cgroup_usage(struct cgroup *cg, struct cgroup_usage *u);
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
int install_seccomp(const struct sbx_policy *p, char *err, size_t errlen);

/* recorder.c */
_Noreturn void recorder_main(struct run *r, int ctl, int out_r, int err_r, int art);

/* collector.c: runs as the caller, never returns. */
_Noreturn void collector_main(const struct run *r, int outdir, int art);

/* util.c */
int write_file(const char *path, const char *data, char *err, size_t errlen);
int write_all(int fd, const void *buf, size_t len);
ssize_t read_full(int fd, void *buf, size_t len);
void hex(const unsigned char *in, size_t n, char *out);
int send_fd(int sock, const void *buf, size_t len, int fd);
int recv_fd(int sock, void *buf, size_t len, int *fd);
int drop_to(uid_t uid, gid_t gid, char *err, size_t errlen);
_Noreturn __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warnx1(const char *fmt, ...);

#endif
