/* SPDX-License-Identifier: ISC */
/*
 * The two vocabularies of the audit record, each declared once:
 *
 *  - record kinds (SBX_RECORD_KINDS): START, END, and the kinds added with
 *    format version 2;
 *  - extension fields (SBX_RECORD_FIELDS): typed (tag, length, value)
 *    fields after the fixed fields of version 1, with their name, JSON
 *    key, type, the kinds they may appear in and their SQL projection.
 *
 * Everything that encodes, decodes, validates, displays (sbx-audit show,
 * export), projects into SQL columns or verifies a record derives from
 * these two tables. A workstream adds a field by adding one row with a
 * tag from its range (below) and calling sbx_rec_put_* when it fills the
 * record; show, show --json, export and verify then know the field.
 *
 * Tag ranges (../shared/PLAN.md): audit 1-99, analyst 100-119, egress
 * 120-139, images 140-159, sessions 160-179, workspace 180-199, fleet
 * 200-219, sec 220-229. 230-65535 unassigned. Tag 0 is never valid. A tag,
 * once released, is never reused or retyped: records carrying it are signed.
 */
#ifndef SBX_RECFIELD_H
#define SBX_RECFIELD_H
#include <stddef.h>
#include <stdint.h>

/*
 * Record kinds: X(SYMBOL, number, name, flags, description). name is the
 * `kind` column and show's label; flags: SBX_KF_END_FIELDS (the version 1
 * END fields follow the common ones), SBX_KF_V1 (may appear in a
 * version 1 blob).
 */
#define SBX_KF_END_FIELDS 1u
#define SBX_KF_V1 2u
#define SBX_RECORD_KINDS(X)                                                              \
	X(START, 1, "start", SBX_KF_V1,                                                  \
	  "a run is about to execute: committed before the payload runs (no commit, no run)") \
	X(END, 2, "end", SBX_KF_V1 | SBX_KF_END_FIELDS,                                  \
	  "a run is over: outcome, resource use, output digests, artifacts")              \
	X(ROTATE, 3, "rotate", 0,                                                        \
	  "first record of a live log after sbx-audit rotate: the signed base it starts from") \
	X(REFUSED, 4, "refused", 0,                                                      \
	  "a request refused before a policy was loaded: who asked, what, and why")          \
	X(APPLY, 5, "apply", 0,                                                          \
	  "sbx apply of a run's changeset: which run, which changeset, which files, the result")

enum sbx_record_kind {
#define SBX_KIND_ENUM(sym, num, name, flags, doc) SBX_REC_##sym = num,
	SBX_RECORD_KINDS(SBX_KIND_ENUM)
#undef SBX_KIND_ENUM
};

struct sbx_kind_def {
	int kind;              /* enum sbx_record_kind */
	const char *name;
	unsigned flags;        /* SBX_KF_* */
	const char *doc;
};
extern const struct sbx_kind_def sbx_record_kinds[];
extern const size_t sbx_n_record_kinds;

/* The row of kind, or NULL. */
const struct sbx_kind_def *sbx_kind_def(int kind);
/* The row named name ("start"), or NULL. */
const struct sbx_kind_def *sbx_kind_by_name(const char *name);
/* Bit of a kind in a field's kinds mask. */
#define SBX_KBIT(sym) (1u << SBX_REC_##sym)
#define SBX_KALL (SBX_KBIT(START) | SBX_KBIT(END) | SBX_KBIT(ROTATE) | SBX_KBIT(REFUSED) | SBX_KBIT(APPLY))

/*
 * Field types and their value encoding (all integers big-endian):
 *   U64, I64  8 bytes (I64 two's complement)
 *   STR       bytes without NUL, at most max bytes (not required to be
 *             UTF-8: names come from callers; display escapes them)
 *   DIGEST    32 bytes (a SHA-256)
 *   BYTES     opaque, at most max bytes (shown as hex)
 *   LIST      u32 item count (at most max), then per item its sub-fields
 *             in declared order, each a u32 length and a scalar value
 *   OBJ       the sub-fields once, as one LIST item without the count
 */
enum sbx_ftype { SBX_FT_U64 = 1, SBX_FT_I64, SBX_FT_STR, SBX_FT_DIGEST, SBX_FT_BYTES,
		 SBX_FT_LIST, SBX_FT_OBJ };

struct sbx_subfield {
	const char *key;        /* JSON key, also the text label */
	enum sbx_ftype type;    /* a scalar type */
	uint32_t max;           /* STR/BYTES: bytes */
};

/* Sub-field lists of the LIST and OBJ fields (recfield.c). */
extern const struct sbx_subfield sbx_sub_input[];   /* name, size, sha256 */
extern const struct sbx_subfield sbx_sub_stdin[];   /* size, sha256 */
extern const struct sbx_subfield sbx_sub_workdir[]; /* dev, ino */
extern const struct sbx_subfield sbx_sub_ckpt[];    /* size, root */
/* egress ([network] mode = allow; docs/egress.md) */
extern const struct sbx_subfield sbx_sub_net_pair[];    /* service, address, port */
extern const struct sbx_subfield sbx_sub_net_limits[];  /* connections, bytes_out, bytes_in */
extern const struct sbx_subfield sbx_sub_net_conn[];    /* service, address, port, start_ms, duration_ms,
							 * bytes_out, bytes_in, end */
extern const struct sbx_subfield sbx_sub_net_refused[]; /* address, port, reason, count */

/*
 * Extension fields: X(SYMBOL, tag, label, JSON key, type, kinds, SQL
 * column or NULL, max, sub-fields or NULL, owner, description).
 * max: STR/BYTES bytes, LIST items. The SQL column, for scalar types only,
 * is added to table records by the writer, filled from the blob (digests
 * as lower-case hex) and compared by verify like the version 1 columns.
 * "origin" is special: the records table has always had that column (the
 * signature covers it); in version 2 the blob carries it too, so the leaf
 * hash and chain cover it and verify compares the two.
 */
#define SBX_RECORD_FIELDS(X)                                                                 \
	X(ORIGIN, 1, "origin", "origin", SBX_FT_STR, SBX_KALL, "origin", 255, NULL, "audit",     \
	  "the log's origin (C2SP key name), also signed with each record")                     \
	X(AFTER_CKPT, 2, "after checkpoint", "after_checkpoint", SBX_FT_OBJ, SBX_KBIT(START),     \
	  NULL, 0, sbx_sub_ckpt, "audit",                                                       \
	  "the newest kept checkpoint when the record was written (binds kept checkpoints into the chain)") \
	X(INPUTS, 10, "inputs", "inputs", SBX_FT_LIST, SBX_KBIT(START), NULL, 64,              \
	  sbx_sub_input, "audit", "the --input files as the sandbox sees them under /in")       \
	X(STDIN, 11, "stdin", "stdin", SBX_FT_OBJ, SBX_KBIT(START), NULL, 0, sbx_sub_stdin,      \
	  "audit", "the standard input handed to the payload")                                  \
	X(WORKDIR, 12, "session dir", "session_dir", SBX_FT_OBJ, SBX_KBIT(START), NULL, 0,       \
	  sbx_sub_workdir, "audit", "the session directory mounted at /work (its identity)")    \
	X(INPUT_LIMIT, 13, "input limit", "input_bytes", SBX_FT_U64, SBX_KBIT(START) |        \
	  SBX_KBIT(END), NULL, 0, NULL, "audit", "the policy's input_size limit in bytes, the "   \
	  "limit version 1's fixed fields lack (show --json puts it in limits)")                \
	X(ARTS_SKIPPED, 14, "artifacts skipped", "artifacts_skipped", SBX_FT_U64, SBX_KBIT(END), \
	  NULL, 0, NULL, "audit", "files of /out not returned (the result's artifacts_skipped); " \
	  "absent when 0")                                                                       \
	X(ARTS_INCOMPLETE, 15, "artifacts incomplete", "artifacts_incomplete", SBX_FT_STR,       \
	  SBX_KBIT(END), NULL, 255, NULL, "audit", "why the artifacts listed are not all of "    \
	  "/out (the collector was killed or failed); absent when they are")                    \
	X(SBX_VERSION, 20, "sbx version", "sbx_version", SBX_FT_STR, SBX_KBIT(START) |           \
	  SBX_KBIT(REFUSED) | SBX_KBIT(ROTATE) | SBX_KBIT(APPLY), NULL, 64, NULL, "audit",                        \
	  "the version of sbx that wrote the record")                                           \
	X(KERNEL, 21, "kernel", "kernel_release", SBX_FT_STR, SBX_KBIT(START), NULL, 64, NULL,  \
	  "audit", "uname(2) release of the host kernel")                                       \
	X(INTERP_PATH, 22, "interpreter", "interpreter_path", SBX_FT_STR, SBX_KBIT(START), NULL, \
	  4096, NULL, "audit", "the interpreter executable, symlinks resolved")                 \
	X(INTERP_SHA256, 23, "interpreter sha256", "interpreter_sha256", SBX_FT_DIGEST,          \
	  SBX_KBIT(START), NULL, 0, NULL, "audit", "SHA-256 of the interpreter executable")     \
	X(CODE_BYTES, 30, "code bytes", "code_bytes", SBX_FT_U64, SBX_KBIT(START) |              \
	  SBX_KBIT(REFUSED), NULL, 0, NULL, "audit", "size of the code as sent")                \
	X(REQ_POLICY, 31, "asked policy", "requested_policy", SBX_FT_STR, SBX_KBIT(REFUSED),     \
	  NULL, 255, NULL, "audit", "the policy name the caller asked for")                     \
	X(REQ_LANGUAGE, 32, "asked language", "requested_language", SBX_FT_STR,                  \
	  SBX_KBIT(REFUSED), NULL, 255, NULL, "audit", "the language the caller asked for")     \
	X(REFUSAL, 33, "refusal", "refusal", SBX_FT_STR, SBX_KBIT(REFUSED), "refusal", 64, NULL, \
	  "audit", "why the request was refused: an error code of sbx(1)")                      \
	X(REFUSAL_MSG, 34, "refusal message", "refusal_message", SBX_FT_STR, SBX_KBIT(REFUSED),  \
	  NULL, 1024, NULL, "audit", "the message the caller was given")                        \
	X(POLICY_BYTES, 35, "policy bytes", "policy_bytes", SBX_FT_U64, SBX_KBIT(START), NULL, 0, \
	  NULL, "audit", "size of the policy text, kept once per digest (policy_sha256) in the "  \
	  "policy table")                                                                       \
	X(BASE_SEQ, 40, "base seq", "base_seq", SBX_FT_U64, SBX_KBIT(ROTATE), NULL, 0, NULL,     \
	  "audit", "the last seq moved to the archive")                                         \
	X(BASE_CHAIN, 41, "base chain", "base_chain", SBX_FT_DIGEST, SBX_KBIT(ROTATE), NULL, 0,  \
	  NULL, "audit", "the chain value of record base_seq")                                  \
	X(BASE_NOTE, 42, "base checkpoint", "base_checkpoint", SBX_FT_STR, SBX_KBIT(ROTATE),     \
	  NULL, 8192, NULL, "audit", "the archive's final checkpoint (signed note)")             \
	X(NET_ALLOW, 120, "network allow", "network_allow", SBX_FT_LIST, SBX_KBIT(START), NULL,  \
	  64, sbx_sub_net_pair, "egress",                                                       \
	  "the services the run may reach: each allow entry with each address it resolved to")  \
	X(NET_LIMITS, 121, "net limits", "network_limits", SBX_FT_OBJ, SBX_KBIT(START), NULL, \
	  0, sbx_sub_net_limits, "egress", "the run's [network] limits (a count, bytes, bytes)")  \
	X(NET_CONNS, 125, "connections", "network_connections", SBX_FT_LIST, SBX_KBIT(END), NULL, \
	  1024, sbx_sub_net_conn, "egress",                                                     \
	  "every connection the relay carried: destination, start (ms after START), duration "  \
	  "(ms), bytes each way, how it ended")                                                 \
	X(NET_REFUSED, 126, "refused", "network_refused", SBX_FT_LIST, SBX_KBIT(END), NULL, 256,  \
	  sbx_sub_net_refused, "egress",                                                        \
	  "destinations the payload tried and did not reach, with a count each")                \
	X(NET_CONN_COUNT, 127, "net conns", "network_connection_count", SBX_FT_U64,        \
	  SBX_KBIT(END), "net_connections", 0, NULL, "egress",                                  \
	  "connections the relay accepted, all of them (the list holds each)")                  \
	X(NET_BYTES_OUT, 128, "net bytes out", "network_bytes_out", SBX_FT_U64, SBX_KBIT(END),       \
	  "net_bytes_out", 0, NULL, "egress", "bytes delivered to the services, all connections") \
	X(NET_BYTES_IN, 129, "net bytes in", "network_bytes_in", SBX_FT_U64, SBX_KBIT(END),          \
	  "net_bytes_in", 0, NULL, "egress", "bytes delivered to the payload from the services")  \
	X(NET_REFUSED_COUNT, 130, "net refused", "network_refused_count", SBX_FT_U64,        \
	  SBX_KBIT(END), "net_refused", 0, NULL, "egress",                                      \
	  "refused connect attempts, all of them")                                              \
	X(NET_UNLISTED, 131, "refused, more", "network_refused_unlisted", SBX_FT_U64,       \
	  SBX_KBIT(END), NULL, 0, NULL, "egress",                                               \
	  "refused attempts beyond the first 256 destinations, counted, not listed")            \
	X(NET_LIMITS_HIT, 132, "net at limit", "network_limits_reached", SBX_FT_STR,    \
	  SBX_KBIT(END), "net_limits", 64, NULL, "egress",                                      \
	  "the [network] limits the run reached, space-separated (connections bytes_out bytes_in)") \
	X(NET_REPORT, 133, "net report", "network_report", SBX_FT_STR, SBX_KBIT(END), NULL,   \
	  128, NULL, "egress", "\"complete\", or why the relay's report is not")                 \
	X(NET_REACHED, 134, "reached", "network_reached", SBX_FT_STR, SBX_KBIT(END),             \
	  "net_reached", 65536, NULL, "egress",                                                 \
	  "a JSON array of the destinations reached, each \"HOST:PORT\" as the policy names it "  \
	  "and as an address (sbx-audit search --dest, report)")                                \
	X(NET_REFUSED_DESTS, 135, "refused dests", "network_refused_destinations",        \
	  SBX_FT_STR, SBX_KBIT(END), "net_refused_dests", 16384, NULL, "egress",                \
	  "a JSON array of the destinations refused, each \"ADDRESS:PORT\"") \
	X(ENV_IMAGE, 140, "image", "image", SBX_FT_STR, SBX_KBIT(START), "image", 64, NULL,      \
	  "images", "the image the run's /usr came from (sbx-image(8)), or \"host\"")             \
	X(ENV_DIGEST, 141, "image digest", "image_digest", SBX_FT_DIGEST, SBX_KBIT(START),       \
	  "image_digest", 0, NULL, "images",                                                    \
	  "the image's content digest, or the host's package-set digest (docs/image-digest.md)") \
	X(INTERP_PACKAGE, 142, "interp package", "interpreter_package", SBX_FT_STR,         \
	  SBX_KBIT(START), NULL, 128, NULL, "images",                                           \
	  "the Debian package the interpreter belongs to, in the run's tree")                   \
	X(INTERP_VERSION, 143, "interp version", "interpreter_version", SBX_FT_STR,         \
	  SBX_KBIT(START), NULL, 128, NULL, "images", "that package's version") \
	X(CELL, 160, "cell", "cell", SBX_FT_U64, SBX_KBIT(START) | SBX_KBIT(END), "cell", 0, NULL,  \
	  "sessions", "a live session's call: its number (1, 2, ...); its records share the "    \
	  "session's run id, between the session's START and END")                            \
	X(SESSION_STATE, 161, "session state", "session_state", SBX_FT_STR, SBX_KBIT(END), NULL, \
	  64, NULL, "sessions",                                                                  \
	  "a live session after this call or at its end: live, stopped, idle, died: OUTCOME")    \
	X(LIVE_IDLE, 162, "live idle", "live_idle_ms", SBX_FT_U64, SBX_KBIT(START), NULL, 0, \
	  NULL, "sessions", "a live session's START: its idle timeout, ms (live_idle)")      \
	X(LIVE_LIFETIME, 163, "live lifetime", "live_lifetime_ms", SBX_FT_U64,            \
	  SBX_KBIT(START), NULL, 0, NULL, "sessions",                                            \
	  "a live session's START: its lifetime cap, ms (live_lifetime)")                    \
	X(WS_CHANGESET, 180, "changeset", "changeset_sha256", SBX_FT_DIGEST, SBX_KBIT(END),      \
	  "changeset_sha256", 0, NULL, "workspace",                                              \
	  "--workspace: SHA-256 of the changeset manifest (docs/workspace.md)")                 \
	X(WS_ENTRIES, 181, "changeset entries", "changeset_entries", SBX_FT_U64, SBX_KBIT(END),  \
	  NULL, 0, NULL, "workspace", "--workspace: paths the run added, modified or deleted")  \
	X(WS_MISSING, 182, "changeset missing", "changeset_missing", SBX_FT_STR, SBX_KBIT(END),  \
	  NULL, 255, NULL, "workspace",                                                          \
	  "--workspace: why there is no changeset, or why it is incomplete")                   \
	X(WS_DIR, 183, "workspace", "workspace", SBX_FT_OBJ, SBX_KBIT(START), NULL, 0,            \
	  sbx_sub_workdir, "workspace",                                                          \
	  "--workspace: the directory that was the overlay's lower layer (st_dev, st_ino)")     \
	X(WS_LIMIT, 184, "workspace limit", "workspace_bytes", SBX_FT_U64, SBX_KBIT(START),      \
	  NULL, 0, NULL, "workspace", "--workspace: the upper layer's size cap (workspace_size)") \
	X(APPLY_RUN, 185, "applied run", "applied_run", SBX_FT_STR, SBX_KBIT(APPLY),             \
	  "applied_run", 64, NULL, "workspace", "the run whose changeset was applied")            \
	X(APPLY_CHANGESET, 186, "applied changeset", "applied_changeset_sha256", SBX_FT_DIGEST,  \
	  SBX_KBIT(APPLY), NULL, 0, NULL, "workspace",                                           \
	  "SHA-256 of the manifest sbx apply applied (the run's END has the signed one)")       \
	X(APPLY_CHECK, 187, "changeset check", "apply_check", SBX_FT_STR, SBX_KBIT(APPLY), NULL,  \
	  64, NULL, "workspace",                                                                 \
	  "the log's word on the changeset: verified (the run's END signs this digest), or why not") \
	X(APPLY_PHASE, 188, "apply phase", "apply_phase", SBX_FT_STR, SBX_KBIT(APPLY), NULL, 16, \
	  NULL, "workspace", "begin (before any file is written) or end (after the last)")      \
	X(APPLY_SUBSET, 189, "apply subset", "apply_subset", SBX_FT_STR, SBX_KBIT(APPLY), NULL,  \
	  16, NULL, "workspace", "all, or only (sbx apply --only)")                            \
	X(APPLY_PATHS, 190, "apply paths", "apply_paths", SBX_FT_STR, SBX_KBIT(APPLY), NULL,     \
	  16384, NULL, "workspace", "the paths applied (end) or to apply (begin), one a line")   \
	X(APPLY_RESULT, 191, "apply result", "apply_result", SBX_FT_STR, SBX_KBIT(APPLY),        \
	  "apply_result", 32, NULL, "workspace",                                                 \
	  "begun, applied, partial, conflict or refused (sbx(1) WORKSPACES)")                   \
	X(APPLY_FILES, 192, "apply files", "apply_files", SBX_FT_U64, SBX_KBIT(APPLY), NULL, 0,  \
	  NULL, "workspace", "entries written (end) or to write (begin)")                       \
	X(APPLY_BEGIN, 193, "apply begin", "apply_begin", SBX_FT_STR, SBX_KBIT(APPLY), NULL, 64, \
	  NULL, "workspace", "end: the id of this apply's begin record")                         \
	X(ALLOC_TIGHTENED, 200, "allocation tightened", "allocation_tightened", SBX_FT_STR,     \
	  SBX_KBIT(START) | SBX_KBIT(END), NULL, 64, NULL, "fleet",                              \
	  "the limits the caller's cgroups (a Slurm job, a slice) lowered below the policy's and " \
	  "the request's, space-separated policy keys (memory pids cpus); absent when none")    \
	X(ALLOC_NESTED, 201, "allocation nested", "allocation_nested", SBX_FT_STR,             \
	  SBX_KBIT(START) | SBX_KBIT(END), NULL, 64, NULL, "fleet",                              \
	  "the cgroup v1 controllers whose run cgroup was created beneath the caller's (the "    \
	  "allocation's accounting includes the run), space-separated; absent when none")       \
	X(UNRECORDED, 220, "unrecorded refusals", "unrecorded_refusals", SBX_FT_U64,             \
	  SBX_KBIT(START) | SBX_KBIT(REFUSED), NULL, 0, NULL, "sec",                                                 \
	  "requests of this user refused without a record (max_requests_per_minute) since boot") \
	X(REFUSED_CODE, 221, "refused code sha256", "refused_code_sha256", SBX_FT_DIGEST,        \
	  SBX_KBIT(START), NULL, 0, NULL, "sec",                                                 \
	  "SHA-256 of a refused run's code (checked, never recorded as text)")                  \
	X(PARENT_CHECK, 222, "parent check", "parent_check", SBX_FT_STR, SBX_KBIT(START),        \
	  NULL, 64, NULL, "sec",                                                                 \
	  "what the log says of --parent: verified, or why not (the parent field is the caller's claim)")

enum sbx_field_tag {
#define SBX_FIELD_ENUM(sym, tag, label, key, type, kinds, sql, max, sub, owner, doc) \
	SBX_F_##sym = tag,
	SBX_RECORD_FIELDS(SBX_FIELD_ENUM)
#undef SBX_FIELD_ENUM
};

struct sbx_field_def {
	uint16_t tag;
	const char *label;      /* sbx-audit show */
	const char *key;        /* JSON (show --json, export) */
	enum sbx_ftype type;
	unsigned kinds;         /* SBX_KBIT() mask */
	const char *sql;        /* column in table records, or NULL */
	uint32_t max;
	const struct sbx_subfield *sub; /* LIST/OBJ: terminated by key NULL */
	const char *owner;      /* workstream owning the tag range */
	const char *doc;
};
extern const struct sbx_field_def sbx_record_fields[];
extern const size_t sbx_n_record_fields;

/* The row of tag, or NULL (a tag this version does not know). */
const struct sbx_field_def *sbx_field_def(unsigned tag);

/* Tag ranges by owner, for the table's own unit test. */
struct sbx_tag_range {
	const char *owner;
	uint16_t lo, hi;
};
extern const struct sbx_tag_range sbx_tag_ranges[];
extern const size_t sbx_n_tag_ranges;

/* ---- values ---- */

/* One decoded scalar: U64 in u, I64 in i, STR/DIGEST/BYTES in p and n
 * (pointing into the record's extension bytes: valid while it lives). */
struct sbx_fval {
	enum sbx_ftype type;
	uint64_t u;
	int64_t i;
	const unsigned char *p;
	size_t n;
};

/* Extension fields of one record: encoded TLVs in increasing tag order
 * (u16 tag, u32 length, value), malloc'd. */
struct sbx_rext {
	unsigned char *buf;
	size_t len, cap;
};

struct sbx_record;

/*
 * Add a field to rec (any order: kept sorted by tag). Fails (-1, err set)
 * for a tag the table does not have, a type that is not the field's, a
 * value over its max, a tag already present (LIST: use sbx_rec_add_item,
 * which appends), or out of memory. The kinds are checked when the record
 * is encoded (rec->kind may be set later).
 */
int sbx_rec_put_u64(struct sbx_record *rec, unsigned tag, uint64_t v, char *err, size_t errlen);
int sbx_rec_put_i64(struct sbx_record *rec, unsigned tag, int64_t v, char *err, size_t errlen);
int sbx_rec_put_str(struct sbx_record *rec, unsigned tag, const char *s, char *err, size_t errlen);
int sbx_rec_put_bytes(struct sbx_record *rec, unsigned tag, const void *p, size_t n,
		      char *err, size_t errlen);
int sbx_rec_put_digest(struct sbx_record *rec, unsigned tag, const unsigned char d[32],
		       char *err, size_t errlen);
/* OBJ (once) or one more LIST item: vals holds one value per sub-field, in
 * declared order, with .type set to the sub-field's type. */
int sbx_rec_add_item(struct sbx_record *rec, unsigned tag, const struct sbx_fval *vals,
		     size_t n, char *err, size_t errlen);

/*
 * Find a field. Scalar: 1 and *v, 0 when absent. LIST/OBJ: 1 and v->p,
 * v->n the raw value (read items with sbx_rec_items), 0 when absent.
 */
int sbx_rec_get(const struct sbx_record *rec, unsigned tag, struct sbx_fval *v);

/*
 * The items of a LIST or OBJ value (as sbx_rec_get or the iterator give
 * it, already validated): calls fn(item index, values, ctx) for each,
 * values with one entry per sub-field. Returns the item count, or -1 if
 * the bytes are malformed (they never are once validated).
 */
long sbx_rec_items(const struct sbx_field_def *f, const unsigned char *p, size_t n,
		   void (*fn)(size_t idx, const struct sbx_fval *vals, void *ctx), void *ctx);

/* Iterate over the fields in tag order: start with *off = 0; returns 1
 * with tag, def (NULL for a tag this version does not know), value bytes;
 * 0 at the end. Only for validated extensions (decoded or encoded). */
int sbx_rec_next(const struct sbx_record *rec, size_t *off, unsigned *tag,
		 const struct sbx_field_def **def, const unsigned char **p, size_t *n);

/* A scalar value from its bytes (type from the definition). */
int sbx_fval_parse(enum sbx_ftype type, const unsigned char *p, size_t n, struct sbx_fval *v);

/*
 * Check an extension section (n bytes) for kind: TLVs whole, tags strictly
 * increasing, each known field in a kind it may appear in, its value of
 * its type and within max; unknown tags (a newer writer's) are kept as
 * opaque values. Returns 0, or -1 with why (a static string naming the
 * problem) and *at the byte offset.
 */
int sbx_rext_check(const unsigned char *p, size_t n, int kind, const char **why, size_t *at);

/* Release rec's extension bytes. */
void sbx_rext_free(struct sbx_rext *e);

#endif
