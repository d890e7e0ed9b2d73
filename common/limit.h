/* SPDX-License-Identifier: ISC */
/*
 * The limits: one table (SBX_LIMITS below) from which every consumer
 * derives what it needs: the policy parser and its defaults, the
 * tighten-only merge and its messages, the result's and `sbx-audit show
 * --json`'s "limits" object (auditlog/limitjson.c), `sbx policies`, the
 * dry run, the client's error messages, the man page check
 * (tests/unit/test_vocab.c). Adding a limit is one row here, its field in
 * struct sbx_limits (policy.h) and its enforcement.
 */
#ifndef SBX_LIMIT_H
#define SBX_LIMIT_H
#include <stddef.h>
#include <stdint.h>

/* How a limit is written in a policy and read by people. */
enum sbx_unit {
	SBX_UNIT_MS,        /* a duration: "30s", "500ms", "2m"; stored in ms */
	SBX_UNIT_BYTES,     /* a size: "512M", "64K"; stored in bytes */
	SBX_UNIT_COUNT,     /* a whole number */
	SBX_UNIT_MILLICPU,  /* a CPU count with up to 3 decimals: "1", "0.5"; stored in thousandths */
	SBX_UNIT_ACTION,    /* what sbx does at a cap: "kill" or "truncate" (enum sbx_cap_action) */
};

/* The values of an SBX_UNIT_ACTION row, ordered like every limit: the
 * smaller is the stricter (a request may choose kill under a policy's
 * truncate, never the reverse). */
enum sbx_cap_action {
	SBX_ACTION_KILL = 1,     /* stop the run */
	SBX_ACTION_TRUNCATE = 2, /* keep the head and the tail, count and discard the rest, go on */
};

/*
 * X(SYMBOL, policy key, unit, JSON key, struct sbx_limits field, default,
 *   largest value, what (for messages: "the <what> of 30s"), man page
 *   summary, the sbx(1) option that asks for it or NULL: a refusal names
 *   what the caller typed, "--timeout 10m exceeds policy P's wall_time 30s"). The JSON key is the same in the result, `sbx policies
 *   --json`, the dry run and `sbx-audit show --json`.
 */
#define SBX_LIMITS(X)                                                                                      \
	X(WALL_TIME, "wall_time", SBX_UNIT_MS, "wall_time_ms", wall_ms, 30000, UINT64_MAX,                 \
	  "wall-time limit", "wall-clock time of the run; SIGINT, then SIGKILL 500 ms later", "--timeout") \
	X(CPU_TIME, "cpu_time", SBX_UNIT_MS, "cpu_time_ms", cpu_ms, 30000, UINT64_MAX,                     \
	  "CPU-time limit", "CPU time of the whole sandbox (cgroup; RLIMIT_CPU as a backstop)", NULL)      \
	X(MEMORY, "memory", SBX_UNIT_BYTES, "memory_bytes", memory_bytes, 512ULL << 20, UINT64_MAX,        \
	  "memory limit", "memory of the cgroup, swap always 0", "--memory")                               \
	X(PIDS, "pids", SBX_UNIT_COUNT, "pids", pids, 64, 1ULL << 22, "process limit",                     \
	  "processes and threads of the cgroup", "--pids")                                                 \
	X(CPUS, "cpus", SBX_UNIT_MILLICPU, "cpus", cpus_milli, 1000, 1024000, "CPU quota",                 \
	  "CPU bandwidth, in CPUs", NULL)                                                                  \
	X(TMP_SIZE, "tmp_size", SBX_UNIT_BYTES, "tmp_bytes", tmp_bytes, 64ULL << 20, UINT64_MAX,           \
	  "/tmp size", "size of the /tmp tmpfs", NULL)                                                     \
	X(OUT_SIZE, "out_size", SBX_UNIT_BYTES, "out_bytes", out_bytes, 64ULL << 20, UINT64_MAX,           \
	  "/out size", "size of the /out tmpfs and of the artifacts together", NULL)                       \
	X(SHM_SIZE, "shm_size", SBX_UNIT_BYTES, "shm_bytes", shm_bytes, 64ULL << 20, UINT64_MAX,           \
	  "/dev/shm size", "size of the /dev/shm tmpfs (POSIX shared memory, semaphores)", NULL)           \
	X(WORKSPACE_SIZE, "workspace_size", SBX_UNIT_BYTES, "workspace_bytes", workspace_bytes,           \
	  64ULL << 20, UINT64_MAX, "workspace size",                                                       \
	  "size of the tmpfs upper layer of --workspace (the changes together); 0: no workspaces", NULL)   \
	X(INPUT_SIZE, "input_size", SBX_UNIT_BYTES, "input_bytes", input_bytes, 64ULL << 20,               \
	  16ULL << 30, "input size limit", "input files under /in together", "--input (together)")         \
	X(OUTPUT, "output", SBX_UNIT_BYTES, "output_bytes", output_bytes, 1ULL << 20, UINT64_MAX,          \
	  "output limit", "standard output and standard error captured together", NULL)                    \
	X(OUTPUT_ACTION, "output_action", SBX_UNIT_ACTION, "output_action", output_action,                 \
	  SBX_ACTION_TRUNCATE, SBX_ACTION_TRUNCATE, "output action",                                       \
	  "past the output limit: truncate (keep head and tail, go on) or kill", NULL)                     \
	X(ARTIFACTS, "artifacts", SBX_UNIT_COUNT, "artifacts", artifacts, 1024, 65536,                     \
	  "artifact count cap", "files returned from /out, subdirectories included", NULL)                 \
	X(FILE_SIZE, "file_size", SBX_UNIT_BYTES, "file_size_bytes", file_size_bytes, 64ULL << 20,         \
	  UINT64_MAX, "file size limit", "largest file the program may write (RLIMIT_FSIZE)", NULL)        \
	X(OPEN_FILES, "open_files", SBX_UNIT_COUNT, "open_files", open_files, 256, 1ULL << 20,             \
	  "open-files limit", "open files per process (RLIMIT_NOFILE)", NULL)                              \
	X(LIVE_IDLE, "live_idle", SBX_UNIT_MS, "live_idle_ms", live_idle_ms, 900000,           \
	  UINT64_MAX, "session idle timeout",                                                              \
	  "a live session with no call for this long is stopped (sbx session start)", "--idle")            \
	X(LIVE_LIFETIME, "live_lifetime", SBX_UNIT_MS, "live_lifetime_ms", live_lifetime_ms,   \
	  28800000, UINT64_MAX, "session lifetime",                                                        \
	  "wall-clock time of a whole live session; SIGINT, then SIGKILL", "--lifetime")                   \
	X(MAX_ATTEMPTS, "max_attempts", SBX_UNIT_COUNT, "max_attempts", max_attempts, 5, 10,               \
	  "attempt limit", "attempts of the client's retry loop (sbx run --fix)", "--max-attempts")

enum sbx_limit {
#define SBX_LIMIT_ENUM(sym, key, unit, json, field, def, max, what, doc, opt) SBX_LIMIT_##sym,
	SBX_LIMITS(SBX_LIMIT_ENUM)
#undef SBX_LIMIT_ENUM
	SBX_LIMIT_N
};
/* The "no limit" value of an outcome's limit column (outcome.h). */
#define SBX_LIMIT_NONE (-1)

struct sbx_limit_def {
	const char *key;     /* policy key, and the END record's "limit" when it fired */
	const char *json;    /* JSON key */
	const char *what;    /* "wall-time limit" */
	const char *doc;     /* one line for the man page */
	const char *option;  /* sbx run's option for it, or NULL (the policy key then) */
	size_t offset;       /* of the uint64_t in struct sbx_limits */
	uint64_t def, max;   /* default; largest accepted (smallest: 1) */
	enum sbx_limit id;
	enum sbx_unit unit;
};

extern const struct sbx_limit_def sbx_limit_defs[SBX_LIMIT_N];

struct sbx_limits;
/* The value of limit id in l. */
uint64_t sbx_limit_get(const struct sbx_limits *l, enum sbx_limit id);
void sbx_limit_set(struct sbx_limits *l, enum sbx_limit id, uint64_t v);
/* The row with this policy key, or NULL. */
const struct sbx_limit_def *sbx_limit_by_key(const char *key);
/* Every limit at its default. */
void sbx_limits_default(struct sbx_limits *l);

/* Parse a value written in the limit's unit (policy syntax), 1 to d->max.
 * 0; -1 with why set ("not a duration (examples: 30s, 500ms, 2m)" and the
 * like); -2 above d->max (why "above the most sbx accepts"). */
int sbx_limit_parse(const struct sbx_limit_def *d, const char *s, uint64_t *out, const char **why);

/* Format v as a policy would write it: "30s", "512M", "0.5", "64". */
void sbx_limit_format(const struct sbx_limit_def *d, uint64_t v, char *buf, size_t len);

/* The unit's name for messages in the user's units: "ms", "bytes", "". */
const char *sbx_unit_name(enum sbx_unit u);

#endif
