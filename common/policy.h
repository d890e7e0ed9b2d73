/* SPDX-License-Identifier: ISC */
/*
 * Policies (SYSCONFDIR/sbx/policies.d/NAME.policy) and the global
 * configuration (SYSCONFDIR/sbx/sbx.conf), both INI files read with libinih.
 * Format and keys: ../shared/DESIGN.md "Policies" and sbx.policy(5).
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostport.h"

#define SBX_NAME_MAX 64          /* policy and language names */
#define SBX_MAX_PATHS 32         /* ro / rw binds per policy */
#define SBX_MAX_ENV 32
#define SBX_MAX_LANGS 16
#define SBX_MAX_ARGV 16
#define SBX_PATH_LEN 256
#define SBX_CGROUP_NEST_DEFAULT "/slurm /slurm_*" /* Slurm's task/cgroup (v1) layouts */
#define SBX_WITNESS_CMD_LEN 512 /* sbx.conf audit_witness_command, arguments included */
#define SBX_ERR_LEN 512
#define SBX_MAX_RUNS_PER_USER 32 /* default of max_runs_per_user in sbx.conf */
#define SBX_MAX_REQUESTS_PER_MINUTE 600 /* default of max_requests_per_minute */
#define SBX_AUDIT_CODE_PER_DAY (1024ULL << 20) /* default of audit_code_per_day: 1G */

/* Effective limits of one run. Units are in the field names; every field
 * is a row of the limits table (limit.h), which says its policy key,
 * JSON key, unit, default and bounds. */
struct sbx_limits {
	uint64_t wall_ms;         /* wall-clock timeout */
	uint64_t cpu_ms;          /* cgroup CPU time, RLIMIT_CPU as backstop */
	uint64_t memory_bytes;    /* cgroup memory, swap always 0 */
	uint64_t pids;            /* cgroup pids.max (tasks, threads included) */
	uint64_t cpus_milli;      /* CPU bandwidth quota, 1000 = one CPU */
	uint64_t tmp_bytes;       /* size of the /tmp tmpfs */
	uint64_t out_bytes;       /* size of the /out tmpfs */
	uint64_t output_bytes;    /* stdout+stderr captured; past it, output_action */
	uint64_t file_size_bytes; /* RLIMIT_FSIZE */
	uint64_t open_files;      /* RLIMIT_NOFILE */
	uint64_t max_attempts;    /* cap for the client's retry loop */
	uint64_t input_bytes;     /* input files under /in, all together (record field input_bytes) */
	uint64_t shm_bytes;       /* size of the /dev/shm tmpfs (POSIX shared memory, semaphores) */
	uint64_t output_action;   /* enum sbx_cap_action (limit.h) */
	uint64_t artifacts;       /* files returned from /out */
	uint64_t live_idle_ms; /* a live session with no call for this long is stopped */
	uint64_t live_lifetime_ms; /* a live session's whole wall-clock time */
	uint64_t workspace_bytes; /* the --workspace upper layer tmpfs; 0: no workspaces */
};

/* [network] mode; sbx_net_mode_name() is the one table of their names. */
enum sbx_net_mode { SBX_NET_NONE = 0, SBX_NET_LOOPBACK = 1, SBX_NET_ALLOW = 2 };
#define SBX_NET_MODES 3 /* how many */

#define SBX_EGRESS_MAX 16             /* [network] allow entries per policy */
#define SBX_EGRESS_CONNECTIONS_MAX 1024 /* largest [network] connections */

/* One [network] allow entry: a service the sandbox may reach. */
struct sbx_egress_rule {
	char host[SBX_HOST_MAX + 1]; /* DNS name (lower case) or address literal */
	uint16_t port;
	int line;                    /* of the allow key, for errors at run time */
};

/* [network] with mode = allow (sbx.policy(5)). */
struct sbx_egress {
	struct sbx_egress_rule allow[SBX_EGRESS_MAX];
	size_t n_allow;
	uint64_t connections; /* TCP connections per run, all services together */
	uint64_t bytes_out;   /* bytes sent to the services per run, all connections */
	uint64_t bytes_in;    /* bytes received from them per run */
	int mode_line;        /* lines of "mode" and of the first limit key, for errors */
	int limit_line;
};


enum sbx_seccomp_profile { SBX_SECCOMP_DEFAULT = 0, SBX_SECCOMP_STRICT = 1 };
#define SBX_SECCOMP_PROFILES 2 /* how many: one seccomp program per profile and network mode */

struct sbx_policy {
	char name[SBX_NAME_MAX + 1];
	char description[256];
	char users[512];   /* space-separated user names; empty: anyone in groups */
	char groups[512];  /* space-separated group names */
	struct sbx_limits limits;
	char ro[SBX_MAX_PATHS][SBX_PATH_LEN];
	size_t n_ro;
	char rw[SBX_MAX_PATHS][SBX_PATH_LEN];
	size_t n_rw;
	int sessions;               /* 1: sbx run --session may mount the caller's directory at /work */
	int workspaces;             /* 1 (default): sbx run --workspace may (sbx(1) WORKSPACES) */
	char image[SBX_NAME_MAX + 1]; /* [filesystem] image: sbx-image(8) name; "" = the host's /usr */
	enum sbx_net_mode net;
	struct sbx_egress egress;   /* mode = allow only */
	enum sbx_seccomp_profile seccomp;
	char env[SBX_MAX_ENV][256]; /* "KEY=VALUE" */
	size_t n_env;
	unsigned char sha256[32];   /* digest of the file as read */
};

#define SBX_MAX_LANG_ENV 8

struct sbx_language {
	char name[SBX_NAME_MAX + 1];
	char argv[SBX_MAX_ARGV][SBX_PATH_LEN]; /* interpreter command line; the code path is appended */
	size_t argc;
	char extension[16];                  /* default file name suffix, e.g. ".py" */
	char env[SBX_MAX_LANG_ENV][256];     /* "KEY=VALUE" defaults; a policy's [env] replaces them */
	size_t n_env;
	char search_path[256];               /* "VAR=DIR:DIR", put in front of the policy's VAR, or "" */
	char live_driver[SBX_PATH_LEN];      /* a live session's driver under /sbx (sbx.conf(5)), or "" */
};

struct sbx_config {
	char cgroup_root[SBX_PATH_LEN]; /* v2: delegated subtree; v1: name of the sbx/ subtree */
	char cgroup_nest[SBX_PATH_LEN]; /* v1 cgroup paths, space-separated, beneath which a caller's
					 * root-owned cgroup takes the run's (helper/cgcaller.c); "" = none */
	char default_policy[SBX_NAME_MAX + 1];
	char audit_origin[128];         /* origin line of signatures; default: host name */
	char audit_witness_dir[SBX_PATH_LEN]; /* each checkpoint also written here, or "" */
	char audit_witness_command[SBX_WITNESS_CMD_LEN]; /* each checkpoint on its stdin, or "" */
	uint64_t checkpoint_records;    /* obsolete, ignored: a checkpoint follows every run */
	uint64_t checkpoint_seconds;    /* obsolete, ignored */
	uint64_t max_runs_per_user;     /* sbx-helper processes one uid may have at once (runs, dry runs) */
	uint64_t max_requests_per_minute; /* requests one uid may make a minute; past it unrecorded */
	uint64_t audit_code_per_day;    /* bytes of code text one uid's runs may record a day */
	struct sbx_language langs[SBX_MAX_LANGS];
	size_t n_langs;
};

/* policy_net.c: one [network] key (line: where it is), or the checks once
 * the whole file is read. 0, or -1 with "key: why" in why. */
int sbx_network_key(struct sbx_policy *p, const char *name, const char *value, int line,
		    char *why, size_t whylen);
int sbx_network_finish(const struct sbx_policy *p, int *line, char *why, size_t whylen);

/* "none", "loopback", "allow"; NULL for anything else. */
const char *sbx_net_mode_name(int mode);

/* 1 if name matches [a-z0-9][a-z0-9_-]{0,63}, else 0. */
int sbx_valid_name(const char *name);

/* Defaults for a policy: the values of policies/default.policy. */
void sbx_policy_defaults(struct sbx_policy *p);

/*
 * Parse policy text (already read into memory; the caller does ownership
 * checks). `file` names the file in errors. On error returns -1 and writes
 * "FILE:LINE: why" into err.
 */
int sbx_policy_parse(const char *file, const char *text, size_t len,
		     struct sbx_policy *p, char *err, size_t errlen);

/* Same for sbx.conf. Sections: [sbx] (cgroup_root, default_policy,
 * audit_origin, checkpoint_records, checkpoint_seconds, max_runs_per_user) and
 * [language.NAME] (command, extension, env, search_path). */
int sbx_config_parse(const char *file, const char *text, size_t len,
		     struct sbx_config *c, char *err, size_t errlen);

/*
 * May `user` use policy p? Named users may; otherwise membership of one of
 * the policy's groups (in_group(name, ctx) answers for the caller); a
 * policy naming neither is open to everyone. Group sbx membership, which
 * every policy needs, is checked by the caller of this function.
 */
int sbx_policy_allows(const struct sbx_policy *p, const char *user,
		      int (*in_group)(const char *group, void *ctx), void *ctx);

const struct sbx_language *sbx_config_language(const struct sbx_config *c, const char *name);

/* Whether the cgroup path ("/slurm_vm/uid_1/job_2/step_0") lies at or
 * under one of list's space-separated fnmatch(3) patterns (sbx.conf
 * cgroup_nest): a pattern of k components matches the path's first k
 * components ("/slurm_*" matches the path above, "/slurm" does not). */
bool sbx_cgroup_nest_matches(const char *list, const char *path);

/*
 * Tighten-only merge: each nonzero field of `req` that is lower than the
 * policy's replaces it; a request above the policy is an error naming the
 * option, both values in the units a policy writes and the policy
 * ("--timeout 10m exceeds policy default's wall_time 30s"), so a caller
 * learns the cap instead of getting silently less. Returns 0 or -1 with
 * err set.
 */
int sbx_limits_tighten(struct sbx_limits *eff, const struct sbx_limits *req, const char *policy,
		       char *err, size_t errlen);

#endif
