/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints in verification. A stored checkpoint must be signed by the
 * log's key and its root must be the RFC 6962 root of the first `size`
 * leaves as they are now; a checkpoint larger than the log means records
 * were cut from the end. The --state checkpoint is the auditor's own copy
 * of an earlier one, kept outside the log, so it also catches a log cut
 * back together with its checkpoints, rolled back to an older copy, or
 * replaced by one signed with another key.
 */
#include "auditdb.h"
#include "rotate.h"
#include "verifyint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vfy_hex(char *out, size_t outlen, const unsigned char *h, size_t n)
{
	char buf[65];

	if (n > 8)
		n = 8;
	sodium_bin2hex(buf, sizeof(buf), h, n);
	snprintf(out, outlen, "%s...", buf);
}

/*
 * A checkpoint names its log by its origin; one of another origin signed
 * with the same key is another log's (or the key is shared), never this
 * log's tree: dropped with a finding. The pin is the verifier key's name
 * (verify --key) or --origin.
 */
static void pin_origin(struct vfy_ckpt *c, const char *pin, struct sbx_verify_report *rep,
		       int *oom)
{
	size_t i, k = 0;

	if (pin == NULL)
		return;
	if (c->have_state && strcmp(c->state.origin, pin) != 0) {
		vfy_add(rep, oom, 0, SBX_FIND_LOG_REPLACED, pin, c->state.origin,
			"the saved checkpoint (--state) is of origin %s, not the pinned %s",
			c->state.origin, pin);
		c->have_state = 0;
	}
	for (i = 0; i < c->n; i++) {
		if (strcmp(c->cps[i].origin, pin) == 0) {
			c->cps[k] = c->cps[i];
			c->notes[k++] = c->notes[i];
			continue;
		}
		vfy_add(rep, oom, (int64_t)c->cps[i].size, SBX_FIND_CHECKPOINT_BAD, pin,
			c->cps[i].origin, "stored checkpoint of %" PRIu64 " records names origin "
			"%s, not the pinned %s (another log's checkpoint)", c->cps[i].size,
			c->cps[i].origin, pin);
		free(c->notes[i]);
	}
	c->n = k;
}

int vfy_ckpt_load(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  const struct sbx_verify_opts *opts, uint64_t trusted,
		  struct sbx_verify_report *rep, int *oom, char *err, size_t errlen)
{
	char **notes;
	size_t n, i;
	char why[200];

	memset(c, 0, sizeof(*c));
	sbx_mtree_init(&c->tree);
	if (sbx_audit_checkpoint_notes(a, &notes, &n, err, errlen) < 0)
		return -1;
	c->cps = calloc(n ? n : 1, sizeof(*c->cps));
	c->notes = calloc(n ? n : 1, sizeof(*c->notes));
	if (c->cps == NULL || c->notes == NULL) {
		sbx_checkpoint_notes_free(notes, n);
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct sbx_checkpoint cp;
		size_t len = strlen(notes[i]);
		/* Incremental: a checkpoint within the records an earlier verify
		 * walked was checked then (signature and root). */
		int known = trusted > 0 && sbx_checkpoint_parse(notes[i], len, &cp, NULL, 0) == 0 &&
			    cp.size <= trusted;
		if (!known && sbx_checkpoint_open(notes[i], len, pk, &cp, why, sizeof(why)) < 0) {
			vfy_add(rep, oom, 0, SBX_FIND_CHECKPOINT_BAD, "signed by the log's key",
				why, "stored checkpoint %zu: %s", i + 1, why);
			free(notes[i]);
			continue;
		}
		/* Sorted by size in SQL; the note's own size is what counts. */
		if (c->n > 0 && cp.size <= c->cps[c->n - 1].size) {
			vfy_add(rep, oom, (int64_t)cp.size, SBX_FIND_CHECKPOINT_BAD, NULL, NULL,
				"stored checkpoint %zu: tree size %" PRIu64 " out of order", i + 1, cp.size);
			free(notes[i]);
			continue;
		}
		c->cps[c->n] = cp;
		c->notes[c->n++] = notes[i];
	}
	free(notes);
	if (opts->state_note != NULL) {
		if (sbx_checkpoint_open(opts->state_note, opts->state_len, pk, &c->state, why,
					sizeof(why)) < 0)
			vfy_add(rep, oom, 0, SBX_FIND_LOG_REPLACED, "saved checkpoint signed by this key",
				why, "the saved checkpoint (--state) does not verify with this "
				"public key: %s (log or key replaced, or a wrong state file)", why);
		else
			c->have_state = 1;
	}
	pin_origin(c, opts->origin, rep, oom);
	c->wit = opts->witness;
	c->n_wit = opts->n_witness;
	return 0;
}

int vfy_ckpt_base(struct vfy_ckpt *c, struct sbx_audit *a, const unsigned char *pk,
		  struct sbx_verify_report *rep, int *oom)
{
	uint64_t base = rep->base_seq;
	char why[256];

	if (base == 0) {
		sbx_mtree_root(&c->tree, rep->base_root);
		return 0;
	}
	if (sbx_audit_base_tree(a, base, pk, &c->tree, rep->base_root, why, sizeof(why)) < 0) {
		/* Without the base tree every later root differs: say why once. */
		vfy_add(rep, oom, (int64_t)base, SBX_FIND_CHECKPOINT_BAD, "signed base checkpoint",
			"missing or altered", "rotated log: %s", why);
		c->tree.size = base; /* keep leaf numbering; roots will not match */
	}
	while (c->next < c->n && c->cps[c->next].size <= base) {
		if (c->cps[c->next].size == base) {
			c->last_good = base;
			c->last_good_i = c->next;
			rep->n_checkpoints++;
		}
		c->next++;
	}
	while (c->wnext < c->n_wit && c->wit[c->wnext].size <= base)
		c->wnext++; /* archived records: verify --archive with the archive */
	if (c->have_state && c->state.size <= base) {
		/* An older saved checkpoint covers archived records only: verify
		 * --archive checks it; here only its size is known to be fine. */
		c->state_seen = 1;
		if (c->state.size == base && sodium_memcmp(c->state.root, rep->base_root, 32) != 0)
			vfy_add(rep, oom, (int64_t)base, SBX_FIND_FORKED, NULL, NULL,
				"the saved checkpoint (--state) is not the rotation base");
	}
	return 0;
}

int vfy_ckpt_resume(struct vfy_ckpt *c, const unsigned char *frontier, size_t len,
		    uint64_t trusted, struct sbx_verify_report *rep)
{
	if (sbx_mtree_load(&c->tree, frontier, len) < 0 || c->tree.size != trusted)
		return -1;
	while (c->next < c->n && c->cps[c->next].size <= trusted) {
		c->last_good = c->cps[c->next].size;
		c->last_good_i = c->next++;
		rep->n_checkpoints++;
	}
	/* The state's own checkpoint was checked against these records when
	 * the frontier was saved. */
	if (c->have_state && c->state.size <= trusted)
		c->state_seen = 1;
	return 0;
}

/* --witness: the roots other hosts were shown at this size. */
static void check_witness(struct vfy_ckpt *c, int64_t seq, struct sbx_verify_report *rep, int *oom)
{
	unsigned char root[32];
	char e[80], g[80];

	if (c->wnext >= c->n_wit || c->wit[c->wnext].size != c->tree.size)
		return;
	sbx_mtree_root(&c->tree, root);
	for (; c->wnext < c->n_wit && c->wit[c->wnext].size == c->tree.size; c->wnext++) {
		if (sodium_memcmp(root, c->wit[c->wnext].root, 32) == 0)
			continue;
		vfy_hex(e, sizeof(e), c->wit[c->wnext].root, 32);
		vfy_hex(g, sizeof(g), root, 32);
		vfy_add(rep, oom, seq, SBX_FIND_FORKED, e, g,
			"the first %" PRIu64 " records are not the ones a witness's checkpoint "
			"covers (history rewritten and signed again, or a fork)", c->tree.size);
	}
}

void vfy_ckpt_leaf(struct vfy_ckpt *c, int64_t seq, const unsigned char leaf[32],
		   struct sbx_verify_report *rep, int *oom)
{
	unsigned char root[32];
	char e[80], g[80];
	int need_state;

	sbx_mtree_push(&c->tree, leaf);
	check_witness(c, seq, rep, oom);
	need_state = c->have_state && c->state.size == c->tree.size;
	while (c->next < c->n && c->cps[c->next].size < c->tree.size)
		c->next++; /* unreachable with sizes >= 1; kept for safety */
	if (!need_state && (c->next >= c->n || c->cps[c->next].size != c->tree.size))
		return;
	sbx_mtree_root(&c->tree, root);
	if (c->next < c->n && c->cps[c->next].size == c->tree.size) {
		if (sodium_memcmp(root, c->cps[c->next].root, 32) != 0) {
			vfy_hex(e, sizeof(e), c->cps[c->next].root, 32);
			vfy_hex(g, sizeof(g), root, 32);
			vfy_add(rep, oom, seq, SBX_FIND_CHECKPOINT_MISMATCH, e, g,
				"the first %" PRIu64 " records no longer give the Merkle root the "
				"checkpoint signed (a covered record was altered, inserted, removed or moved)",
				c->tree.size);
		} else {
			c->last_good = c->tree.size;
			c->last_good_i = c->next;
			rep->n_checkpoints++;
		}
		c->next++;
	}
	if (need_state) {
		c->state_seen = 1;
		if (sodium_memcmp(root, c->state.root, 32) != 0) {
			vfy_hex(e, sizeof(e), c->state.root, 32);
			vfy_hex(g, sizeof(g), root, 32);
			vfy_add(rep, oom, seq, SBX_FIND_FORKED, e, g,
				"the log's first %" PRIu64 " records are not the ones the saved "
				"checkpoint (--state) covers (history rewritten, rolled back and "
				"appended to, or log replaced)", c->state.size);
		}
	}
}

void vfy_ckpt_ref(struct vfy_ckpt *c, const struct vfy_row *row, uint64_t base,
		  struct sbx_verify_report *rep, int *oom)
{
	size_t lo = 0, hi = c->n;
	char e[80];

	if (!row->has_after || row->after_size < base)
		return; /* before a rotation's base: in the archive */
	if (row->after_size == base && base > 0) {
		if (sodium_memcmp(row->after_root, rep->base_root, 32) != 0)
			vfy_add(rep, oom, row->seq, SBX_FIND_CHECKPOINT_MISSING, NULL, NULL,
				"the START names a checkpoint of %" PRIu64 " records that is not the "
				"rotation base's", row->after_size);
		return;
	}
	/* STARTs name the newest checkpoint of their time: mostly the same
	 * one as the START before */
	if (c->ref_hint < c->n && c->cps[c->ref_hint].size == row->after_size) {
		lo = c->ref_hint;
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (c->cps[mid].size < row->after_size)
				lo = mid + 1;
			else
				hi = mid;
		}
		c->ref_hint = lo;
	}
	/* memcmp: roots are public; e only for a finding (every START has a ref) */
	if (lo < c->n && c->cps[lo].size == row->after_size &&
	    memcmp(c->cps[lo].root, row->after_root, 32) == 0)
		return;
	snprintf(e, sizeof(e), "checkpoint of %" PRIu64 " records", row->after_size);
	if (lo == c->n || c->cps[lo].size != row->after_size)
		vfy_add(rep, oom, row->seq, SBX_FIND_CHECKPOINT_MISSING, e, "none stored",
			"the START names the kept checkpoint of %" PRIu64 " records, which the log "
			"no longer holds (checkpoint rows deleted)", row->after_size);
	else
		vfy_add(rep, oom, row->seq, SBX_FIND_CHECKPOINT_MISSING, e, "another root",
			"the START names a checkpoint of %" PRIu64 " records with another root than "
			"the stored one (checkpoint rows replaced)", row->after_size);
}

void vfy_ckpt_finish(struct vfy_ckpt *c, struct sbx_verify_report *rep, int *oom,
		     uint64_t tail_ok)
{
	char e[80], g[80];
	uint64_t n = c->tree.size;

	snprintf(g, sizeof(g), "%" PRIu64 " records", n);
	for (; c->next < c->n; c->next++) {
		snprintf(e, sizeof(e), ">= %" PRIu64 " records", c->cps[c->next].size);
		vfy_add(rep, oom, (int64_t)n + 1, SBX_FIND_TRUNCATED, e, g,
			"a stored checkpoint covers %" PRIu64 " records but the log has %" PRIu64
			" (records cut from the end)", c->cps[c->next].size, n);
	}
	for (; c->wnext < c->n_wit; c->wnext++) {
		snprintf(e, sizeof(e), ">= %" PRIu64 " records", c->wit[c->wnext].size);
		vfy_add(rep, oom, (int64_t)n + 1, SBX_FIND_ROLLED_BACK, e, g,
			"a witness holds a checkpoint of %" PRIu64 " records but the log has %" PRIu64
			" (rolled back, or records cut and signed again)", c->wit[c->wnext].size, n);
	}
	if (c->have_state && !c->state_seen) {
		snprintf(e, sizeof(e), ">= %" PRIu64 " records", c->state.size);
		vfy_add(rep, oom, (int64_t)n + 1, SBX_FIND_TRUNCATED, e, g,
			"the saved checkpoint (--state) covers %" PRIu64 " records but the log has %"
			PRIu64 " (tail cut, or rolled back to an older copy)", c->state.size, n);
	}
	if (c->have_state && c->state_seen && c->state.size > c->last_good &&
	    c->state.size > rep->base_seq) {
		snprintf(e, sizeof(e), "checkpoint of %" PRIu64 " records", c->state.size);
		snprintf(g, sizeof(g), "newest of %" PRIu64 " records", c->last_good);
		vfy_add(rep, oom, (int64_t)c->state.size, SBX_FIND_CHECKPOINT_MISSING, e, g,
			"the state saw a checkpoint of %" PRIu64 " records, which the log no longer "
			"holds (checkpoint rows deleted)", c->state.size);
	}
	if (n > c->last_good + tail_ok) {
		snprintf(e, sizeof(e), "%" PRIu64 " records checkpointed", n);
		snprintf(g, sizeof(g), "%" PRIu64 " records checkpointed", c->last_good);
		vfy_add(rep, oom, (int64_t)c->last_good + 1, SBX_FIND_UNCHECKPOINTED_TAIL, e, g,
			"%" PRIu64 " records after the last valid checkpoint are covered only by the "
			"chain and the last signature (their removal would not be detected)%s",
			n - c->last_good, tail_ok ? "; runs in progress among them do not count" : "");
	}
	if (c->last_good > 0) {
		rep->latest_size = c->last_good;
		rep->latest_note = strdup(c->notes[c->last_good_i]);
		if (rep->latest_note == NULL)
			*oom = 1;
	}
}

void vfy_ckpt_free(struct vfy_ckpt *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->cps);
	memset(c, 0, sizeof(*c));
}
