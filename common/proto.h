/* SPDX-License-Identifier: ISC */
/*
 * The interfaces between sbx's processes, in one place: client <-> setuid
 * sbx-helper (protocol version 2), supervisor <-> sbx-recorder, supervisor
 * <-> sandbox init. The helper is setuid root, so its interface is narrow:
 * argv and a few inherited file descriptors.
 *
 * ---- client -> sbx-helper: argv -----------------------------------------
 *
 *   sbx-helper run --lang NAME --code-fd N --result-fd N
 *              [--policy NAME] [--name FILE] [--timeout MS] [--memory BYTES]
 *              [--pids N] [--session ID] [--attempt N] [--parent ID]
 *              [--input-fd N --input-name NAME]... [--work-fd N] [--dry-run]
 *              [--allow HOST:PORT]... [--stdin-fd N]
 *
 * --lang      language name from sbx.conf ([language.NAME]); the helper, not
 *             the client, resolves it to an interpreter command line.
 * --code-fd   a memfd sealed with F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW
 *             holding the code, at most SBX_CODE_MAX bytes. Root only checks
 *             the seals and the size; the recorder hashes and records it, the
 *             sandbox (as the caller) copies it to /code: the seals make the
 *             recorded code the code that runs.
 * --name      file name the code gets under /code ([A-Za-z0-9._-], 1..64,
 *             not starting with '.'); default "main" + the language suffix.
 * --result-fd an AF_UNIX SOCK_STREAM socket (checked with getsockopt(2)
 *             SO_DOMAIN and SO_TYPE): the one channel of the run, both ways.
 * --timeout/--memory/--pids: tighten the policy (milliseconds, bytes, count;
 *             ranges SBX_ARG_*); a value above the policy's is refused.
 * --session   [A-Za-z0-9._-]{1,64}; --attempt 1..SBX_MAX_ATTEMPTS; --parent a
 *             run id (SBX_ID_LEN lower-case hex digits) of the previous
 *             attempt.
 * --input-fd  a memfd sealed like --code-fd, copied read-only to /in/NAME;
 *             each is followed by its --input-name ([A-Za-z0-9._-]{1,64}, no
 *             leading '.', unique); at most SBX_MAX_INPUTS pairs, sizes
 *             together at most the policy's input_size.
 * --stdin-fd  a memfd sealed like --code-fd: the payload's standard input
 *             (read from its start; else /dev/null); counted in input_size,
 *             its size and SHA-256 recorded in START.
 * --work-fd   a directory fd (O_PATH will do) of the caller's session: a
 *             directory owned by the caller, not group/world-writable;
 *             mounted read-write at /work (open_tree + move_mount), where
 *             the payload starts.
 * --allow     HOST:PORT as in sbx.policy(5), up to 16: the run may reach only
 *             these entries of the policy's [network] allow list, each of
 *             which must be one of them (tighten-only, like the limits).
 * --dry-run   all checks, then one SBX_FRAME_DRY_RUN frame describing the
 *             effective set-up, exit 0; nothing runs, nothing is recorded.
 *
 * ---- sbx-helper -> client: frames on the result socket -------------------
 *
 * Each frame is an 8-byte header (u32 type, u32 length, both big-endian)
 * followed by `length` payload bytes (at most SBX_FRAME_MAX). No privileged
 * process ever blocks on this socket (or any other fd of the caller's): the
 * helper's processes send with MSG_DONTWAIT and keep what the client has not
 * taken yet (payload output: at most the policy's output cap), and give a
 * client that stops reading SBX_FLUSH_MS after the run before they drop the
 * rest. Frames of one run arrive in this order: MESSAGE at any time; STARTED;
 * STDOUT/STDERR; ARTIFACT...; RESULT (last). The helper then closes the
 * socket.
 */
#ifndef SBX_PROTO_H
#define SBX_PROTO_H
#include <stdint.h>

#define SBX_PROTO_VERSION 2

enum sbx_frame_type {
	/* payload = artifact name, its path relative to /out (1..255 bytes,
	 * components separated by '/', none empty, "." or ".."); exactly one fd
	 * (a sealed memfd holding the content) arrives as SCM_RIGHTS with the
	 * header's first byte */
	SBX_FRAME_ARTIFACT = 1,
	/* payload = the result JSON; the last frame of a run */
	SBX_FRAME_RESULT = 2,
	/* payload = bytes the program wrote on its stdout / stderr, in order,
	 * within the output cap */
	SBX_FRAME_STDOUT = 3,
	SBX_FRAME_STDERR = 4,
	/* payload = one line (no newline) from sbx-helper itself: why it failed,
	 * or a warning; the client shows it prefixed "sbx-helper: " */
	SBX_FRAME_MESSAGE = 5,
	/* payload = the run id (SBX_ID_LEN hex digits): the START record is
	 * committed, the sandbox is being built */
	SBX_FRAME_STARTED = 6,
	/* payload = struct sbx_dry_run (rundesc.h): --dry-run's answer */
	SBX_FRAME_DRY_RUN = 7,
};
#define SBX_FRAME_MAX      (64u << 20) /* largest frame payload, bytes */
#define SBX_FRAME_LINE_MAX 1024u       /* largest MESSAGE payload, bytes */
#define SBX_FRAME_OUTPUT_MAX (64u << 10) /* largest STDOUT/STDERR payload, bytes */
#define SBX_FLUSH_MS       10000       /* what a stalled client is given after the run */

/*
 * ---- client -> sbx-helper: control bytes on the result socket -------------
 *
 * One byte each, read by the supervisor; other values are ignored. EOF (the
 * client closed the socket or shut down its writing side) means the client is
 * gone: the sandbox is killed (outcome signal) and the run recorded.
 */
enum sbx_control {
	SBX_CONTROL_INTERRUPT = 1, /* SIGINT to the payload; SIGKILL 2 s later */
	SBX_CONTROL_TERMINATE = 2, /* SIGTERM to the payload; SIGKILL 2 s later */
};

/*
 * Messages that must reach the caller's fd 2 before the result socket is
 * checked (usage errors) are written by a short-lived child running as the
 * caller's uid, never by root: "sbx-helper: why\n".
 *
 * Exit status: the payload's exit status; 124 wall or CPU timeout; 128+N
 * killed by signal N (137 for the memory limit); 125 sbx failed (usage,
 * policy, sandbox set-up, audit log).
 */
#define SBX_EXIT_NO_SESSION  69  /* sbx run --session NAME: that live session ended (sbx(1)) */
#define SBX_EXIT_TIMEOUT     124
#define SBX_EXIT_FAILURE     125
#define SBX_EXIT_CANNOT_EXEC 126
#define SBX_EXIT_NOT_FOUND   127

/* ---- bounds of the helper's argv, shared with the client's checks -------- */
#define SBX_CODE_MAX       (4u << 20)  /* bytes of code accepted */
#define SBX_MAX_ATTEMPTS   10
#define SBX_MAX_INPUTS     32          /* --input-fd pairs accepted */
#define SBX_MAX_ARTIFACTS  64          /* artifact fds in flight at once (HELPER_NOFILE) */
#define SBX_ID_LEN         32          /* run id: 16 random bytes, lower-case hex */
#define SBX_TOKEN_MAX      64          /* --name, --session, --input-name */
#define SBX_ARG_FD_MAX     1023        /* --*-fd: 3..SBX_ARG_FD_MAX */
#define SBX_ARG_TIMEOUT_MAX (1ULL << 40) /* --timeout, ms, 1.. */
#define SBX_ARG_MEMORY_MIN (1ULL << 20)  /* --memory, bytes */
#define SBX_ARG_MEMORY_MAX (1ULL << 50)
#define SBX_ARG_PIDS_MAX   (1ULL << 22)  /* --pids, 1.. */
#define SBX_ARG_SESSION_MS_MAX (1ULL << 40) /* --idle, --lifetime, ms, 1.. */

/*
 * ---- supervisor <-> sbx-recorder -----------------------------------------
 *
 * The recorder (LIBEXECDIR/sbx/sbx-recorder) is exec'd by a child of the
 * supervisor after it became _sbx (no capabilities, no_new_privs, not
 * dumpable), with exactly these descriptors and an empty environment:
 */
enum sbx_recorder_fd {
	SBX_REC_FD_CONTROL = 3, /* SOCK_SEQPACKET to the supervisor (messages below) */
	SBX_REC_FD_RESULT = 4,  /* the client's result socket (frames above) */
	SBX_REC_FD_STDOUT = 5,  /* read end of the payload's stdout pipe */
	SBX_REC_FD_STDERR = 6,  /* read end of the payload's stderr pipe */
	SBX_REC_FD_ARTIFACTS = 7, /* SOCK_SEQPACKET from the artifact collector */
	SBX_REC_FD_CODE = 8,    /* the code memfd (sealed) */
	SBX_REC_FD_EGRESS = 9,  /* [network] mode = allow: the relay's report socket
				 * (common/egress_proto.h); else /dev/null */
	SBX_REC_FD_STDIN = 10,  /* the --stdin-fd memfd (sealed), or /dev/null */
	SBX_REC_FD_SIGNER = 11, /* SOCK_STREAM to sbx-signer (auditlog/signwire.h) */
	SBX_REC_FD_POLICY = 12, /* the policy file's text as the supervisor parsed it, a
				 * sealed memfd of policy_bytes (rundesc.h); else /dev/null */
	SBX_REC_FD_INPUT0 = 13, /* the input memfds, n_inputs of them, in order */
};
/* sbx-signer is exec'd (as _sbxsign, by the recorder's child before it
 * becomes _sbx) with 0, 1 and 2 /dev/null and this one descriptor: the
 * other end of SBX_REC_FD_SIGNER. */
#define SBX_SIGNER_FD 3
/* 0, 1 and 2 are /dev/null. */

/*
 * ---- collector -> recorder (SBX_REC_FD_ARTIFACTS) --------------------------
 *
 * SOCK_SEQPACKET, one message per file of /out: a file returned is its
 * path relative to /out with its memfd; a message without an fd is a
 * byte SBX_COLLECT_SKIPPED, a reason byte (enum sbx_art_skip) and the path
 * of a file not returned, or a byte SBX_COLLECT_TRUNCATED and the path of
 * the file the payload was writing when /out filled up. The last message
 * is the single byte SBX_COLLECT_DONE: the collector walked all of /out.
 * A path with a control character is never sent as a file (the recorder
 * refuses such names, and "\x04" alone would read as the manifest's
 * SBX_COLLECT_CHANGESET): it is SKIPPED, bad_name. A collector that
 * could not tell the recorder of every file (/out itself unread, a
 * readdir error, a message not sent) does not send SBX_COLLECT_DONE.
 * The collector runs as the caller, who may kill it at any point, or
 * lower its rlimits (prlimit(2) asks only for the same uids and gids,
 * kernel/sys.c check_prlimit_permission; not dumpable does not count): EOF
 * without SBX_COLLECT_DONE means the list is incomplete, and the recorder
 * says so (skip reason "incomplete", the END record's
 * artifacts_incomplete). Where no collector is due (/out empty, a run that
 * failed before its payload ran) the supervisor sends SBX_COLLECT_DONE
 * itself.
 */
#define SBX_PATH_MAX_ART 255 /* bytes of an artifact's path (the record's name) */
/*
 * The collector (LIBEXECDIR/sbx/sbx-collector, collector/) is exec'd by a
 * child of the supervisor after it became the caller (no capabilities,
 * no_new_privs), from a file root owns with mode 0711, which makes the
 * process not dumpable (fs/exec.c would_dump: the caller cannot read the
 * file, so cannot ptrace what runs it); empty environment, 0, 1 and 2
 * /dev/null, argv "sbx-collector ARTIFACTS OUT_BYTES WORKSPACE_BYTES
 * RUN_ID" (the run's limits in files and bytes, decimal; its id), and
 * these descriptors; one that is closed has nothing to collect:
 */
enum sbx_collector_fd {
	SBX_COL_FD_ART = 3,     /* SOCK_SEQPACKET to the recorder's SBX_REC_FD_ARTIFACTS */
	SBX_COL_FD_OUT = 4,     /* /out's tmpfs (O_RDONLY | O_DIRECTORY), if not empty */
	SBX_COL_FD_UPPER = 5,   /* --workspace: the overlay's upper layer (O_PATH) */
	SBX_COL_FD_LOWER = 6,   /* --workspace: the caller's directory (--workspace-fd) */
	SBX_COL_FD_CHANGESET = 7, /* --workspace: the empty directory the changeset goes to */
};
/* With --workspace, before SBX_COLLECT_DONE and before any file: a byte
 * SBX_COLLECT_CHANGESET with the changeset manifest as a sealed memfd
 * (docs/workspace.md), or without an fd and the reason the changeset could
 * not be computed; once (the recorder takes no second, and none without
 * --workspace). */
enum { SBX_COLLECT_SKIPPED = 1, SBX_COLLECT_TRUNCATED = 2, SBX_COLLECT_DONE = 3, SBX_COLLECT_CHANGESET = 4 };
#define SBX_CS_MAX_ENTRIES 65536 /* entries of one changeset (docs/workspace.md) */
#define SBX_CS_MANIFEST_MAX (64u << 20) /* bytes of a changeset manifest */

/* Why a file in /out is not returned: X(SYMBOL, the result's "reason",
 * the plain-mode words). */
#define SBX_ART_SKIPS(X)                                                                     \
	X(COUNT_CAP, "count_cap", "over the artifact count cap")                              \
	X(OUT_SIZE, "out_size", "over out_size (all artifacts together)")                    \
	X(NOT_REGULAR, "not_regular", "not a regular file")                                   \
	X(SYMLINK, "symlink", "a symbolic link")                                              \
	X(HIDDEN, "hidden", "a hidden name")                                                  \
	X(BAD_NAME, "bad_name", "a name that is not valid UTF-8 text, or too long")           \
	X(TOO_DEEP, "too_deep", "nested deeper than 16 directories")                          \
	X(UNREADABLE, "unreadable", "could not be read")                                      \
	X(INCOMPLETE, "incomplete", "not collected: the collector ended before it had walked /out")

enum sbx_art_skip {
#define SBX_ART_SKIP_ENUM(sym, name, words) SBX_ART_SKIP_##sym,
	SBX_ART_SKIPS(SBX_ART_SKIP_ENUM)
#undef SBX_ART_SKIP_ENUM
	SBX_ART_SKIP_N
};
#define SBX_ART_DEPTH_MAX 16 /* directory levels under /out that are walked */

/*
 * Every supervisor -> recorder message starts with this header; the
 * recorder refuses one whose magic, version, type or size (the whole
 * message, header included, which must be what recv(2) returned) is not
 * what it expects. The first message is SBX_REC_MSG_RUN (struct
 * sbx_run_desc, rundesc.h), the last SBX_REC_MSG_END (struct sbx_run_end).
 */
#define SBX_MSG_MAGIC   0x5342584du /* "SBXM" */
#define SBX_MSG_VERSION 1u
struct sbx_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;    /* enum sbx_rec_msg */
	uint32_t size;    /* bytes of the whole message */
};
enum sbx_rec_msg {
	SBX_REC_MSG_RUN = 1, /* struct sbx_run_desc: what the run is */
	SBX_REC_MSG_END = 2, /* struct sbx_run_end: how it ended */
	SBX_REC_MSG_CGROUP = 3, /* --live, after START: struct sbx_live_cgroup */
};

/* recorder -> supervisor: one byte each on SBX_REC_FD_CONTROL */
enum sbx_rec_reply {
	SBX_REPLY_READY = 4,      /* the run description was taken; START follows (OK or FAIL) */
	SBX_REPLY_START_OK = 1,   /* START committed: the payload may run */
	SBX_REPLY_START_FAIL = 2, /* START not committed: the run must not start */
	SBX_REPLY_KILL_OUTPUT = 3, /* the output cap was reached: stop the run */
	SBX_REPLY_KILL_CALL = 5,   /* --live: a call ran past its wall_time and did not yield
	                            * to its KeyboardInterrupt: stop the session */
};

/*
 * ---- supervisor <-> sandbox init -----------------------------------------
 *
 * SOCK_SEQPACKET; the first byte of each message is its type.
 */
enum sbx_sandbox_msg {
	SBX_SANDBOX_GO = 1,     /* supervisor -> init: ids mapped, in the cgroup: go on */
	SBX_SANDBOX_OUTDIR = 2, /* init -> supervisor: O_PATH fd of /out (SCM_RIGHTS) */
	SBX_SANDBOX_TMPDIR = 3, /* init -> supervisor: O_PATH fd of /tmp (SCM_RIGHTS) */
	SBX_SANDBOX_STATUS = 4, /* init -> supervisor: then an int, the payload's wait status */
	SBX_SANDBOX_ERROR = 5,  /* init -> supervisor: then text, why set-up failed */
	SBX_SANDBOX_SHMDIR = 6, /* init -> supervisor: O_PATH fd of /dev/shm (SCM_RIGHTS) */
	SBX_SANDBOX_EXEC = 7,   /* supervisor -> init: START committed: start the payload */
	SBX_SANDBOX_WSUPPER = 9, /* init -> supervisor: O_PATH fd of --workspace's upper layer */
	SBX_SANDBOX_JOINED = 8, /* init -> supervisor: in the run's cgroup (v1: it joined itself) */
};

/*
 * ---- live sessions (sbx(1) SESSIONS; recorder/live.c) --------------------
 * The session's recorder (_sbx) listens on the abstract AF_UNIX stream
 * socket "\0" SBX_LIVE_PREFIX "UID/NAME" in its own (the host's) network
 * namespace: no sandbox reaches it (each has its own). It checks the
 * peer's SO_PEERCRED uid against the session's on every connection; the
 * client checks the listener's is _sbx's (nobody else can squat a name it
 * would send code to). A connection carries one struct sbx_live_req (with
 * CALL, the code as a sealed memfd in SCM_RIGHTS, at most SBX_CODE_MAX
 * bytes, then the call's n_inputs input files as sealed memfds in the same
 * SCM_RIGHTS, in order, their names following the request as n_inputs
 * struct sbx_live_input; at most SBX_MAX_INPUTS, together at most the
 * policy's input_size); the recorder answers in frames as a run's helper does (STARTED,
 * STDOUT, STDERR, MESSAGE, RESULT), and reads control bytes (enum
 * sbx_control) on it during the call; EOF interrupts the call.
 */
#define SBX_LIVE_PREFIX "sbx-live/"
#define SBX_LIVE_MAGIC 0x5342584cu /* "SBXL" */
#define SBX_LIVE_VERSION 2u
enum sbx_live_op {
	SBX_LIVE_CALL = 1,   /* run the code: frames, then RESULT with cell and session_state */
	SBX_LIVE_STATUS = 2, /* RESULT: {session, id, session_state, cells, idle_ms, uptime_ms} */
	SBX_LIVE_STOP = 3,   /* end the session (recorded), then RESULT as STATUS */
};
struct sbx_live_req {
	uint32_t magic;   /* SBX_LIVE_MAGIC */
	uint16_t version; /* SBX_LIVE_VERSION */
	uint16_t op;      /* enum sbx_live_op */
	uint64_t wall_ms; /* CALL: this call's wall_time (0: the policy's); never above it */
	uint64_t cpu_ms;  /* CALL: likewise cpu_time */
	uint32_t n_inputs; /* CALL: input files (struct sbx_live_input each, after this) */
	uint32_t flags;    /* CALL: enum sbx_live_req_flags */
};
enum sbx_live_req_flags {
	/* the first call after `sbx session restart` (the caller's word): its
	 * session_state says "restarted", the earlier state is gone */
	SBX_LIVE_F_RESTARTED = 1u << 0,
};
struct sbx_live_input {
	char name[SBX_TOKEN_MAX + 1]; /* /in/NAME: as --input-name (proto.h above) */
	char pad[7];
};

/*
 * recorder <-> driver: the call channel, the sandbox's fd 0 (a socketpair
 * the supervisor made; the driver moves it off fd 0). Integers in host
 * order. Recorder -> driver: struct sbx_live_call then len bytes of code,
 * then n_inputs struct sbx_live_input_file, their memfds in SCM_RIGHTS with
 * the header's first byte (the driver writes them to /in, after emptying
 * it, before the code runs);
 * or struct sbx_live_call with len 0 and cell 0: interrupt the running
 * call (KeyboardInterrupt). Driver -> recorder: struct sbx_live_done when
 * a call is over, after its output is flushed. What the driver says is
 * the sandbox's word: the recorder times the call and bounds it itself.
 */
#define SBX_LIVE_CALL_MAGIC 0x43584253u /* "SBXC" */
#define SBX_LIVE_DONE_MAGIC 0x52584253u /* "SBXR" */
struct sbx_live_call {
	uint32_t magic, cell;
	uint64_t wall_ms, cpu_ms;
	uint32_t len, n_inputs;
};
struct sbx_live_input_file {
	char name[SBX_TOKEN_MAX + 1]; /* NUL-padded */
	char pad[7];
	uint64_t size; /* bytes, as hashed into the call's START */
};
enum sbx_live_status {
	SBX_LIVE_OK = 0,        /* the code ran to its end */
	SBX_LIVE_EXCEPTION = 1, /* it raised (the traceback is on stderr) */
	SBX_LIVE_WALL = 2,      /* its wall_time fired (KeyboardInterrupt) */
	SBX_LIVE_CPU = 3,       /* its cpu_time fired (ITIMER_PROF, KeyboardInterrupt) */
	SBX_LIVE_INTERRUPT = 4, /* the caller interrupted it */
	SBX_LIVE_EXIT = 5,      /* it called exit(): the session ends */
};
struct sbx_live_done {
	uint32_t magic, cell;
	int32_t status;  /* enum sbx_live_status */
	uint32_t pad;
	uint64_t cpu_ms; /* the driver's CPU time in the call, children included */
};
/* Driver -> recorder, before its sbx_live_done: a file of /out the call
 * wrote or changed, as a sealed memfd (SCM_RIGHTS with the first byte),
 * its path under /out in name (NUL-padded). Checked like the collector's
 * (recorder.c rec_take_artifact): the call's artifacts. */
#define SBX_LIVE_ART_MAGIC 0x41584253u /* "SBXA" */
struct sbx_live_art {
	uint32_t magic, cell;
	char name[SBX_PATH_MAX_ART + 1];
};

#endif
