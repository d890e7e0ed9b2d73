/* SPDX-License-Identifier: ISC */
/*
 * Checks of the verifier that span records: every END has its START
 * before it (an END without one means the START was removed), a START
 * without END is a run in progress while its wall-time limit allows,
 * else incomplete; and the code and policy digests of the STARTs, which
 * the code and policy tables must hold (code-missing, policy-missing:
 * auditverify.c looks them up).
 *
 * Open runs are kept in an open-addressing hash table keyed by run id:
 * an entry lives from START to END, so the table holds the runs in
 * progress, not the log.
 */
#include "verifyint.h"

#include <inttypes.h>
#include <stdio.h>
#include <bsd/string.h>
#include <stdlib.h>
#include <string.h>

/* How long after its START a run may still end: its wall-time limit, the
 * kill, the collector (30 s at most) and the recorder's flush, rounded up
 * generously; a policy without a wall-time limit gets a day. */
#define END_SLACK_NS (120LL * 1000000000)
#define NO_LIMIT_NS (86400LL * 1000000000)

struct open_run {
	char id[SBX_OPEN_KEY_LEN + 1]; /* run id, "/CELL" for a live session's call; "" free; "\x01" removed */
	int64_t seq, realtime_ns;
	uint64_t wall_ms;
};

struct code_ref {
	unsigned char sha256[32];
	int64_t seq;                  /* the first START that ran it */
	int used;                     /* a slot of the table that holds one */
};

struct policy_ref {
	unsigned char sha256[32];
	uint64_t bytes;
	int64_t seq;                  /* the first START under it */
};

struct vfy_runs {
	struct open_run *t;
	size_t cap, used;             /* used: live and removed entries */
	size_t live;                  /* runs in progress */
	/* One per digest: during the walk an open-addressing table of
	 * code_cap slots (a power of two, at least twice n_codes), the
	 * digests in the slots themselves, so that a lookup touches one
	 * cache line (with an index into a separate array, two cache misses
	 * per START made these lookups a sixth of the walk's time); 48
	 * bytes a slot, 2 to 4 slots per distinct digest. After
	 * vfy_runs_codes (the walk is over), n_codes dense entries sorted
	 * by digest (code_cap 0). */
	struct code_ref *codes;
	size_t n_codes, code_cap;
	struct policy_ref *pols;
	size_t n_pols, cap_pols;
	int64_t undecodable;          /* seq of the newest record not known (undecodable or altered) */
};

int vfy_runs_init(struct vfy_runs **out)
{
	struct vfy_runs *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -1;
	r->cap = 256;
	r->t = calloc(r->cap, sizeof(*r->t));
	if (r->t == NULL) {
		free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void vfy_runs_free(struct vfy_runs *r)
{
	if (r == NULL)
		return;
	free(r->t);
	free(r->codes);
	free(r->pols);
	free(r);
}

static size_t hash(const char *id)
{
	size_t h = 1469598103934665603ULL;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 1099511628211ULL;
	return h;
}

/* The slot of id, or of the first free slot on its probe path. */
static struct open_run *slot(struct vfy_runs *r, const char *id, int for_insert)
{
	size_t i = hash(id) & (r->cap - 1);
	struct open_run *removed = NULL;

	for (;; i = (i + 1) & (r->cap - 1)) {
		struct open_run *e = &r->t[i];
		if (e->id[0] == '\0')
			return for_insert && removed ? removed : e;
		if (e->id[0] == '\x01') {
			if (removed == NULL)
				removed = e;
		} else if (strcmp(e->id, id) == 0) {
			return e;
		}
	}
}

/* Rehash into a table four times the live entries (at least 256): the
 * removed ones are dropped, so a long log of short runs keeps a small
 * table with short probe paths. */
static int grow(struct vfy_runs *r)
{
	struct open_run *old = r->t;
	size_t n = r->cap, i, ncap = 256;

	while (ncap < 4 * (r->live + 1))
		ncap *= 2;
	r->t = calloc(ncap, sizeof(*r->t));
	if (r->t == NULL) {
		r->t = old;
		return -1;
	}
	r->cap = ncap;
	r->used = 0;
	for (i = 0; i < n; i++) {
		if (old[i].id[0] == '\0' || old[i].id[0] == '\x01')
			continue;
		*slot(r, old[i].id, 1) = old[i];
		r->used++;
	}
	free(old);
	return 0;
}

/* The pairing key: the run id, and a live session's call's cell
 * ("%.32s/%" PRIu64). By hand: snprintf was half the cost of pairing,
 * which makes one key per record. k holds SBX_OPEN_KEY_LEN + 1 bytes. */
static void run_key(const struct vfy_row *row, char k[SBX_OPEN_KEY_LEN + 1])
{
	size_t n = strnlen(row->run_id, 32), d = 0;
	char digits[20];
	uint64_t c = row->cell;

	memcpy(k, row->run_id, n);
	if (c != 0) {
		k[n++] = '/';
		for (; c != 0; c /= 10)
			digits[d++] = (char)('0' + c % 10);
		while (d > 0)
			k[n++] = digits[--d];
	}
	k[n] = '\0';
}

/* The slot of digest d in a table of cap slots (its first 8 bytes are as
 * good a hash as any: SHA-256 output), or the free slot where it would go. */
static struct code_ref *code_slot(struct code_ref *t, size_t cap, const unsigned char *d)
{
	uint64_t h;
	size_t i;

	memcpy(&h, d, sizeof(h));
	for (i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].used || memcmp(t[i].sha256, d, 32) == 0)
			return &t[i];
}

static int code_grow(struct vfy_runs *r)
{
	size_t ncap = r->code_cap ? 2 * r->code_cap : 4096, i;
	struct code_ref *t = calloc(ncap, sizeof(*t));

	if (t == NULL)
		return -1;
	for (i = 0; i < r->code_cap; i++)
		if (r->codes[i].used)
			*code_slot(t, ncap, r->codes[i].sha256) = r->codes[i];
	free(r->codes);
	r->codes = t;
	r->code_cap = ncap;
	return 0;
}

void vfy_runs_prefetch(const struct vfy_runs *r, const struct vfy_row *row)
{
	uint64_t h;

	if (row->kind != SBX_REC_START || r->code_cap == 0)
		return;
	memcpy(&h, row->code_sha256, sizeof(h));
	__builtin_prefetch(&r->codes[(size_t)h & (r->code_cap - 1)]);
}

/* A START's code digest, once: the walk is in seq order, so the first seq
 * kept is the first START that ran it. Deduplicated as the walk goes (a
 * log runs the same code many times: sorting one entry per START after
 * the walk was the verifier's longest serial step). */
static void add_code(struct vfy_runs *r, const struct vfy_row *row, int *oom)
{
	struct code_ref *e;

	if (2 * (r->n_codes + 1) > r->code_cap &&
	    (r->code_cap > SIZE_MAX / 2 / sizeof(*e) || code_grow(r) < 0)) {
		*oom = 1;
		return;
	}
	e = code_slot(r->codes, r->code_cap, row->code_sha256);
	if (e->used)
		return;
	memcpy(e->sha256, row->code_sha256, 32);
	e->seq = row->seq;
	e->used = 1;
	r->n_codes++;
}

/* A START's policy text: runs mostly follow one another under a few
 * policies, so a digest seen among the last few refs is not kept again
 * (vfy_runs_policies sorts and removes the other repeats). */
static void add_policy(struct vfy_runs *r, const struct vfy_row *row, int *oom)
{
	size_t i;

	for (i = r->n_pols; i > 0 && i + 4 > r->n_pols; i--)
		if (r->pols[i - 1].bytes == row->policy_bytes &&
		    memcmp(r->pols[i - 1].sha256, row->policy_sha256, 32) == 0)
			return;
	if (r->n_pols == r->cap_pols) {
		size_t nc = r->cap_pols ? 2 * r->cap_pols : 64;
		struct policy_ref *g = realloc(r->pols, nc * sizeof(*g));
		if (g == NULL) {
			*oom = 1;
			return;
		}
		r->pols = g;
		r->cap_pols = nc;
	}
	memcpy(r->pols[r->n_pols].sha256, row->policy_sha256, 32);
	r->pols[r->n_pols].bytes = row->policy_bytes;
	r->pols[r->n_pols++].seq = row->seq;
}

static void start(struct vfy_runs *r, const struct vfy_row *row, int *oom)
{
	struct open_run *e;
	char key[SBX_OPEN_KEY_LEN + 1];

	if (row->run_id[0] == '\0' || row->run_id[0] == '\x01')
		return;
	if (2 * (r->used + 1) > r->cap && grow(r) < 0) {
		*oom = 1;
		return;
	}
	run_key(row, key);
	e = slot(r, key, 1);
	if (e->id[0] == '\0')
		r->used++;
	if (e->id[0] == '\0' || e->id[0] == '\x01')
		r->live++;
	strlcpy(e->id, key, sizeof(e->id));
	e->seq = row->seq;
	e->realtime_ns = row->realtime_ns;
	e->wall_ms = row->wall_limit_ms;
	add_code(r, row, oom);
	if (row->has_policy)
		add_policy(r, row, oom);
}

void vfy_runs_unknown(struct vfy_runs *r, int64_t seq)
{
	r->undecodable = seq;
}

void vfy_runs_row(struct vfy_runs *r, const struct vfy_row *row, struct sbx_verify_report *rep,
		  int *oom)
{
	struct open_run *e;

	if (!row->decoded) {
		/* any START or END it was: pairing findings near it would only
		 * repeat the undecodable one */
		r->undecodable = row->seq;
		return;
	}
	if (row->kind == SBX_REC_START) {
		start(r, row, oom);
		return;
	}
	if (row->kind != SBX_REC_END)
		return;
	char key[SBX_OPEN_KEY_LEN + 1];
	run_key(row, key);
	e = slot(r, key, 0);
	if (e->id[0] == '\0') {
		char want[48];
		if (r->undecodable != 0)
			return; /* its START may be the record that did not decode */
		snprintf(want, sizeof(want), "a START of run %.16s...", row->run_id);
		vfy_add(rep, oom, row->seq, SBX_FIND_END_WITHOUT_START, want, "none",
			"END of run %.32s has no START before it (its START was removed)", row->run_id);
		return;
	}
	e->id[0] = '\x01';
	r->live--;
}

void vfy_runs_finish(struct vfy_runs *r, int64_t now_ns, uint64_t tail_from,
		     struct sbx_verify_report *rep, int *oom, uint64_t *tail_in_progress)
{
	size_t i;

	*tail_in_progress = 0;
	for (i = 0; i < r->cap; i++) {
		const struct open_run *e = &r->t[i];
		int64_t allowed;
		if (e->id[0] == '\0' || e->id[0] == '\x01')
			continue;
		if (e->seq < r->undecodable)
			continue; /* its END may be the record that did not decode */
		allowed = e->wall_ms ? (int64_t)(e->wall_ms > INT64_MAX / 2000000 ? INT64_MAX / 2 :
						 e->wall_ms * 1000000) : NO_LIMIT_NS;
		if (now_ns - e->realtime_ns > allowed + END_SLACK_NS) {
			vfy_add(rep, oom, e->seq, SBX_FIND_INCOMPLETE, "an END", "none",
				"run %.32s started %.0f s ago and has no END (its wall-time limit is "
				"%" PRIu64 " ms: the recorder died, or the END was never written)",
				e->id, (double)(now_ns - e->realtime_ns) / 1e9, e->wall_ms);
			continue;
		}
		rep->n_in_progress++;
		if (e->seq > (int64_t)tail_from)
			(*tail_in_progress)++;
	}
}

static int cmp_code(const void *a, const void *b)
{
	const struct code_ref *x = a, *y = b;
	int c = memcmp(x->sha256, y->sha256, 32);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

size_t vfy_runs_codes(struct vfy_runs *r)
{
	size_t i, k = 0;

	/* unique already: the used slots to the front, then sorted */
	for (i = 0; i < r->code_cap; i++)
		if (r->codes[i].used)
			r->codes[k++] = r->codes[i];
	r->code_cap = 0;
	/* none (a log without START records): qsort's base may be NULL then,
	 * which C forbids (UBSan) */
	if (r->n_codes > 1)
		qsort(r->codes, r->n_codes, sizeof(*r->codes), cmp_code);
	return r->n_codes;
}

const unsigned char *vfy_runs_code(const struct vfy_runs *r, size_t i, int64_t *seq)
{
	if (i >= r->n_codes)
		return NULL;
	*seq = r->codes[i].seq;
	return r->codes[i].sha256;
}

static int cmp_policy(const void *a, const void *b)
{
	const struct policy_ref *x = a, *y = b;
	int c = memcmp(x->sha256, y->sha256, 32);

	if (c == 0)
		c = (x->bytes > y->bytes) - (x->bytes < y->bytes);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

size_t vfy_runs_policies(struct vfy_runs *r)
{
	size_t i, n = 0;

	/* none before the policy table existed: a NULL base (UBSan) */
	if (r->n_pols > 1)
		qsort(r->pols, r->n_pols, sizeof(*r->pols), cmp_policy);
	for (i = 0; i < r->n_pols; i++)
		if (n == 0 || r->pols[n - 1].bytes != r->pols[i].bytes ||
		    memcmp(r->pols[n - 1].sha256, r->pols[i].sha256, 32) != 0)
			r->pols[n++] = r->pols[i];
	r->n_pols = n;
	return n;
}

const unsigned char *vfy_runs_policy(const struct vfy_runs *r, size_t i, int64_t *seq, uint64_t *bytes)
{
	if (i >= r->n_pols)
		return NULL;
	*seq = r->pols[i].seq;
	*bytes = r->pols[i].bytes;
	return r->pols[i].sha256;
}

/* Only what a state file's "open" line can carry back (statefile.h). */
static int id_ok(const char *id)
{
	size_t i;

	for (i = 0; id[i]; i++)
		if ((unsigned char)id[i] <= 0x20 || (unsigned char)id[i] >= 0x7f)
			return 0;
	return i > 0;
}

int vfy_runs_seed(struct vfy_runs *r, const struct sbx_open_run *open, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct open_run *e;
		if (!id_ok(open[i].run_id))
			continue;
		if (2 * (r->used + 1) > r->cap && grow(r) < 0)
			return -1;
		e = slot(r, open[i].run_id, 1);
		if (e->id[0] == '\0')
			r->used++;
		if (e->id[0] == '\0' || e->id[0] == '\x01')
			r->live++;
		strlcpy(e->id, open[i].run_id, sizeof(e->id));
		e->seq = open[i].seq;
		e->realtime_ns = open[i].realtime_ns;
		e->wall_ms = open[i].wall_ms;
	}
	return 0;
}

int vfy_runs_export(const struct vfy_runs *r, struct sbx_open_run **out, size_t *n)
{
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (r->live > SBX_STATE_MAX_OPEN)
		return 0;
	*out = calloc(r->live ? r->live : 1, sizeof(**out));
	if (*out == NULL)
		return -1;
	for (i = 0; i < r->cap && k < r->live; i++) {
		const struct open_run *e = &r->t[i];
		if (e->id[0] == '\0' || e->id[0] == '\x01')
			continue;
		if (!id_ok(e->id)) {
			free(*out);
			*out = NULL;
			return 0;
		}
		strlcpy((*out)[k].run_id, e->id, sizeof((*out)[k].run_id));
		(*out)[k].seq = e->seq;
		(*out)[k].realtime_ns = e->realtime_ns;
		(*out)[k++].wall_ms = e->wall_ms;
	}
	*n = k;
	return 1;
}
