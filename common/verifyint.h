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

/* Checkpoints: verified against pk before the walk, then compared with the
 * root of each prefix of the leaves as the walk reaches its size. */
struct vfy_ckpt {
	struct sbx_checkpoint *cps;   /* valid stored checkpoints, by size */
	char **notes;                 /* their notes */
	size_t n, next;
	struct sbx_mtree tree;        /* the leaves walked so far */
	struct sbx_checkpoint state;  /* --state */
	int have_state, state_seen;
	uint64_t last_good;           /* size of the newest checkpoint that held */
	size_t last_good_i;
};

/* Load and check the stored checkpoints and the state note. Findings for
 * bad ones go to rep. Returns 0, or -1 with err (cannot read). */
int vfy_ckpt_load(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  const struct sbx_verify_opts *opts, struct sbx_verify_report *rep,
		  int *oom, char *err, size_t errlen);
/* A rotated log (rep->base_seq > 0): start the tree at the base
 * checkpoint's frontier and count that checkpoint as the first good one;
 * a missing or wrong one is a checkpoint-bad finding. Returns 0. */
int vfy_ckpt_base(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  struct sbx_verify_report *rep, int *oom);
/* One more leaf (the walk's seq-th record, leaf as recomputed). */
void vfy_ckpt_leaf(struct vfy_ckpt *c, int64_t seq, const unsigned char leaf[32],
		   struct sbx_verify_report *rep, int *oom);
/* After the walk: truncation, --state, tail warning, rep->latest_note. */
void vfy_ckpt_finish(struct vfy_ckpt *c, struct sbx_verify_report *rep, int *oom);
void vfy_ckpt_free(struct vfy_ckpt *c);

/* Signatures checked later, in batches, on two threads. */
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
