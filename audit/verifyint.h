/* SPDX-License-Identifier: ISC */
/*
 * Internals of the verifier shared by its parts: the walk over records
 * (auditverify.c), checkpoints and --state (verifyckpt.c), and the
 * batched, two-thread signature checks of --full (verifysig.c).
 */
#ifndef SBX_VERIFYINT_H
#define SBX_VERIFYINT_H
#include <stdarg.h>

#include "checkpoint.h"
#include "merkle.h"
#include "record.h"

/* Append a finding; expected/actual may be NULL. Sets *oom on failure. */
void vfy_add(struct sbx_verify_report *rep, int *oom, int64_t seq,
	     enum sbx_finding_kind kind, const char *expected, const char *actual,
	     const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* First n bytes of h as lower-case hex with "..." (for expected/actual). */
void vfy_hex(char *out, size_t outlen, const unsigned char *h, size_t n);

/* Printable ASCII rendering of stored bytes for a finding, cut short. */
void vfy_show(char *out, size_t outlen, const unsigned char *s, size_t n);

/*
 * One record as read, with the work that needs no walk state already done
 * by a reader (verifyrows.c): the leaf recomputed from the blob, the blob
 * decoded and the SQL columns compared with it. Stored values are kept
 * only as far as the walk uses them: leaf, chain and sig when they have
 * their right length (the walk looks at nothing else), the origin cut
 * after SBX_ORIGIN_MAX + 1 bytes (longer never verifies).
 */
struct vfy_row {
	int64_t seq;
	unsigned char leaf[32];       /* recomputed: SHA-256(0x00 || blob) */
	unsigned char sleaf[32];      /* stored leaf, when leaf_len is 32 */
	unsigned char chain[32];      /* stored chain, when chain_len is 32 */
	/* SHA-256 chain link from the previous row's stored chain and leaf:
	 * what the walk computes whenever it continues from that stored value
	 * with the recomputed leaf (the usual case), so it need not hash. */
	unsigned char spec[32];
	unsigned char sig[crypto_sign_BYTES];
	int leaf_len, chain_len, sig_len;
	int has_spec;                 /* spec is set (previous row in this chunk, chain 32 bytes) */
	int decoded;                  /* blob decoded: boot_id and realtime_ns are set */
	int finding;                  /* index into the chunk's findings (undecodable or
				       * columns-mismatch, reported if the blob is intact), or -1 */
	size_t olen;                  /* origin bytes, SBX_ORIGIN_MAX + 1 when longer */
	int64_t realtime_ns;
	char boot_id[40];
	char origin[SBX_ORIGIN_MAX + 1];
	/* decoded: what the walk's cross-record checks use */
	int kind;
	char run_id[SBX_ID_LEN + 1];
	unsigned char code_sha256[32];
	uint64_t wall_limit_ms;       /* a live session's START: its lifetime */
	uint64_t cell;                /* a live session's call (record field cell), or 0 */
	int has_policy;               /* START: policy_bytes (its text is in the policy table) */
	unsigned char policy_sha256[32];
	uint64_t policy_bytes;
	int has_after;                /* START: after_checkpoint */
	uint64_t after_size;
	unsigned char after_root[32];
	int has_base;                 /* ROTATE: base_seq, base_chain */
	uint64_t base_seq;
	unsigned char base_chain[32];
};

/* Consecutive records in seq order. */
struct vfy_chunk {
	struct vfy_row *rows;
	size_t n, cap;
	struct sbx_verify_report found; /* findings of single records (see finding) */
	int oom;
};

/*
 * Readers: the records with seq up to the largest seq in the caller's read
 * transaction (begun on a's connection), cut into chunks of consecutive seq
 * ranges of at most chunk_rows records, read and prepared by `threads`
 * threads on their own read-only connections (1: by the caller, on a's
 * connection, inside vfy_reader_next) and handed back in seq order. A
 * thread whose connection cannot be opened is not started; with none the
 * caller reads. Each reader opens its own snapshot: rows that a writer
 * appends meanwhile lie above the range; rows edited meanwhile are seen
 * as one reader saw them, and everything verified is what was read.
 */
struct vfy_reader;
/* Read the records of seq >= from in the caller's snapshot. */
int vfy_reader_start(struct vfy_reader **out, struct sbx_audit *a, int64_t from, int threads,
		     unsigned chunk_rows, char *err, size_t errlen);
/* The next chunk (valid until the next call), or NULL: the end when
 * err[0] is '\0', else a read error or out of memory in err. */
const struct vfy_chunk *vfy_reader_next(struct vfy_reader *r, char *err, size_t errlen);
/* Stops and joins the threads, closes their connections, frees r. */
void vfy_reader_free(struct vfy_reader *r);

/* Checkpoints: verified against pk before the walk, then compared with the
 * root of each prefix of the leaves as the walk reaches its size. */
struct vfy_ckpt {
	struct sbx_checkpoint *cps;   /* valid stored checkpoints, by size */
	char **notes;                 /* their notes */
	size_t n, next;
	struct sbx_mtree tree;        /* the leaves walked so far */
	struct sbx_checkpoint state;  /* --state */
	int have_state, state_seen;
	const struct sbx_checkpoint *wit; /* --witness, by size */
	size_t n_wit, wnext;
	uint64_t last_good;           /* size of the newest checkpoint that held */
	size_t last_good_i;
	size_t ref_hint;              /* cps index vfy_ckpt_ref found last */
};

/* Load and check the stored checkpoints and the state note. Findings for
 * bad ones go to rep. Returns 0, or -1 with err (cannot read). */
/* trusted: records an earlier verify walked (incremental; 0: none):
 * checkpoints within them are parsed, not checked again. */
int vfy_ckpt_load(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  const struct sbx_verify_opts *opts, uint64_t trusted,
		  struct sbx_verify_report *rep, int *oom, char *err, size_t errlen);
/* Incremental: continue the tree from the frontier of the first trusted
 * records (after vfy_ckpt_base). Returns 0, -1 if the frontier is not a
 * tree of that size. */
int vfy_ckpt_resume(struct vfy_ckpt *c, const unsigned char *frontier, size_t len,
		    uint64_t trusted, struct sbx_verify_report *rep);
/* A rotated log (rep->base_seq > 0): start the tree at the base
 * checkpoint's frontier and count that checkpoint as the first good one;
 * a missing or wrong one is a checkpoint-bad finding. Returns 0. */
int vfy_ckpt_base(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  struct sbx_verify_report *rep, int *oom);
/* One more leaf (the walk's seq-th record, leaf as recomputed). */
void vfy_ckpt_leaf(struct vfy_ckpt *c, int64_t seq, const unsigned char leaf[32],
		   struct sbx_verify_report *rep, int *oom);
/* A START's after_checkpoint: that kept checkpoint must be stored (or
 * lie before the base of a rotated log, in its archive). */
void vfy_ckpt_ref(struct vfy_ckpt *c, const struct vfy_row *row, uint64_t base,
		  struct sbx_verify_report *rep, int *oom);
/* After the walk: truncation, --state, rep->latest_note, and the tail
 * warning unless the records after the last checkpoint are tail_ok runs
 * in progress. */
void vfy_ckpt_finish(struct vfy_ckpt *c, struct sbx_verify_report *rep, int *oom,
		     uint64_t tail_ok);
void vfy_ckpt_free(struct vfy_ckpt *c);

/* Across records (verifyruns.c): START/END pairing and the STARTs' code. */
struct vfy_runs;
int vfy_runs_init(struct vfy_runs **out);
/* One decoded record, in seq order: an END without its START is a finding. */
void vfy_runs_row(struct vfy_runs *r, const struct vfy_row *row, struct sbx_verify_report *rep,
		  int *oom);
/* A hint: row comes soon; its code digest's slot is loaded meanwhile. */
void vfy_runs_prefetch(const struct vfy_runs *r, const struct vfy_row *row);
/* A record whose content is not known (its blob was altered): no pairing
 * finding is made that it could explain. */
void vfy_runs_unknown(struct vfy_runs *r, int64_t seq);
/* After the walk: each START without END is incomplete when older than
 * its wall-time limit allows at now_ns, else in progress (counted in
 * rep->n_in_progress; *tail_in_progress counts those after seq tail_from). */
void vfy_runs_finish(struct vfy_runs *r, int64_t now_ns, uint64_t tail_from,
		     struct sbx_verify_report *rep, int *oom, uint64_t *tail_in_progress);
/* The STARTs' code digests, sorted and unique: their count, then the
 * i-th digest with the seq of its first START (NULL past the end). */
size_t vfy_runs_codes(struct vfy_runs *r);
const unsigned char *vfy_runs_code(const struct vfy_runs *r, size_t i, int64_t *seq);
/* The same for the STARTs' policy texts (digest and size; a digest under
 * two sizes is kept twice): count, then the i-th digest, its seq and size. */
size_t vfy_runs_policies(struct vfy_runs *r);
const unsigned char *vfy_runs_policy(const struct vfy_runs *r, size_t i, int64_t *seq, uint64_t *bytes);
void vfy_runs_free(struct vfy_runs *r);
/* Incremental verify: the runs a state saw open (their STARTs are not
 * walked again). Returns 0, -1 when out of memory. */
int vfy_runs_seed(struct vfy_runs *r, const struct sbx_open_run *open, size_t n);
/* The runs open now, for the next state (*out malloc'd). Returns 1, 0 when
 * they cannot be carried (too many, or an id a state line cannot hold:
 * the next verify walks the whole log), -1 when out of memory. */
int vfy_runs_export(const struct vfy_runs *r, struct sbx_open_run **out, size_t *n);

/* Signatures checked later, in batches, on one thread per CPU. */
struct vfy_sig_job {
	int64_t seq;
	unsigned char chain[32];
	unsigned char sig[crypto_sign_BYTES];
	size_t olen;
	char origin[SBX_ORIGIN_MAX + 1];
	int ok;
};
#define VFY_SIG_BATCH 4096
struct vfy_sigs {
	const unsigned char *pk;
	struct vfy_sig_job *jobs;     /* VFY_SIG_BATCH */
	size_t n;
};
int vfy_sigs_init(struct vfy_sigs *s, const unsigned char *pk);
/* Queue one check; flushes when the batch is full. */
void vfy_sigs_queue(struct vfy_sigs *s, int64_t seq, const unsigned char chain[32],
		    const unsigned char *sig, const char *origin, size_t olen,
		    struct sbx_verify_report *rep, int *oom);
/* Check what is queued; a finding per failure. */
void vfy_sigs_flush(struct vfy_sigs *s, struct sbx_verify_report *rep, int *oom);
void vfy_sigs_free(struct vfy_sigs *s);

#endif
