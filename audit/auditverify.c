/* SPDX-License-Identifier: ISC */
/*
 * Verification of the audit log with only the public key. Everything read
 * here may have been edited by whoever could write the database file, so
 * each stored value is checked for shape before use, and findings are
 * worded from what the evidence shows (which stored value disagrees with
 * which recomputed one), not from a guess about the attack.
 *
 * One edit should give one finding: the chain is continued from the
 * stored value after a break (so a deleted or inserted row breaks one link,
 * not every later one), a chain value that was itself altered is detected
 * by the signature still matching the recomputed value, and a blob that no
 * longer matches its leaf is not decoded further.
 */
#include "auditdb.h"
#include "rotate.h"
#include "sha256.h"
#include "verifyint.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct walk {
	struct sbx_audit *a;
	const unsigned char *pk;
	struct sbx_verify_report *rep;
	unsigned char prev[32];  /* chain value the next record must extend */
	int64_t expect;          /* next seq */
	int after_gap;           /* the link into this record cannot hold */
	int oom;
	int full;                /* every signature (queued to sigs) */
	struct vfy_sigs sigs;
	struct vfy_ckpt ckpt;
	char last_boot[40];      /* boot id and time of the previous intact record */
	int64_t last_rt;
	struct vfy_sig_job last; /* default mode: the last record's signature */
	int have_last;
	struct vfy_runs *runs;   /* START/END pairing, the STARTs' code */
	const struct sbx_verify_opts *opts;
	int64_t rotate_seq;      /* the ROTATE record that signs the base, or 0 */
	int head_seen;           /* --state: its head record was walked */
	uint64_t trusted;        /* incremental: records 1..trusted verified before */
	struct vfy_reader *reader;
};

static const struct {
	const char *name, *doc;
	int warning;
} kinds[SBX_FIND_NKINDS] = {
#define SBX_FINDING_ROW(sym, n, warn, d) [SBX_FIND_##sym] = {n, d, warn},
	SBX_FINDING_KINDS(SBX_FINDING_ROW)
#undef SBX_FINDING_ROW
};

const char *sbx_finding_kind_name(enum sbx_finding_kind kind)
{
	return kind > SBX_FIND_NONE && kind < SBX_FIND_NKINDS ? kinds[kind].name : "unknown";
}

const char *sbx_finding_kind_doc(enum sbx_finding_kind kind)
{
	return kind > SBX_FIND_NONE && kind < SBX_FIND_NKINDS ? kinds[kind].doc : "";
}

int sbx_finding_is_warning(enum sbx_finding_kind kind)
{
	return kind > SBX_FIND_NONE && kind < SBX_FIND_NKINDS && kinds[kind].warning;
}

static void vadd(struct sbx_verify_report *rep, int *oom, int64_t seq,
		 enum sbx_finding_kind kind, const char *expected, const char *actual,
		 const char *fmt, va_list ap)
{
	struct sbx_finding *f;

	if (rep->n_findings == rep->cap) {
		size_t ncap = rep->cap ? rep->cap * 2 : 16;
		f = realloc(rep->findings, ncap * sizeof(*f));
		if (f == NULL) {
			*oom = 1;
			return;
		}
		rep->findings = f;
		rep->cap = ncap;
	}
	f = &rep->findings[rep->n_findings++];
	f->seq = seq;
	f->kind = kind;
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	snprintf(f->expected, sizeof(f->expected), "%s", expected ? expected : "");
	snprintf(f->actual, sizeof(f->actual), "%s", actual ? actual : "");
}

void vfy_add(struct sbx_verify_report *rep, int *oom, int64_t seq,
	     enum sbx_finding_kind kind, const char *expected, const char *actual,
	     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(rep, oom, seq, kind, expected, actual, fmt, ap);
	va_end(ap);
}

static void add(struct sbx_verify_report *rep, int *oom, int64_t seq,
		enum sbx_finding_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct sbx_verify_report *rep, int *oom, int64_t seq,
		enum sbx_finding_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(rep, oom, seq, kind, NULL, NULL, fmt, ap);
	va_end(ap);
}

/* Fill expected/actual of the finding just added. */
static void ea(struct sbx_verify_report *rep, const char *expected, const char *actual)
{
	struct sbx_finding *f;

	if (rep->n_findings == 0)
		return;
	f = &rep->findings[rep->n_findings - 1];
	snprintf(f->expected, sizeof(f->expected), "%s", expected);
	snprintf(f->actual, sizeof(f->actual), "%s", actual);
}

/* Returns 1 if the blob is intact (decode and columns can be checked). */
static int check_leaf(struct walk *w, const struct vfy_row *row, unsigned char use_leaf[32])
{
	const unsigned char *leaf = row->sleaf;
	const unsigned char *computed = row->leaf;
	int64_t seq = row->seq;
	unsigned char via[32];

	/* memcmp: every value here is public, no secret to time */
	if (row->leaf_len == 32 && memcmp(computed, leaf, 32) == 0) {
		memcpy(use_leaf, leaf, 32);
		return 1;
	}
	/* Which one changed? If the blob still extends the stored chain, the
	 * blob is original and only the stored leaf column was edited. */
	sbx_audit_chain(w->prev, computed, via);
	if (row->chain_len == 32 && memcmp(via, row->chain, 32) == 0) {
		add(w->rep, &w->oom, seq, SBX_FIND_RECORD_MODIFIED,
		    "stored leaf hash altered (the blob still matches the chain)");
		memcpy(use_leaf, computed, 32);
		return 1;
	}
	add(w->rep, &w->oom, seq, SBX_FIND_RECORD_MODIFIED,
	    "blob does not match its leaf hash (record contents altered)");
	{
		char e[80], g[80];
		vfy_hex(e, sizeof(e), row->leaf_len == 32 ? leaf : computed, 32);
		vfy_hex(g, sizeof(g), computed, 32);
		ea(w->rep, e, g);
	}
	memcpy(use_leaf, row->leaf_len == 32 ? leaf : computed, 32);
	return 0;
}

/* The link from w->prev over leaf; the reader's precomputed one when it
 * started from the same values. */
static void next_link(const struct walk *w, const struct vfy_row *row,
		      const unsigned char leaf[32], unsigned char out[32])
{
	if (row->has_spec && memcmp(w->prev, row[-1].chain, 32) == 0 &&
	    memcmp(leaf, row->leaf, 32) == 0)
		memcpy(out, row->spec, 32);
	else
		sbx_audit_chain(w->prev, leaf, out);
}

static void check_chain_sig(struct walk *w, const struct vfy_row *row,
			    const unsigned char leaf[32])
{
	const unsigned char *chain = row->chain;
	const unsigned char *sig = row->sig;
	const char *origin = row->origin;
	size_t olen = row->olen;
	int chain_len = row->chain_len;
	int sig_len = row->sig_len;
	int64_t seq = row->seq;
	unsigned char expected[32];
	const unsigned char *stored_ok = NULL; /* chain, when it extends prev */
	int sig_done = 0;

	next_link(w, row, leaf, expected);
	if (chain_len == 32 && memcmp(expected, chain, 32) == 0)
		stored_ok = chain;
	if (chain_len != 32) {
		add(w->rep, &w->oom, seq, SBX_FIND_CHAIN_BROKEN,
		    "stored chain value is %d bytes, not 32", chain_len);
		chain = expected;
	} else if (memcmp(expected, chain, 32) != 0) {
		if (sig_len == crypto_sign_BYTES &&
		    sbx_audit_sig_ok(w->pk, origin, olen, (uint64_t)seq, expected, sig)) {
			add(w->rep, &w->oom, seq, SBX_FIND_CHAIN_BROKEN,
			    "stored chain value altered (the signature covers the recomputed one)");
			chain = expected;
			sig_done = 1;
		} else if (!w->after_gap) {
			char e[80], g[80];
			add(w->rep, &w->oom, seq, SBX_FIND_CHAIN_BROKEN,
			    "does not extend the chain of the previous record "
			    "(records replaced, inserted, deleted or reordered)");
			vfy_hex(e, sizeof(e), expected, 32);
			vfy_hex(g, sizeof(g), chain, 32);
			ea(w->rep, e, g);
		}
	}
	if (!sig_done && sig_len == crypto_sign_BYTES && chain == stored_ok) {
		/* The usual case: the chain holds. --full checks this signature
		 * in a batch; by default only the last record's is checked. */
		if (w->full) {
			vfy_sigs_queue(&w->sigs, seq, chain, sig, origin, olen, w->rep, &w->oom);
		} else {
			/* the row holds the origin already cut as the job wants it */
			w->have_last = 1;
			w->last.seq = seq;
			memcpy(w->last.chain, chain, 32);
			memcpy(w->last.sig, sig, crypto_sign_BYTES);
			w->last.olen = olen;
			memcpy(w->last.origin, origin, olen > SBX_ORIGIN_MAX ? SBX_ORIGIN_MAX : olen);
		}
	} else if (!sig_done) {
		w->have_last = 0; /* checked here, and a finding if it fails */
		if (sig_len != crypto_sign_BYTES)
			add(w->rep, &w->oom, seq, SBX_FIND_BAD_SIGNATURE,
			    "signature is %d bytes, not %d", sig_len, crypto_sign_BYTES);
		else if (!sbx_audit_sig_ok(w->pk, origin, olen, (uint64_t)seq, chain, sig))
			add(w->rep, &w->oom, seq, SBX_FIND_BAD_SIGNATURE,
			    "signature does not verify with the public key "
			    "(seq, origin, chain or signature altered, or another key)");
	}
	/* Continue from the stored value: the next record was chained to it. */
	memcpy(w->prev, chain, 32);
}

static void check_seq(struct walk *w, int64_t seq)
{
	w->after_gap = 0;
	if (seq > w->expect) {
		char e[40], g[40];
		snprintf(e, sizeof(e), "seq %" PRId64, w->expect);
		snprintf(g, sizeof(g), "seq %" PRId64, seq);
		if (seq - w->expect == 1)
			add(w->rep, &w->oom, w->expect, SBX_FIND_SEQ_GAP,
			    "record %" PRId64 " missing (deleted)", w->expect);
		else
			add(w->rep, &w->oom, w->expect, SBX_FIND_SEQ_GAP,
			    "records %" PRId64 "..%" PRId64 " missing (deleted)",
			    w->expect, seq - 1);
		ea(w->rep, e, g);
		w->after_gap = 1;
	} else if (seq < w->expect) {
		/* Only the first row can get here: seq is the primary key. */
		add(w->rep, &w->oom, seq, SBX_FIND_SEQ_GAP,
		    "seq %" PRId64 " out of range (sequence starts at 1)", seq);
		w->after_gap = 1;
	}
	w->expect = seq < INT64_MAX ? seq + 1 : seq;
}

/* Order is by seq, never by time; a clock that went back within one boot
 * is worth a look (clock set back, or records reordered by hand). A record's
 * time is taken before its append waits for the lock (busy timeout 10 s),
 * so concurrent runs legitimately land up to that much out of order. */
#define TIME_SLACK_NS (10LL * 1000000000)
static void check_time(struct walk *w, const struct vfy_row *row)
{
	if (strcmp(row->boot_id, w->last_boot) == 0 && row->realtime_ns < w->last_rt - TIME_SLACK_NS) {
		char e[48], g[48];
		sbx_iso_time(w->last_rt, e, sizeof(e));
		sbx_iso_time(row->realtime_ns, g, sizeof(g));
		vfy_add(w->rep, &w->oom, row->seq, SBX_FIND_TIME_BACKWARDS, e, g,
			"realtime is %.3f s earlier than the previous record's in the same boot",
			(double)(w->last_rt - row->realtime_ns) / 1e9);
	}
	memcpy(w->last_boot, row->boot_id, sizeof(w->last_boot));
	w->last_rt = row->realtime_ns;
}

/* Copy a finding the reader made for this record. */
static void add_found(struct walk *w, const struct vfy_chunk *c, const struct vfy_row *row)
{
	const struct sbx_finding *f = &c->found.findings[row->finding];

	vfy_add(w->rep, &w->oom, f->seq, f->kind, f->expected, f->actual, "%s", f->what);
}

/* --state: the newest record an earlier verify saw must be unchanged. */
static void check_head(struct walk *w, const struct vfy_row *row)
{
	const struct sbx_verify_opts *o = w->opts;
	char e[80], g[80];

	if (!o->have_head || (uint64_t)row->seq != o->head_seq)
		return;
	w->head_seen = 1;
	if (row->chain_len == 32 && memcmp(row->chain, o->head_chain, 32) == 0 &&
	    row->sig_len == crypto_sign_BYTES && memcmp(row->sig, o->head_sig, crypto_sign_BYTES) == 0)
		return;
	vfy_hex(e, sizeof(e), o->head_chain, 32);
	if (row->chain_len == 32)
		vfy_hex(g, sizeof(g), row->chain, 32);
	else
		snprintf(g, sizeof(g), "a %d-byte chain value", row->chain_len);
	vfy_add(w->rep, &w->oom, row->seq, SBX_FIND_ROLLED_BACK, e, g,
		"record %" PRId64 " is not the one the state saw (the log was rolled back to an "
		"older copy and written again, or history was replaced)", row->seq);
}

/* The ROTATE record that signs this log's base (meta base_seq, base_chain). */
static void check_rotate(struct walk *w, const struct vfy_row *row)
{
	if (row->has_base && w->rep->base_seq > 0 && row->base_seq == w->rep->base_seq &&
	    memcmp(row->base_chain, w->rep->base_chain, 32) == 0)
		w->rotate_seq = row->seq;
}

static void check_row(struct walk *w, const struct vfy_chunk *c, const struct vfy_row *row)
{
	unsigned char leaf[32];

	w->rep->n_records++;
	check_seq(w, row->seq);
	if (check_leaf(w, row, leaf)) {
		if (row->finding >= 0)
			add_found(w, c, row);
		if (row->decoded) {
			check_time(w, row);
			vfy_ckpt_ref(&w->ckpt, row, w->rep->base_seq, w->rep, &w->oom);
			check_rotate(w, row);
		}
		vfy_runs_row(w->runs, row, w->rep, &w->oom);
	} else {
		/* an altered blob: whichever record it was, pairing findings near
		 * it would only repeat record-modified */
		vfy_runs_unknown(w->runs, row->seq);
	}
	check_head(w, row);
	check_chain_sig(w, row, leaf);
	if (row->chain_len == 32 && row->sig_len == crypto_sign_BYTES) {
		w->rep->have_head = 1;
		w->rep->head_seq = (uint64_t)row->seq;
		memcpy(w->rep->head_chain, row->chain, 32);
		memcpy(w->rep->head_sig, row->sig, crypto_sign_BYTES);
	}
	vfy_ckpt_leaf(&w->ckpt, row->seq, leaf, w->rep, &w->oom);
}

/* The walk asks for the code-table slot of the record this many ahead:
 * the rows were written by a reader on another core and the table is
 * larger than a core's cache, so without it each START waits for two
 * cache misses (a sixth of the walk's time, measured with perf). */
#define PREFETCH_AHEAD 8

/* The readers start before the checkpoints are loaded and checked (one
 * Ed25519 verification each, 70 ms for a thousand), so that the work
 * overlaps. They read from the walk's first record on: after the state's
 * head when incremental, else after the base. */
static int start_readers(struct walk *w, const struct sbx_verify_opts *opts, char *err,
			 size_t errlen)
{
	int64_t from = w->trusted ? (int64_t)w->trusted + 1 : w->expect;

	return vfy_reader_start(&w->reader, w->a, from, opts->threads, opts->chunk_rows, err, errlen);
}

static int walk_records(struct walk *w, char *err, size_t errlen)
{
	struct vfy_reader *r = w->reader;
	const struct vfy_chunk *c;
	size_t i;

	while (!w->oom && (c = vfy_reader_next(r, err, errlen)) != NULL)
		for (i = 0; i < c->n && !w->oom; i++) {
			if (i + PREFETCH_AHEAD < c->n)
				vfy_runs_prefetch(w->runs, &c->rows[i + PREFETCH_AHEAD]);
			check_row(w, c, &c->rows[i]);
		}
	vfy_reader_free(r);
	w->reader = NULL;
	if (w->oom) {
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(w->a));
		return -1;
	}
	return err[0] ? -1 : 0;
}

/* seq of the first START that ran this code, for naming the finding. */
static int64_t first_user(sqlite3 *db, const unsigned char *key, int keylen)
{
	sqlite3_stmt *st;
	int64_t seq = 0;

	if (sqlite3_prepare_v2(db, "SELECT min(seq) FROM records WHERE code_sha256 = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, (const char *)key, keylen, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return seq;
}

/*
 * sbx-audit search --code-contains answers from the trigram index of the
 * code table (code_fts, FTS5 with the table as external content). Taking
 * a run out of the index hides it from search: every code row must have
 * its document in the index and the index none other. (FTS5 keeps one
 * row per document in code_fts_docsize; its integrity-check command
 * needs a writable connection, which an auditor does not have.)
 */
static int check_index(struct walk *w, struct sbx_verify_report *found, char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(w->a);
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = 'code_fts_docsize'",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return 0; /* no index (an SQLite without FTS5, or not built yet) */
	if (sqlite3_prepare_v2(db, "SELECT 'missing', c.sha256 FROM code c WHERE NOT EXISTS"
			       " (SELECT 1 FROM code_fts_docsize d WHERE d.id = c.rowid)"
			       " UNION ALL SELECT 'extra', d.id FROM code_fts_docsize d WHERE NOT EXISTS"
			       " (SELECT 1 FROM code c WHERE c.rowid = d.id) LIMIT 100", -1, &st,
			       NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !w->oom) {
		const unsigned char *what = sqlite3_column_text(st, 0);
		const unsigned char *key = sqlite3_column_text(st, 1);
		int keylen = sqlite3_column_bytes(st, 1);
		char shown[200];
		vfy_show(shown, sizeof(shown), key ? key : (const unsigned char *)"", (size_t)keylen);
		if (what != NULL && what[0] == 'm')
			add(found, &w->oom, first_user(db, key, keylen), SBX_FIND_INDEX_MISMATCH,
			    "code %.16s... is not in the search index (search --code-contains does "
			    "not find its runs)", shown);
		else
			add(found, &w->oom, 0, SBX_FIND_INDEX_MISMATCH,
			    "the search index holds document %s, which the code table does not", shown);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
fail:
	snprintf(err, errlen, "%s: read search index: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
	return -1;
}

static void code_missing(struct walk *w, struct sbx_verify_report *found,
			 const unsigned char *sha, int64_t seq)
{
	char hex[65];

	sodium_bin2hex(hex, sizeof(hex), sha, 32);
	vfy_add(found, &w->oom, seq, SBX_FIND_CODE_MISSING, "its code text", "none",
		"the code %.16s... this START ran is not in the code table (deleted, or "
		"replaced by another text under that text's digest)", hex);
}

/*
 * The code table is not signed itself; each text is bound to the signed
 * records through its digest, which is the table's key: a text must hash
 * to its key (code-modified), and every START's digest must have a text
 * (code-missing). Both lists are in digest order (lower-case hex sorts as
 * the bytes do), so one merge finds the missing ones.
 */
static int walk_code(struct walk *w, struct sbx_verify_report *found,
		     char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(w->a);
	sqlite3_stmt *st;
	size_t n_refs = vfy_runs_codes(w->runs), ri = 0;
	const unsigned char *ref;
	int64_t ref_seq;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT sha256, text FROM code ORDER BY sha256",
			       -1, &st, NULL) != SQLITE_OK) {
		/* the table dropped: every text the STARTs name is missing */
		if (strstr(sqlite3_errmsg(db), "no such table") != NULL) {
			for (; ri < n_refs && (ref = vfy_runs_code(w->runs, ri, &ref_seq)) != NULL; ri++)
				code_missing(w, found, ref, ref_seq);
			return 0;
		}
		snprintf(err, errlen, "%s: read code: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !w->oom) {
		const unsigned char *key = sqlite3_column_text(st, 0);
		int keylen = sqlite3_column_bytes(st, 0);
		const unsigned char *text = sqlite3_column_blob(st, 1);
		size_t tlen = (size_t)sqlite3_column_bytes(st, 1);
		unsigned char want[32], got[32];
		size_t binlen = 0;
		char shown[200];

		if (key == NULL || keylen != 64 ||
		    sodium_hex2bin(want, 32, (const char *)key, 64, NULL, &binlen, NULL) != 0 ||
		    binlen != 32) {
			vfy_show(shown, sizeof(shown), key ? key : (const unsigned char *)"",
				 (size_t)keylen);
			add(found, &w->oom, 0, SBX_FIND_CODE_MODIFIED,
			    "code table key '%s' is not a sha256", shown);
			continue;
		}
		while (ri < n_refs && (ref = vfy_runs_code(w->runs, ri, &ref_seq)) != NULL &&
		       memcmp(ref, want, 32) < 0) {
			code_missing(w, found, ref, ref_seq);
			ri++;
		}
		if (ri < n_refs && memcmp(vfy_runs_code(w->runs, ri, &ref_seq), want, 32) == 0)
			ri++;
		sbx_sha256(got, text, tlen);
		if (sodium_memcmp(got, want, 32) != 0) {
			vfy_show(shown, sizeof(shown), key, (size_t)keylen);
			add(found, &w->oom, first_user(db, key, keylen), SBX_FIND_CODE_MODIFIED,
			    "code text %.16s... does not match its sha256", shown);
		}
	}
	sqlite3_finalize(st);
	if (!w->oom && rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: read code: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
		return -1;
	}
	for (; ri < n_refs && (ref = vfy_runs_code(w->runs, ri, &ref_seq)) != NULL; ri++)
		code_missing(w, found, ref, ref_seq);
	return check_index(w, found, err, errlen);
}

/*
 * Incremental: the code rows of the new STARTs only, by their key: each
 * must exist, hash to its key and be in the search index. O(new runs).
 */
static int walk_new_code(struct walk *w, struct sbx_verify_report *found,
			 char *err, size_t errlen)
{
	sqlite3 *db = sbx_audit_db(w->a);
	sqlite3_stmt *st = NULL, *idx = NULL;
	size_t n = vfy_runs_codes(w->runs), i;
	int ok = 0;

	if (sqlite3_prepare_v2(db, "SELECT rowid, text FROM code WHERE sha256 = ?1", -1, &st,
			       NULL) != SQLITE_OK) {
		if (strstr(sqlite3_errmsg(db), "no such table") == NULL)
			goto out;
		for (i = 0; i < n && !w->oom; i++) { /* the table dropped */
			int64_t seq;
			const unsigned char *ref = vfy_runs_code(w->runs, i, &seq);
			code_missing(w, found, ref, seq);
		}
		return 0;
	}
	/* no index (an SQLite without FTS5): nothing to compare */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM code_fts_docsize WHERE id = ?1", -1, &idx,
			       NULL) != SQLITE_OK)
		idx = NULL;
	for (i = 0; i < n && !w->oom; i++) {
		int64_t seq;
		const unsigned char *ref = vfy_runs_code(w->runs, i, &seq);
		unsigned char got[32];
		char hex[65];
		int rc;

		sodium_bin2hex(hex, sizeof(hex), ref, 32);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, hex, 64, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			code_missing(w, found, ref, seq);
			continue;
		}
		if (rc != SQLITE_ROW)
			goto out;
		sbx_sha256(got, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
		if (sodium_memcmp(got, ref, 32) != 0)
			add(found, &w->oom, seq, SBX_FIND_CODE_MODIFIED,
			    "code text %.16s... does not match its sha256", hex);
		if (idx != NULL) {
			sqlite3_reset(idx);
			sqlite3_bind_int64(idx, 1, sqlite3_column_int64(st, 0));
			rc = sqlite3_step(idx);
			if (rc == SQLITE_DONE)
				add(found, &w->oom, seq, SBX_FIND_INDEX_MISMATCH,
				    "code %.16s... is not in the search index (search --code-contains "
				    "does not find its runs)", hex);
			else if (rc != SQLITE_ROW)
				goto out;
		}
	}
	ok = 1;
out:
	if (!ok)
		snprintf(err, errlen, "%s: read code: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_finalize(idx);
	return ok ? 0 : -1;
}

/*
 * The policy table, like the code table: each START that carries
 * policy_bytes names a text by policy_sha256, which must be there
 * (policy-missing) with that digest and size (policy-modified). The refs
 * are looked up by key (few distinct policies); the full walk also reads
 * every row, so that a text no new START names is checked too. A log
 * from before the table has neither the rows nor STARTs naming them.
 */
/* Whether a START of the walk names the policy text under key (hex). */
static int policy_named(const struct walk *w, const unsigned char *key)
{
	size_t n = vfy_runs_policies(w->runs), i;
	char hex[65];

	for (i = 0; i < n; i++) {
		int64_t seq;
		uint64_t bytes;
		sodium_bin2hex(hex, sizeof(hex), vfy_runs_policy(w->runs, i, &seq, &bytes), 32);
		if (memcmp(hex, key, 64) == 0)
			return 1;
	}
	return 0;
}

static int walk_policy(struct walk *w, struct sbx_verify_report *found, int all, char *err,
		       size_t errlen)
{
	sqlite3 *db = sbx_audit_db(w->a);
	sqlite3_stmt *st = NULL;
	size_t n = vfy_runs_policies(w->runs), i;
	int ok = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT text FROM policy WHERE sha256 = ?1", -1, &st, NULL) != SQLITE_OK) {
		if (n == 0)
			return 0; /* no table and no START that needs one */
		/* the table dropped: every text the STARTs name is missing */
		if (strstr(sqlite3_errmsg(db), "no such table") == NULL)
			goto out;
	}
	for (i = 0; i < n && !w->oom; i++) {
		int64_t seq;
		uint64_t bytes;
		const unsigned char *ref = vfy_runs_policy(w->runs, i, &seq, &bytes);
		unsigned char got[32];
		char hex[65];
		size_t len;

		sodium_bin2hex(hex, sizeof(hex), ref, 32);
		rc = SQLITE_DONE;
		if (st != NULL) {
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, hex, 64, SQLITE_STATIC);
			rc = sqlite3_step(st);
		}
		if (rc == SQLITE_DONE) {
			vfy_add(found, &w->oom, seq, SBX_FIND_POLICY_MISSING, "its policy text", "none",
				"the policy %.16s... this START ran under is not in the policy table (deleted, "
				"or replaced by another text under that text's digest)", hex);
			continue;
		}
		if (rc != SQLITE_ROW)
			goto out;
		len = (size_t)sqlite3_column_bytes(st, 0);
		sbx_sha256(got, sqlite3_column_blob(st, 0), len);
		if (sodium_memcmp(got, ref, 32) != 0 || len != bytes)
			vfy_add(found, &w->oom, seq, SBX_FIND_POLICY_MODIFIED, NULL, NULL,
				"policy text %.16s... does not match its sha256 and size (%zu bytes, the "
				"record says %" PRIu64 ")", hex, len, bytes);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (all && sqlite3_prepare_v2(db, "SELECT sha256, text FROM policy", -1, &st, NULL) == SQLITE_OK &&
	    st != NULL) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW && !w->oom) {
			const unsigned char *key = sqlite3_column_text(st, 0);
			size_t klen = (size_t)sqlite3_column_bytes(st, 0);
			unsigned char got[32];
			char hex[65], shown[200];

			sbx_sha256(got, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
			sodium_bin2hex(hex, sizeof(hex), got, 32);
			if (key != NULL && klen == 64 && memcmp(key, hex, 64) != 0 && policy_named(w, key))
				continue; /* reported above, at its START */
			if (key == NULL || klen != 64 || memcmp(key, hex, 64) != 0) {
				vfy_show(shown, sizeof(shown), key ? key : (const unsigned char *)"", klen);
				vfy_add(found, &w->oom, 0, SBX_FIND_POLICY_MODIFIED, NULL, NULL,
					"policy table key '%.64s' is not the sha256 of its text", shown);
			}
		}
		if (rc != SQLITE_DONE && !w->oom)
			goto out;
	}
	ok = 1;
out:
	if (!ok)
		snprintf(err, errlen, "%s: read policy: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

/* Put code findings among the record findings, after those of the same seq. */
static int merge(struct sbx_verify_report *rep, const struct sbx_verify_report *extra)
{
	size_t i, n = rep->n_findings + extra->n_findings, at;
	struct sbx_finding *f;

	if (extra->n_findings == 0)
		return 0;
	if (n > rep->cap) {
		f = realloc(rep->findings, n * sizeof(*f));
		if (f == NULL)
			return -1;
		rep->findings = f;
		rep->cap = n;
	}
	for (i = 0; i < extra->n_findings; i++) {
		const struct sbx_finding *e = &extra->findings[i];
		at = rep->n_findings;
		while (at > 0 && rep->findings[at - 1].seq > e->seq)
			at--;
		memmove(&rep->findings[at + 1], &rep->findings[at],
			(rep->n_findings - at) * sizeof(*e));
		rep->findings[at] = *e;
		rep->n_findings++;
	}
	return 0;
}

/* Stable sort by seq: deferred signature checks and checkpoint findings
 * arrive after findings of later records. */
static int sort_by_seq(struct sbx_verify_report *rep)
{
	size_t n = rep->n_findings, w, i, l, r, m, k;
	struct sbx_finding *tmp, *a = rep->findings;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (tmp == NULL)
		return -1;
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			l = i;
			m = i + w < n ? i + w : n;
			r = m;
			k = i;
			while (l < m && r < (i + 2 * w < n ? i + 2 * w : n))
				tmp[k++] = a[r].seq < a[l].seq ? a[r++] : a[l++];
			while (l < m)
				tmp[k++] = a[l++];
			while (r < (i + 2 * w < n ? i + 2 * w : n))
				tmp[k++] = a[r++];
		}
		memcpy(a, tmp, n * sizeof(*a));
	}
	free(tmp);
	return 0;
}

/* Default mode: the head's signature covers every earlier record through
 * the chain, so one check stands for all of them. */
static void check_last_sig(struct walk *w)
{
	if (!w->have_last)
		return;
	if (!sbx_audit_sig_ok(w->pk, w->last.origin, w->last.olen, (uint64_t)w->last.seq,
			      w->last.chain, w->last.sig))
		vfy_add(w->rep, &w->oom, w->last.seq, SBX_FIND_BAD_SIGNATURE, "valid signature",
			"invalid", "signature of the last record does not verify with the public key "
			"(log re-chained, or another key; run verify --full to find where)");
}

/* The ROTATE record's own base checkpoint must be the rotation base's:
 * signed with pk, of base_seq records, with the base root. */
static void check_rotate_note(struct walk *w)
{
	struct sbx_verify_report *rep = w->rep;
	struct sbx_record r;
	struct sbx_checkpoint cp;
	struct sbx_fval v;
	sqlite3_stmt *st;
	char why[200] = "its blob cannot be read";
	int ok = 0;

	if (sqlite3_prepare_v2(sbx_audit_db(w->a), "SELECT blob FROM records WHERE seq = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, w->rotate_seq);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sbx_record_decode(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &r,
			      why, sizeof(why)) == 0) {
		if (sbx_rec_get(&r, SBX_F_BASE_NOTE, &v) != 1)
			snprintf(why, sizeof(why), "it has no base checkpoint");
		else if (sbx_checkpoint_open((const char *)v.p, v.n, w->pk, &cp, why, sizeof(why)) < 0)
			;
		else if (cp.size != rep->base_seq || sodium_memcmp(cp.root, rep->base_root, 32) != 0)
			snprintf(why, sizeof(why), "its base checkpoint is not the log's base tree");
		else
			ok = 1;
		sbx_record_free(&r);
	}
	sqlite3_finalize(st);
	if (!ok)
		vfy_add(rep, &w->oom, w->rotate_seq, SBX_FIND_ROTATION_UNSIGNED, NULL, NULL,
			"the ROTATE record of this log's base does not sign it: %s", why);
}

/* After the walk: what needs the whole log seen. */
static void finish_walk(struct walk *w)
{
	struct sbx_verify_report *rep = w->rep;
	const struct sbx_verify_opts *o = w->opts;
	uint64_t tail_ok = 0;
	struct timespec ts;
	char e[48], g[48];

	clock_gettime(CLOCK_REALTIME, &ts);
	vfy_runs_finish(w->runs, o->now_ns ? o->now_ns : (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
			w->ckpt.last_good, rep, &w->oom, &tail_ok);
	vfy_ckpt_finish(&w->ckpt, rep, &w->oom, tail_ok);
	if (o->have_head && !w->head_seen && o->head_seq > rep->last_seq) {
		snprintf(e, sizeof(e), "record %" PRIu64, o->head_seq);
		snprintf(g, sizeof(g), "%" PRIu64 " records", rep->last_seq);
		vfy_add(rep, &w->oom, (int64_t)rep->last_seq + 1, SBX_FIND_TRUNCATED, e, g,
			"the state has seen %" PRIu64 " records but the log ends at seq %" PRIu64
			" (records removed from the end, or an older copy of the log)", o->head_seq,
			rep->last_seq);
	}
	if (w->trusted > 0)
		; /* the base is the state's: its ROTATE record was checked then */
	else if (rep->base_seq > 0 && w->rotate_seq == 0)
		vfy_add(rep, &w->oom, (int64_t)rep->base_seq + 1, SBX_FIND_ROTATION_UNSIGNED,
			"a signed ROTATE record", "none",
			"the log starts after seq %" PRIu64 " but no signed ROTATE record names that "
			"base (records deleted and the base set without the key)", rep->base_seq);
	else if (rep->base_seq > 0)
		check_rotate_note(w);
}

/*
 * Incremental verify (sbx_verify_opts): when the state's frontier can be
 * used and the log still holds the state's head record unchanged, the
 * walk starts after it (w->trusted). Otherwise the whole log is walked,
 * and its check_head reports how the head was lost.
 */
static int resume_point(struct walk *w, const struct sbx_verify_opts *o, char *err,
			size_t errlen)
{
	sqlite3 *db = sbx_audit_db(w->a);
	sqlite3_stmt *st;
	int rc, same = 0;

	if (o->frontier == NULL || !o->have_head || o->full || o->n_witness > 0 || o->state_base != w->rep->base_seq ||
	    o->head_seq <= w->rep->base_seq || o->head_seq > INT64_MAX)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT chain, sig FROM records WHERE seq = ?1", -1, &st,
			       NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: read records: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int64(st, 1, (int64_t)o->head_seq);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		same = sqlite3_column_bytes(st, 0) == 32 &&
		       sqlite3_column_bytes(st, 1) == crypto_sign_BYTES &&
		       memcmp(sqlite3_column_blob(st, 0), o->head_chain, 32) == 0 &&
		       memcmp(sqlite3_column_blob(st, 1), o->head_sig, crypto_sign_BYTES) == 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: read records: %s", sbx_audit_path(w->a), sqlite3_errmsg(db));
		return -1;
	}
	if (same)
		w->trusted = o->head_seq;
	return 0;
}

/* Incremental: continue from the state's head and tree. */
static int resume(struct walk *w, const struct sbx_verify_opts *o, char *err, size_t errlen)
{
	struct sbx_verify_report *rep = w->rep;

	if (w->trusted == 0)
		return 0;
	if (vfy_ckpt_resume(&w->ckpt, o->frontier, o->frontier_len, w->trusted, rep) < 0 ||
	    vfy_runs_seed(w->runs, o->open, o->n_open) < 0) {
		/* a frontier of another size: the state is damaged, walk it all */
		snprintf(err, errlen, "%s: verify: the state's frontier is not a tree of %" PRIu64
			 " records (damaged state file)", sbx_audit_path(w->a), w->trusted);
		return -1;
	}
	w->expect = (int64_t)w->trusted + 1;
	memcpy(w->prev, o->head_chain, 32);
	w->head_seen = 1;
	rep->have_head = 1;
	rep->head_seq = o->head_seq;
	memcpy(rep->head_chain, o->head_chain, 32);
	memcpy(rep->head_sig, o->head_sig, crypto_sign_BYTES);
	return 0;
}

/* What the next incremental verify starts from: the tree at the head, and
 * the runs then open (none of it when they cannot be carried). */
static void save_frontier(struct walk *w)
{
	struct sbx_verify_report *rep = w->rep;

	rep->frontier_len = 0;
	if (!rep->have_head || w->ckpt.tree.size != rep->head_seq ||
	    rep->last_seq != rep->head_seq)
		return;
	if (vfy_runs_export(w->runs, &rep->open, &rep->n_open) < 0) {
		w->oom = 1;
		return;
	}
	if (rep->open != NULL)
		rep->frontier_len = sbx_mtree_save(&w->ckpt.tree, rep->frontier);
}

int sbx_audit_verify(struct sbx_audit *a, const unsigned char *pk,
		     struct sbx_verify_report *rep, char *err, size_t errlen)
{
	const struct sbx_verify_opts full = {.full = 1};

	return sbx_audit_verify_opts(a, pk, &full, rep, err, errlen);
}

int sbx_audit_verify_opts(struct sbx_audit *a, const unsigned char *pk,
			  const struct sbx_verify_opts *opts,
			  struct sbx_verify_report *rep, char *err, size_t errlen)
{
	struct sbx_verify_report code = {0};
	struct walk *w = calloc(1, sizeof(*w));
	sqlite3 *db = sbx_audit_db(a);
	int ret = -1;

	memset(rep, 0, sizeof(*rep));
	if (w == NULL || vfy_sigs_init(&w->sigs, pk) < 0) {
		free(w);
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		return -1;
	}
	*w = (struct walk){.a = a, .pk = pk, .rep = rep, .expect = 1, .full = opts->full,
			   .sigs = w->sigs, .opts = opts};
	if (vfy_runs_init(&w->runs) < 0) {
		vfy_sigs_free(&w->sigs);
		free(w);
		snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		return -1;
	}
	/* One read transaction: a consistent snapshot while runs append. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: begin: %s", sbx_audit_path(a), sqlite3_errmsg(db));
		goto out;
	}
	if (sbx_audit_base(a, &rep->base_seq, rep->base_chain, err, errlen) == 0) {
		w->expect = (int64_t)rep->base_seq + 1;
		memcpy(w->prev, rep->base_chain, 32);
	} else {
		goto done;
	}
	if (resume_point(w, opts, err, errlen) < 0 || start_readers(w, opts, err, errlen) < 0)
		goto done;
	if (vfy_ckpt_load(&w->ckpt, a, pk, opts, w->trusted, rep, &w->oom, err, errlen) == 0 &&
	    vfy_ckpt_base(&w->ckpt, a, pk, rep, &w->oom) == 0 && resume(w, opts, err, errlen) == 0 &&
	    walk_records(w, err, errlen) == 0 &&
	    (w->trusted ? walk_new_code(w, &code, err, errlen) : walk_code(w, &code, err, errlen)) == 0 &&
	    walk_policy(w, &code, !w->trusted, err, errlen) == 0) {
		rep->last_seq = (uint64_t)(w->expect - 1);
		memcpy(rep->last_chain, w->prev, 32);
		sbx_mtree_root(&w->ckpt.tree, rep->root);
		vfy_sigs_flush(&w->sigs, rep, &w->oom);
		check_last_sig(w);
		finish_walk(w);
		if (w->trusted > 0) {
			rep->incremental = 1;
			rep->n_new = rep->n_records;
			rep->n_records += w->trusted - rep->base_seq;
		}
		save_frontier(w);
		if (w->oom || merge(rep, &code) < 0 || sort_by_seq(rep) < 0)
			snprintf(err, errlen, "%s: verify: out of memory", sbx_audit_path(a));
		else
			ret = 0;
	}
done:
	vfy_reader_free(w->reader); /* when something before the walk failed */
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
out:
	vfy_ckpt_free(&w->ckpt);
	vfy_sigs_free(&w->sigs);
	vfy_runs_free(w->runs);
	free(w);
	sbx_verify_report_free(&code);
	if (ret < 0)
		sbx_verify_report_free(rep);
	return ret;
}

void sbx_verify_report_free(struct sbx_verify_report *rep)
{
	free(rep->open);
	free(rep->latest_note);
	free(rep->findings);
	memset(rep, 0, sizeof(*rep));
}
