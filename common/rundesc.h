/* SPDX-License-Identifier: ISC */
/*
 * The run description: everything the supervisor knows about a run before
 * the sandbox starts, as one fixed-layout binary message (proto.h
 * SBX_REC_MSG_RUN) that it sends the recorder, and, with the dry run's
 * extras, the client (SBX_FRAME_DRY_RUN). Both ends are built from the same
 * tree; the header's magic, version and size say so, and every string is
 * checked to end inside its array before anything reads it. Nothing in here
 * comes from a file the caller chose: argv (validated), root-owned sbx.conf
 * and policy, the fds' sizes, the clocks.
 */
#ifndef SBX_RUNDESC_H
#define SBX_RUNDESC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_proto.h"
#include "outcome.h"
#include "policy.h"
#include "proto.h"
#include "hostport.h"
#include "runenv.h"

#define SBX_DESC_ERR_LEN 256
#define SBX_DESC_ARGV_LEN 1024 /* the record's argv field */
#define SBX_POLICY_TEXT_MAX (256u << 10) /* bytes of a policy file (helper/load.c) */

enum sbx_desc_flags {
	SBX_DESC_REFUSED = 1u << 0,  /* refused after the policy was loaded: error says why */
	SBX_DESC_WORK = 1u << 1,     /* a session directory is mounted at /work */
	SBX_DESC_SESSIONS = 1u << 2, /* the policy allows sessions */
	SBX_DESC_STDIN = 1u << 3,    /* --stdin-fd: stdin_bytes of standard input */
	SBX_DESC_CODE = 1u << 4,     /* with REFUSED: the code fd is the checked memfd (hash it, record no text) */
	SBX_DESC_NO_POLICY = 1u << 5, /* with REFUSED: refused before a policy was loaded (unknown
				       * language, policy missing or unreadable): one REFUSED record,
				       * policy and language are what the caller asked for */
	SBX_DESC_POLICY_TEXT = 1u << 6, /* the policy's text is at SBX_REC_FD_POLICY, policy_bytes long */
	SBX_DESC_LIVE = 1u << 7,     /* --live: a live session; SBX_REC_FD_STDIN is the call channel */
	SBX_DESC_WORKSPACE = 1u << 8, /* --workspace: /work is an overlay; the collector sends the changeset */
	SBX_DESC_APPLY = 1u << 9,    /* --apply: no run; the code fd is sbx apply's report: one APPLY record */
};

struct sbx_desc_input {
	char name[SBX_TOKEN_MAX + 1];
	uint64_t size; /* bytes */
};

struct sbx_run_desc {
	struct sbx_msg_hdr hdr;     /* SBX_REC_MSG_RUN, size = sizeof(struct sbx_run_desc) */
	uint32_t flags;             /* enum sbx_desc_flags */
	char run_id[SBX_ID_LEN + 1];
	int64_t realtime_ns, boottime_ns; /* when the run began */
	uint32_t uid, gid;          /* the caller */
	char user[65], group[65];
	char policy[SBX_NAME_MAX + 1];
	unsigned char policy_sha256[32];
	char language[SBX_NAME_MAX + 1];
	char code_path[128];        /* "/code/NAME" */
	uint64_t code_bytes;
	uint64_t policy_bytes;      /* with SBX_DESC_POLICY_TEXT: the size of the policy text */
	char argv[SBX_DESC_ARGV_LEN]; /* interpreter argv and code path, NUL-separated */
	uint32_t argv_len;
	struct sbx_limits limits;   /* effective */
	char session[SBX_TOKEN_MAX + 1];
	uint32_t attempt;
	char parent_id[SBX_ID_LEN + 1];
	uint32_t n_inputs;
	struct sbx_desc_input inputs[SBX_MAX_INPUTS];
	uint64_t inputs_bytes;      /* the inputs' sizes and stdin's */
	uint64_t stdin_bytes;
	uint32_t net;               /* enum sbx_net_mode */
	uint32_t seccomp;           /* enum sbx_seccomp_profile */
	char audit_origin[128];     /* sbx.conf; "" = host name */
	char witness_dir[SBX_PATH_LEN];         /* sbx.conf audit_witness_dir, or "" */
	char witness_command[SBX_WITNESS_CMD_LEN]; /* sbx.conf audit_witness_command, or "" */
	char image[SBX_NAME_MAX + 1]; /* the policy's image (sbx-image(8)); "" = the host's /usr */
	char image_digest[72];      /* its tree digest as the supervisor checked it, "sha256:HEX" */
	char error[SBX_DESC_ERR_LEN]; /* with SBX_DESC_REFUSED: why, never "" */
	uint64_t work_dev, work_ino; /* with SBX_DESC_WORK: the session directory (st_dev, st_ino) */
	uint64_t ws_dev, ws_ino;     /* with SBX_DESC_WORKSPACE: the workspace directory (st_dev, st_ino) */
	uint64_t unrecorded_refusals; /* the user's requests refused unrecorded since boot */
	/* the caller's allocation (helper/cgcaller.c): bits 1ULL << SBX_LIMIT_x
	 * of the limits its cgroups lowered below the policy's and request's
	 * (limits holds the result), and the v1 controllers whose run cgroup
	 * was created beneath the caller's ("memory cpuacct freezer"; "") */
	uint64_t alloc_tightened;
	char alloc_nested[64];
	/* [network]: the mode, the effective allow list, the pairs sbx-relay
	 * resolved (checked by the supervisor) and the limits, for START,
	 * checking the relay's report and END (recorder/egress_record.c) */
	struct sbx_egress_facts egress;
};

/* What --dry-run shows beyond the run description. */
enum sbx_bind_state { SBX_BIND_OK = 0, SBX_BIND_MISSING = 1, SBX_BIND_SYMLINK = 2 };
struct sbx_dry_bind {
	char path[SBX_PATH_LEN];
	uint8_t rw;    /* 1: read-write bind */
	uint8_t state; /* enum sbx_bind_state, as lstat(2) saw it as root */
};
struct sbx_dry_allow {
	char host[SBX_HOST_MAX + 1];
	uint16_t port;
};
struct sbx_dry_run {
	struct sbx_run_desc run;    /* hdr.type SBX_REC_MSG_RUN, hdr.size = sizeof(struct sbx_dry_run) */
	uint32_t n_binds;
	struct sbx_dry_bind binds[2 * SBX_MAX_PATHS];
	uint32_t n_env;
	char env[SBX_RUNENV_MAX][SBX_RUNENV_LEN]; /* the payload's environment (runenv.h) */
	uint32_t cpus;              /* CPUs the run may use (the affinity mask's size) */
	char cpu_list[256];         /* "0,1", or "" when no mask is set */
	uint64_t tmp_inodes, shm_inodes, out_inodes; /* nr_inodes of the writable tmpfs */
	/* [network] mode = allow: the policy's services and per-run caps */
	uint32_t n_allow;
	struct sbx_dry_allow allow[SBX_EGRESS_MAX];
	uint64_t net_connections, net_bytes_out, net_bytes_in;
};

/* How the run ended, supervisor -> recorder (SBX_REC_MSG_END). */
struct sbx_run_end {
	struct sbx_msg_hdr hdr;
	int32_t exit_code;        /* -1 if killed by a signal */
	int32_t signal;
	uint32_t outcome;         /* enum sbx_outcome */
	int32_t limit;            /* enum sbx_limit that fired, or SBX_LIMIT_NONE */
	uint64_t wall_ms, cpu_ms, memory_peak_bytes, pids_peak;
	char error[SBX_DESC_ERR_LEN];
	char error_code[24];      /* with outcome sandbox_error: the error-code table's
				   * code (errcode.h), "" = setup */
	uint8_t disk_full;        /* SBX_DISK_FULL_* bits: tmpfs left full at the payload's exit */
};
#define SBX_DISK_FULL_TMP 1u
#define SBX_DISK_FULL_OUT 2u
#define SBX_DISK_FULL_SHM 4u

/* A live session's cgroup, supervisor -> recorder (SBX_REC_MSG_CGROUP),
 * once, after START, with two descriptors in SCM_RIGHTS that the
 * supervisor opened read-only in the session's memory cgroup (whose
 * directory only root may enter): its current use and its peak
 * (memory.usage_in_bytes and memory.max_usage_in_bytes on v1,
 * memory.current and memory.peak on v2). The recorder (_sbx) preads them
 * for session ls and each call's END. */
struct sbx_live_cgroup {
	struct sbx_msg_hdr hdr;
	uint32_t v2;
};
/* The same check for it. */
int sbx_live_cgroup_check(const void *buf, size_t n, char *err, size_t errlen);

/* Fill a message header. */
void sbx_msg_hdr_init(struct sbx_msg_hdr *h, enum sbx_rec_msg type, size_t size);

/*
 * Check a received run description of n bytes (want: sizeof(struct
 * sbx_run_desc), or sizeof(struct sbx_dry_run) with dry): header, sizes,
 * counts, every string NUL-terminated in its array, argv NUL-separated.
 * Returns 0, or -1 with err set.
 */
int sbx_run_desc_check(const void *buf, size_t n, bool dry, char *err, size_t errlen);

/* The same for a run end (outcome and limit in their tables' range). */
int sbx_run_end_check(const void *buf, size_t n, char *err, size_t errlen);

/* Append s and its NUL to d's argv; -1 when it does not fit. */
int sbx_run_desc_add_arg(struct sbx_run_desc *d, const char *s);

#endif
