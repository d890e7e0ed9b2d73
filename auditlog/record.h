/* SPDX-License-Identifier: ISC */
/*
 * Audit records: what one record holds (its kinds and extension fields:
 * recfield.h), its canonical binary encoding (the bytes that are hashed
 * and signed), and the SQLite log. Written by sbx-recorder (as _sbx),
 * read by sbx-audit. Format: ../shared/DESIGN.md "Audit log".
 */
#ifndef SBX_RECORD_H
#define SBX_RECORD_H
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>

#include "merkle.h"
#include "policy.h"
#include "proto.h" /* SBX_ID_LEN */
#include "recfield.h"

struct sbx_artifact {
	char name[256];
	uint64_t size;               /* bytes */
	char media_type[64];
	unsigned char sha256[32];
};

struct sbx_record {
	/* filled by sbx_audit_append() */
	uint64_t seq;
	/* both kinds */
	int kind;                        /* enum sbx_record_kind */
	char run_id[SBX_ID_LEN + 1];
	char boot_id[40];                /* /proc/sys/kernel/random/boot_id */
	int64_t realtime_ns;             /* CLOCK_REALTIME */
	int64_t boottime_ns;             /* CLOCK_BOOTTIME */
	char host[65];
	uint32_t uid;
	uint32_t gid;
	char user[65];
	char policy[SBX_NAME_MAX + 1];
	unsigned char policy_sha256[32];
	struct sbx_limits limits;
	char language[SBX_NAME_MAX + 1];
	char argv[1024];                 /* interpreter argv, NUL-separated, argv_len bytes */
	size_t argv_len;
	unsigned char code_sha256[32];
	const char *code;                /* START only: stored once per digest in the code table */
	size_t code_len;
	const char *policy_text;         /* START only, or NULL: the policy file as the supervisor
					  * parsed it, stored once per policy_sha256 in the policy
					  * table (the record carries policy_bytes) */
	size_t policy_len;
	char session[65];
	uint32_t attempt;
	char parent_id[SBX_ID_LEN + 1];  /* record id of the previous attempt, or "" */
	/* END only */
	char outcome[16];                /* a name of the outcome table (common/outcome.h) */
	int32_t exit_code;               /* -1 if killed by a signal */
	int32_t signal;                  /* 0 if none */
	char limit[16];                  /* the policy key of the limit that fired (common/limit.h),
					  * tmp_size/out_size/tmp+out_size for a full tmpfs, or "" */
	uint64_t wall_ms, cpu_ms, memory_peak_bytes;
	uint64_t stdout_bytes, stderr_bytes; /* bytes the payload wrote, captured or not */
	unsigned char stdout_sha256[32], stderr_sha256[32]; /* over the captured bytes */
	char stderr_excerpt[2048];       /* last bytes of captured stderr, NUL-terminated */
	char error[256];                 /* sandbox_error: why */
	struct sbx_artifact *artifacts;
	size_t n_artifacts;
	/* version 2: extension fields (recfield.h), any kind */
	struct sbx_rext ext;
};

struct sbx_audit;

/*
 * Open the log at path (never following a symlink). Writable (!readonly):
 * the file is created mode 0640 if absent, the schema is created if missing,
 * journal_mode=WAL, synchronous=FULL, busy timeout 10 s, and the WAL file is
 * kept after close so that readers without write access to the directory
 * can still open it. readonly: the log must exist and carry the records
 * table. Both refuse a log whose meta "format" is not 1. Returns 0 and
 * *out, or -1 with err ("PATH: why") and *out NULL.
 */
int sbx_audit_open(const char *path, int readonly, struct sbx_audit **out,
		   char *err, size_t errlen);
void sbx_audit_close(struct sbx_audit *a);

/*
 * Append one record in a BEGIN IMMEDIATE transaction (busy timeout 10 s):
 * assigns rec->seq, encodes the canonical blob, computes leaf, chain and the
 * Ed25519 signature with sk (crypto_sign_SECRETKEYBYTES), inserts the row
 * and, for START, the code text into the deduplicated code table.
 * Returns 0, or -1 with err set and nothing committed.
 */
int sbx_audit_append(struct sbx_audit *a, struct sbx_record *rec,
		     const unsigned char *sk, const char *origin,
		     unsigned char chain_out[32], char *err, size_t errlen);

/*
 * Read the secret key (crypto_sign_SECRETKEYBYTES): the file holds the raw
 * 64 bytes (as `sbx-audit keygen` writes it) or 128 hex digits and an
 * optional newline. Refused: a symlink, not a regular file, readable or
 * writable by group or others, or a key whose public half does not match
 * its seed. Returns 0, or -1 with err set ("PATH: why") and sk wiped.
 */
int sbx_key_load_secret(const char *path, unsigned char *sk, char *err, size_t errlen);
/* Read the public key (crypto_sign_PUBLICKEYBYTES): 64 hex digits on one
 * line (as keygen writes it) or the raw 32 bytes. Returns 0 or -1 with err. */
int sbx_key_load_public(const char *path, unsigned char *pk, char *err, size_t errlen);

/*
 * Canonical encoding. The blob is what is hashed and signed; the SQL
 * columns are derived from it. Layout:
 *
 *   "SBXR" (4 bytes), version (1 byte), then the fixed fields in this
 *   order, each a 4-byte big-endian length followed by that many bytes.
 *   Integers are 8 bytes big-endian (two's complement when signed);
 *   digests are 32 bytes; strings are their bytes without NUL (a string
 *   never contains NUL); argv is argv_len bytes, NUL-separated.
 *
 *   every kind: seq, kind, run_id, boot_id, realtime_ns, boottime_ns, host,
 *     uid, gid, user, policy, policy_sha256, limits (struct sbx_limits'
 *     wall_ms, cpu_ms, memory_bytes, pids, cpus_milli, tmp_bytes,
 *     out_bytes, output_bytes, file_size_bytes, open_files, max_attempts:
 *     input_bytes, added later, is the extension field input_bytes),
 *     language, argv,
 *     code_sha256, session, attempt, parent_id
 *   kinds with SBX_KF_END_FIELDS (END), then: outcome, exit_code, signal,
 *     limit, wall_ms, cpu_ms, memory_peak_bytes, stdout_bytes,
 *     stdout_sha256, stderr_bytes, stderr_sha256, stderr_excerpt, error,
 *     artifact count, and per artifact: name, size, media_type, sha256
 *
 * Version 1: exactly that, kinds START and END only. Version 2 (written
 * since record fields existed): the same fixed fields, then extension
 * fields up to the end of the blob, each a 2-byte tag, a 4-byte length
 * and the value, tags strictly increasing, typed and allowed per kind by
 * the record-field table (recfield.h). Both versions are read.
 *
 * `code` is not part of the blob (code_sha256 is).
 */
#define SBX_REC_MAGIC "SBXR"
#define SBX_REC_VERSION 2     /* written; 1 and 2 are read */
#define SBX_REC_MAX_BLOB (16u << 20)   /* bytes; larger blobs are refused both ways */
#define SBX_REC_MAX_ARTIFACTS 65536
#define SBX_ORIGIN_MAX 255             /* bytes of the signature origin */

/*
 * Encode rec (version 2) into a malloc'd buffer (*blob, *len; the caller
 * frees it). Returns 0, or -1 with err set when a field cannot be encoded
 * (string not NUL-terminated within its array, argv_len too large, unknown
 * kind, too many artifacts, an extension field the table does not allow
 * in this kind, out of memory).
 */
int sbx_record_encode(const struct sbx_record *rec, unsigned char **blob,
		      size_t *len, char *err, size_t errlen);

/*
 * Decode a blob (treated as hostile: every length is checked, trailing
 * bytes, embedded NULs in strings and out-of-range integers are errors).
 * On success rec is fully overwritten, rec->code is NULL, rec->artifacts
 * and rec->ext are malloc'd (release with sbx_record_free). Returns 0, or
 * -1 with err naming the field; rec then holds nothing to free.
 */
int sbx_record_decode(const unsigned char *blob, size_t len,
		      struct sbx_record *rec, char *err, size_t errlen);

/* Free what sbx_record_decode allocated (only that: a record the caller
 * filled owns its own artifacts array; its extension fields it releases
 * with sbx_rext_free(&rec->ext)). */
void sbx_record_free(struct sbx_record *rec);

/* The kind's name from the kind table ("start", "end", ...), or NULL. */
const char *sbx_record_kind_name(int kind);

/*
 * Tamper evidence (DESIGN.md "Audit log"):
 *   leaf  = SHA-256(0x00 || blob)
 *   chain = SHA-256("sbx-chain-v1" || prev || leaf), prev of seq 1 = 32 zero bytes
 *   sig   = Ed25519 over "sbx-rec-v1" || origin || 0x00 || seq (u64 BE) || chain
 */
void sbx_audit_leaf(const unsigned char *blob, size_t len, unsigned char leaf[32]);
void sbx_audit_chain(const unsigned char prev[32], const unsigned char leaf[32],
		     unsigned char chain[32]);
/* Returns 0, or -1 if origin is empty or longer than SBX_ORIGIN_MAX. */
int sbx_audit_sign(const unsigned char *sk, const char *origin, uint64_t seq,
		   const unsigned char chain[32],
		   unsigned char sig[crypto_sign_BYTES]);
/* 1 if sig is valid for (origin, seq, chain) under pk, else 0. origin is
 * origin_len bytes (it comes from the database: may hold anything). */
int sbx_audit_sig_ok(const unsigned char *pk, const char *origin,
		     size_t origin_len, uint64_t seq,
		     const unsigned char chain[32],
		     const unsigned char sig[crypto_sign_BYTES]);

/*
 * Verification. sbx_audit_verify() walks the log in seq order inside one
 * read transaction and collects every finding; after a break it continues
 * from the stored chain value so that one edit yields one finding where
 * the evidence allows. It needs only the public key.
 */
/*
 * What verification can find, one table: X(SYMBOL, name, warning, what it
 * means). Warnings (1) are suspicious, not proof of tampering: verify
 * exits 4 when only they are found, 1 for any other kind (sbx-audit(1)).
 */
#define SBX_FINDING_KINDS(X)                                                                       \
	X(RECORD_MODIFIED, "record-modified", 0, "a blob does not match its leaf hash")            \
	X(COLUMNS_MISMATCH, "columns-mismatch", 0, "SQL columns differ from the decoded blob")     \
	X(CHAIN_BROKEN, "chain-broken", 0, "the chain does not follow: records inserted, deleted or reordered") \
	X(SEQ_GAP, "seq-gap", 0, "sequence numbers missing (seq = the first missing)")              \
	X(BAD_SIGNATURE, "bad-signature", 0, "an Ed25519 record signature does not verify")        \
	X(UNDECODABLE, "undecodable", 0, "a blob is not a valid canonical record")                  \
	X(CODE_MODIFIED, "code-modified", 0, "a code text does not match its digest")               \
	X(CODE_MISSING, "code-missing", 0, "a START's code digest has no code text")                \
	X(INDEX_MISMATCH, "index-mismatch", 0, "the code search index does not cover the code table") \
	X(POLICY_MODIFIED, "policy-modified", 0, "a policy text does not match its digest or size") \
	X(POLICY_MISSING, "policy-missing", 0, "a START's policy digest has no policy text")        \
	X(END_WITHOUT_START, "end-without-start", 0, "an END whose run has no START before it")    \
	X(CHECKPOINT_BAD, "checkpoint-bad", 0, "a stored checkpoint is malformed or its signature fails") \
	X(CHECKPOINT_MISMATCH, "checkpoint-mismatch", 0, "the leaves no longer give a signed root") \
	X(CHECKPOINT_MISSING, "checkpoint-missing", 0, "a checkpoint the chain or the state names is gone") \
	X(TRUNCATED, "truncated", 0, "fewer records than a checkpoint, witness or state has seen") \
	X(ROLLED_BACK, "rolled-back", 0, "a record the state has seen holds other values now")     \
	X(FORKED, "forked", 0, "a saved or witnessed checkpoint's root is not this log's")         \
	X(LOG_REPLACED, "log-replaced", 0, "the saved checkpoint is not signed by the log's key") \
	X(ROTATION_UNSIGNED, "rotation-unsigned", 0, "the log's base has no signed ROTATE record") \
	X(UNCHECKPOINTED_TAIL, "uncheckpointed-tail", 1, "records after the last checkpoint that are not runs in progress") \
	X(INCOMPLETE, "incomplete", 1, "a START without END, older than its wall-time limit allows") \
	X(TIME_BACKWARDS, "time-backwards", 1, "realtime went back between records of one boot")

enum sbx_finding_kind {
	SBX_FIND_NONE = 0,
#define SBX_FINDING_ENUM(sym, name, warn, doc) SBX_FIND_##sym,
	SBX_FINDING_KINDS(SBX_FINDING_ENUM)
#undef SBX_FINDING_ENUM
	SBX_FIND_NKINDS
};

struct sbx_finding {
	int64_t seq;                  /* seq of the record concerned (0: the log as a whole) */
	enum sbx_finding_kind kind;
	char what[256];               /* one line, printable ASCII */
	char expected[80];            /* what verification computed or required, or "" */
	char actual[80];              /* what the log holds, or "" */
};

struct sbx_checkpoint;

/* A START without END (yet), as verify --state keeps it between runs. */
/* A run's pairing key: its id, or for a live session's call "ID/CELL"
 * (record field cell), at most SBX_OPEN_KEY_LEN bytes. */
#define SBX_OPEN_KEY_LEN (SBX_ID_LEN + 21)
struct sbx_open_run {
	char run_id[SBX_OPEN_KEY_LEN + 1];
	int64_t seq, realtime_ns;
	uint64_t wall_ms;
};
/* Runs in progress a state may carry; with more, the next verify walks
 * the whole log instead. */
#define SBX_STATE_MAX_OPEN 10000

struct sbx_verify_report {
	uint64_t n_records;           /* rows walked */
	uint64_t n_checkpoints;       /* stored checkpoints whose signature and root hold */
	uint64_t n_in_progress;       /* STARTs without END still within their time */
	char *latest_note;            /* newest such checkpoint's note (malloc'd), or NULL */
	uint64_t latest_size;         /* its tree size */
	/* Rotation (rotate.h): a live log starts after base_seq, from
	 * base_chain, with the Merkle tree of root base_root; 0 and zeros
	 * for a log that starts at seq 1. After the walk: the last seq, its
	 * chain value and the root over every leaf (base ones included). */
	uint64_t base_seq, last_seq;
	unsigned char base_chain[32], base_root[32], last_chain[32], root[32];
	/* the newest record walked whose chain held: what verify --state pins */
	int have_head;
	uint64_t head_seq;
	unsigned char head_chain[32], head_sig[crypto_sign_BYTES];
	/* What the next verify needs to walk only newer records: the Merkle
	 * frontier of records 1..head_seq (frontier_len 0 when it cannot be
	 * given) and the runs open at head_seq (malloc'd). */
	unsigned char frontier[SBX_FRONTIER_MAX];
	size_t frontier_len;
	struct sbx_open_run *open;
	size_t n_open;
	/* incremental: records below the state's head taken as verified;
	 * n_new: records walked (n_records counts both) */
	int incremental;
	uint64_t n_new;
	struct sbx_finding *findings; /* sorted by seq; malloc'd */
	size_t n_findings;
	size_t cap;
};

/* "record-modified", "columns-mismatch", ... from the table. */
const char *sbx_finding_kind_name(enum sbx_finding_kind kind);
/* 1 for the kinds that are warnings (verify exit 4), 0 for tampering. */
int sbx_finding_is_warning(enum sbx_finding_kind kind);
/* The table's description of kind. */
const char *sbx_finding_kind_doc(enum sbx_finding_kind kind);

struct sbx_verify_opts {
	/* 0: check every link of the chain, every leaf and column, every
	 * checkpoint's signature and root, and the signature of the last
	 * record (which covers, through the chain, every earlier record);
	 * 1: also every record's signature, on one thread per CPU. */
	int full;
	/* A checkpoint note trusted from an earlier run (--state), or NULL:
	 * the log must still hold a tree of its size with its root, signed
	 * by pk. state_len bytes. */
	const char *state_note;
	size_t state_len;
	/* Reader threads, each with its own read-only connection to the same
	 * file: 0 picks one per CPU (at most 4; none on one CPU), 1 reads on
	 * the caller's connection only. The findings are the same either way. */
	int threads;
	/* Records per unit of work handed to a reader (0: 4096). Small values
	 * only for tests of the boundaries between units. */
	unsigned chunk_rows;
	/* The newest record an earlier verify saw (--state): the log must
	 * still hold record head_seq with this chain value and signature,
	 * else truncated (fewer records) or rolled-back (other values). */
	int have_head;
	uint64_t head_seq;
	unsigned char head_chain[32], head_sig[crypto_sign_BYTES];
	/* The clock that tells a run in progress from an incomplete one
	 * (ns since the epoch); 0: now. */
	int64_t now_ns;
	/* Incremental (--state of version 3, without --full): the frontier
	 * of the Merkle tree of records 1..head_seq, the log's base then, and
	 * the runs open at head_seq. When the log's base is still state_base,
	 * only records after head_seq are walked: the head is looked up,
	 * checkpoints newer than it are checked against the tree grown from
	 * the frontier, new STARTs' code rows and their index entries are
	 * looked up. O(new records + log n). NULL frontier: the whole log. */
	const unsigned char *frontier;
	size_t frontier_len;
	uint64_t state_base;
	const struct sbx_open_run *open;
	size_t n_open;
	/* The origin every checkpoint must name (verify --key NAME+..., or
	 * --origin); NULL: any. A
	 * checkpoint of another origin is another log's (c2sp.org/tlog-
	 * checkpoint: verifiers pin the origin). */
	const char *origin;
	/* Checkpoints collected elsewhere (verify --witness), verified with
	 * pk, sorted by size: the log must give each one's root at its size
	 * (else forked: history rewritten and re-signed) and hold at least
	 * as many records (else rolled-back). Implies a walk of the whole
	 * log. */
	const struct sbx_checkpoint *witness;
	size_t n_witness;
};

/*
 * sbx_audit_verify with options. sbx_audit_verify(a, pk, rep, ...) is
 * sbx_audit_verify_opts with {.full = 1}. Returns as sbx_audit_verify.
 */
int sbx_audit_verify_opts(struct sbx_audit *a, const unsigned char *pk,
			  const struct sbx_verify_opts *opts,
			  struct sbx_verify_report *rep, char *err, size_t errlen);

/*
 * Verify the whole log against pk (crypto_sign_PUBLICKEYBYTES). Returns 0
 * when the walk completed (rep->n_findings may be nonzero), -1 with err set
 * when the log could not be read (rep then holds nothing to free).
 */
int sbx_audit_verify(struct sbx_audit *a, const unsigned char *pk,
		     struct sbx_verify_report *rep, char *err, size_t errlen);
void sbx_verify_report_free(struct sbx_verify_report *rep);

/*
 * Read one row of the meta table ("format", "pubkey") as text into buf.
 * Returns 0, 1 if the key is absent, -1 with err set on a read error.
 */
int sbx_audit_meta_get(struct sbx_audit *a, const char *key, char *buf,
		       size_t buflen, char *err, size_t errlen);

/*
 * The END record of run_id: its caller's uid and its changeset_sha256
 * column (lower-case hex, "" when it has none). Returns 0, 1 if the log
 * has no END of that run, -1 with err set on a read error.
 */
int sbx_audit_end_changeset(struct sbx_audit *a, const char *run_id, uint32_t *uid, char *sha, size_t sha_len,
			    char *err, size_t errlen);

/*
 * What the log holds of a run that another run names as its --parent:
 * its START's caller, session label ("" for none), attempt, language and
 * policy, and how it ended (outcome of its last END, "" while it has none).
 */
struct sbx_start_claims {
	uint32_t uid, attempt;
	char session[SBX_TOKEN_MAX + 1];
	char language[SBX_NAME_MAX + 1];
	char policy[SBX_NAME_MAX + 1];
	char outcome[32];
};

/*
 * Read the claims of run_id's START (and the outcome of its END) into c.
 * Returns 0, 1 if the log has no START of that run, -1 with err set on a
 * read error.
 */
int sbx_audit_start_claims(struct sbx_audit *a, const char *run_id, struct sbx_start_claims *c, char *err,
			   size_t errlen);

#endif
