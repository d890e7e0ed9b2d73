/* SPDX-License-Identifier: ISC */
/*
 * Canonical record encoding (format in record.h). The decoder reads blobs
 * back out of a database that an attacker may have edited, so every length
 * is checked against what remains and against the destination, and any
 * byte left over is an error: one record has exactly one encoding.
 */
#include "auditdb.h"
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR_LEN 5 /* magic + version */
/* Smallest encoded artifact: empty name, size, empty media type, digest. */
#define MIN_ARTIFACT_LEN (4 + 4 + 8 + 4 + 4 + 32)

/* ---- encoding ---- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int failed;        /* sticky: later puts are no-ops */
	const char *why;   /* set with failed */
};

static void put_raw(struct wbuf *w, const void *data, size_t n)
{
	size_t want;
	unsigned char *np;

	if (w->failed)
		return;
	if (n > SBX_REC_MAX_BLOB - w->len) {
		w->failed = 1;
		w->why = "record too large";
		return;
	}
	want = w->len + n;
	if (want > w->cap) {
		size_t ncap = w->cap ? w->cap : 1024;
		while (ncap < want)
			ncap *= 2;
		np = realloc(w->p, ncap);
		if (np == NULL) {
			w->failed = 1;
			w->why = "out of memory";
			return;
		}
		w->p = np;
		w->cap = ncap;
	}
	if (n > 0)
		memcpy(w->p + w->len, data, n);
	w->len = want;
}

static void put_field(struct wbuf *w, const void *data, size_t n)
{
	unsigned char l[4];

	if (n > UINT32_MAX) {
		w->failed = 1;
		w->why = "field too large";
		return;
	}
	l[0] = (unsigned char)(n >> 24);
	l[1] = (unsigned char)(n >> 16);
	l[2] = (unsigned char)(n >> 8);
	l[3] = (unsigned char)n;
	put_raw(w, l, 4);
	put_raw(w, data, n);
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 7; i >= 0; i--) {
		b[i] = (unsigned char)v;
		v >>= 8;
	}
	put_field(w, b, 8);
}

static void put_i64(struct wbuf *w, int64_t v)
{
	put_u64(w, (uint64_t)v);
}

/* A string must end inside its array: encoding bytes past it would leak
 * whatever follows in memory into a signed record. */
static void put_str(struct wbuf *w, const char *s, size_t size, const char *name)
{
	size_t n = strnlen(s, size);

	if (w->failed)
		return;
	if (n == size) {
		w->failed = 1;
		w->why = name;
		return;
	}
	put_field(w, s, n);
}

#define PUT_STR(w, field) put_str((w), (field), sizeof(field), #field " not terminated")

static void put_common(struct wbuf *w, const struct sbx_record *r)
{
	const struct sbx_limits *l = &r->limits;

	put_u64(w, r->seq);
	put_u64(w, (uint64_t)r->kind);
	PUT_STR(w, r->run_id);
	PUT_STR(w, r->boot_id);
	put_i64(w, r->realtime_ns);
	put_i64(w, r->boottime_ns);
	PUT_STR(w, r->host);
	put_u64(w, r->uid);
	put_u64(w, r->gid);
	PUT_STR(w, r->user);
	PUT_STR(w, r->policy);
	put_field(w, r->policy_sha256, 32);
	put_u64(w, l->wall_ms);
	put_u64(w, l->cpu_ms);
	put_u64(w, l->memory_bytes);
	put_u64(w, l->pids);
	put_u64(w, l->cpus_milli);
	put_u64(w, l->tmp_bytes);
	put_u64(w, l->out_bytes);
	put_u64(w, l->output_bytes);
	put_u64(w, l->file_size_bytes);
	put_u64(w, l->open_files);
	put_u64(w, l->max_attempts);
	PUT_STR(w, r->language);
	if (r->argv_len > sizeof(r->argv)) {
		w->failed = 1;
		w->why = "argv_len larger than argv";
	}
	put_field(w, r->argv, r->argv_len);
	put_field(w, r->code_sha256, 32);
	PUT_STR(w, r->session);
	put_u64(w, r->attempt);
	PUT_STR(w, r->parent_id);
}

static void put_end(struct wbuf *w, const struct sbx_record *r)
{
	size_t i;

	PUT_STR(w, r->outcome);
	put_i64(w, r->exit_code);
	put_i64(w, r->signal);
	PUT_STR(w, r->limit);
	put_u64(w, r->wall_ms);
	put_u64(w, r->cpu_ms);
	put_u64(w, r->memory_peak_bytes);
	put_u64(w, r->stdout_bytes);
	put_field(w, r->stdout_sha256, 32);
	put_u64(w, r->stderr_bytes);
	put_field(w, r->stderr_sha256, 32);
	PUT_STR(w, r->stderr_excerpt);
	PUT_STR(w, r->error);
	if (r->n_artifacts > SBX_REC_MAX_ARTIFACTS ||
	    (r->n_artifacts > 0 && r->artifacts == NULL)) {
		w->failed = 1;
		w->why = "too many artifacts (or artifacts NULL)";
		return;
	}
	put_u64(w, r->n_artifacts);
	for (i = 0; i < r->n_artifacts && !w->failed; i++) {
		const struct sbx_artifact *a = &r->artifacts[i];
		put_str(w, a->name, sizeof(a->name), "artifact name not terminated");
		put_u64(w, a->size);
		put_str(w, a->media_type, sizeof(a->media_type),
			"artifact media_type not terminated");
		put_field(w, a->sha256, 32);
	}
}

int sbx_record_encode(const struct sbx_record *rec, unsigned char **blob,
		      size_t *len, char *err, size_t errlen)
{
	const struct sbx_kind_def *k = sbx_kind_def(rec->kind);
	struct wbuf w = {0};
	unsigned char version = SBX_REC_VERSION;
	const char *why;
	size_t at;

	*blob = NULL;
	*len = 0;
	if (k == NULL) {
		sbx_audit_seterr(err, errlen, "encode record: unknown kind %d", rec->kind);
		return -1;
	}
	/* what a reader would refuse is never signed */
	if (sbx_rext_check(rec->ext.buf, rec->ext.len, rec->kind, &why, &at) < 0) {
		sbx_audit_seterr(err, errlen, "encode record: extension fields: %s (at byte %zu)", why, at);
		return -1;
	}
	put_raw(&w, SBX_REC_MAGIC, 4);
	put_raw(&w, &version, 1);
	put_common(&w, rec);
	if (k->flags & SBX_KF_END_FIELDS)
		put_end(&w, rec);
	put_raw(&w, rec->ext.buf, rec->ext.len);
	if (w.failed) {
		free(w.p);
		sbx_audit_seterr(err, errlen, "encode record: %s", w.why);
		return -1;
	}
	*blob = w.p;
	*len = w.len;
	return 0;
}

/* ---- decoding ---- */

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	size_t flen;       /* length of the field get_field returned last */
	int version;
	const char *why;   /* first failure, names the field */
	char whybuf[128];
};

static int fail(struct rbuf *r, const char *field, const char *what)
{
	if (r->why == NULL) {
		snprintf(r->whybuf, sizeof(r->whybuf), "%s: %s (at byte %zu)",
			 field, what, r->off);
		r->why = r->whybuf;
	}
	return -1;
}

/*
 * Next field: its bytes in the blob (r->flen of them, already checked
 * against the bytes that remain), or NULL. The length goes through r, not
 * an out-parameter: with no local whose address is taken, these run
 * without a stack canary, and verify decodes some 40 fields per record.
 */
static const unsigned char *get_field(struct rbuf *r, const char *field)
{
	uint32_t l;

	if (r->why != NULL)
		return NULL;
	if (r->len - r->off < 4) {
		fail(r, field, "truncated length");
		return NULL;
	}
	l = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
	    (uint32_t)r->p[r->off + 2] << 8 | (uint32_t)r->p[r->off + 3];
	if (l > r->len - r->off - 4) {
		fail(r, field, "length runs past the end");
		return NULL;
	}
	r->flen = l;
	r->off += 4 + (size_t)l;
	return r->p + r->off - l;
}

static int get_u64(struct rbuf *r, const char *field, uint64_t *v)
{
	const unsigned char *d = get_field(r, field);

	if (d == NULL)
		return -1;
	if (r->flen != 8) {
		fail(r, field, "integer is not 8 bytes");
		return -1; /* spelt out: the analyzer does not follow fail() here */
	}
	/* big-endian, written out so that the compiler makes it one load */
	*v = (uint64_t)d[0] << 56 | (uint64_t)d[1] << 48 | (uint64_t)d[2] << 40 |
	     (uint64_t)d[3] << 32 | (uint64_t)d[4] << 24 | (uint64_t)d[5] << 16 |
	     (uint64_t)d[6] << 8 | (uint64_t)d[7];
	return 0;
}

static int get_u32(struct rbuf *r, const char *field, uint32_t *v)
{
	uint64_t x;

	if (get_u64(r, field, &x) < 0)
		return -1;
	if (x > UINT32_MAX)
		return fail(r, field, "out of range");
	*v = (uint32_t)x;
	return 0;
}

static int get_i64(struct rbuf *r, const char *field, int64_t *v)
{
	uint64_t x;

	if (get_u64(r, field, &x) < 0)
		return -1;
	/* Two's complement without relying on implementation-defined casts. */
	if (x > (uint64_t)INT64_MAX)
		*v = -(int64_t)(UINT64_MAX - x) - 1;
	else
		*v = (int64_t)x;
	return 0;
}

static int get_i32(struct rbuf *r, const char *field, int32_t *v)
{
	int64_t x;

	if (get_i64(r, field, &x) < 0)
		return -1;
	if (x < INT32_MIN || x > INT32_MAX)
		return fail(r, field, "out of range");
	*v = (int32_t)x;
	return 0;
}

static int get_digest(struct rbuf *r, const char *field, unsigned char out[32])
{
	const unsigned char *d = get_field(r, field);

	if (d == NULL)
		return -1;
	if (r->flen != 32)
		return fail(r, field, "digest is not 32 bytes");
	memcpy(out, d, 32);
	return 0;
}

/* Strings come back NUL-terminated; an embedded NUL would make the
 * decoded record differ from what was signed, so it is an error. */
static int get_str(struct rbuf *r, const char *field, char *out, size_t size)
{
	const unsigned char *d = get_field(r, field);
	size_t n;

	if (d == NULL)
		return -1;
	n = r->flen;
	if (n >= size)
		return fail(r, field, "string too long");
	if (memchr(d, '\0', n) != NULL)
		return fail(r, field, "string holds a NUL byte");
	memcpy(out, d, n);
	out[n] = '\0';
	return 0;
}

#define GET_STR(r, name, field) get_str((r), (name), (field), sizeof(field))

static int get_common(struct rbuf *r, struct sbx_record *o)
{
	struct sbx_limits *l = &o->limits;
	const unsigned char *d;
	uint64_t kind;

	if (get_u64(r, "seq", &o->seq) < 0 || get_u64(r, "kind", &kind) < 0)
		return -1;
	if (kind > INT32_MAX || sbx_kind_def((int)kind) == NULL)
		return fail(r, "kind", "unknown record kind");
	if (r->version == 1 && !(sbx_kind_def((int)kind)->flags & SBX_KF_V1))
		return fail(r, "kind", "record kind not in format version 1");
	o->kind = (int)kind;
	if (GET_STR(r, "run_id", o->run_id) < 0 ||
	    GET_STR(r, "boot_id", o->boot_id) < 0 ||
	    get_i64(r, "realtime_ns", &o->realtime_ns) < 0 ||
	    get_i64(r, "boottime_ns", &o->boottime_ns) < 0 ||
	    GET_STR(r, "host", o->host) < 0 ||
	    get_u32(r, "uid", &o->uid) < 0 ||
	    get_u32(r, "gid", &o->gid) < 0 ||
	    GET_STR(r, "user", o->user) < 0 ||
	    GET_STR(r, "policy", o->policy) < 0 ||
	    get_digest(r, "policy_sha256", o->policy_sha256) < 0 ||
	    get_u64(r, "wall_ms limit", &l->wall_ms) < 0 ||
	    get_u64(r, "cpu_ms limit", &l->cpu_ms) < 0 ||
	    get_u64(r, "memory_bytes limit", &l->memory_bytes) < 0 ||
	    get_u64(r, "pids limit", &l->pids) < 0 ||
	    get_u64(r, "cpus_milli limit", &l->cpus_milli) < 0 ||
	    get_u64(r, "tmp_bytes limit", &l->tmp_bytes) < 0 ||
	    get_u64(r, "out_bytes limit", &l->out_bytes) < 0 ||
	    get_u64(r, "output_bytes limit", &l->output_bytes) < 0 ||
	    get_u64(r, "file_size_bytes limit", &l->file_size_bytes) < 0 ||
	    get_u64(r, "open_files limit", &l->open_files) < 0 ||
	    get_u64(r, "max_attempts limit", &l->max_attempts) < 0 ||
	    GET_STR(r, "language", o->language) < 0 ||
	    (d = get_field(r, "argv")) == NULL)
		return -1;
	if (r->flen > sizeof(o->argv))
		return fail(r, "argv", "too long");
	memcpy(o->argv, d, r->flen);
	o->argv_len = r->flen;
	if (get_digest(r, "code_sha256", o->code_sha256) < 0 ||
	    GET_STR(r, "session", o->session) < 0 ||
	    get_u32(r, "attempt", &o->attempt) < 0 ||
	    GET_STR(r, "parent_id", o->parent_id) < 0)
		return -1;
	return 0;
}

static int get_artifacts(struct rbuf *r, struct sbx_record *o)
{
	uint64_t count;
	size_t i;

	if (get_u64(r, "artifact count", &count) < 0)
		return -1;
	/* Bound the allocation by what the remaining bytes could hold. */
	if (count > SBX_REC_MAX_ARTIFACTS || count > (r->len - r->off) / MIN_ARTIFACT_LEN)
		return fail(r, "artifact count", "larger than the record can hold");
	if (count == 0)
		return 0;
	o->artifacts = calloc((size_t)count, sizeof(*o->artifacts));
	if (o->artifacts == NULL)
		return fail(r, "artifacts", "out of memory");
	o->n_artifacts = (size_t)count;
	for (i = 0; i < o->n_artifacts; i++) {
		struct sbx_artifact *a = &o->artifacts[i];
		if (GET_STR(r, "artifact name", a->name) < 0 ||
		    get_u64(r, "artifact size", &a->size) < 0 ||
		    GET_STR(r, "artifact media_type", a->media_type) < 0 ||
		    get_digest(r, "artifact sha256", a->sha256) < 0)
			return -1;
	}
	return 0;
}

static int get_end(struct rbuf *r, struct sbx_record *o)
{
	if (GET_STR(r, "outcome", o->outcome) < 0 ||
	    get_i32(r, "exit_code", &o->exit_code) < 0 ||
	    get_i32(r, "signal", &o->signal) < 0 ||
	    GET_STR(r, "limit", o->limit) < 0 ||
	    get_u64(r, "wall_ms", &o->wall_ms) < 0 ||
	    get_u64(r, "cpu_ms", &o->cpu_ms) < 0 ||
	    get_u64(r, "memory_peak_bytes", &o->memory_peak_bytes) < 0 ||
	    get_u64(r, "stdout_bytes", &o->stdout_bytes) < 0 ||
	    get_digest(r, "stdout_sha256", o->stdout_sha256) < 0 ||
	    get_u64(r, "stderr_bytes", &o->stderr_bytes) < 0 ||
	    get_digest(r, "stderr_sha256", o->stderr_sha256) < 0 ||
	    GET_STR(r, "stderr_excerpt", o->stderr_excerpt) < 0 ||
	    GET_STR(r, "error", o->error) < 0)
		return -1;
	return get_artifacts(r, o);
}

/* Version 2: the rest of the blob is the extension fields; kept as a copy
 * so the record outlives the blob. */
static void get_ext(struct rbuf *r, struct sbx_record *o)
{
	const char *why;
	size_t at, n = r->len - r->off;

	if (sbx_rext_check(r->p + r->off, n, o->kind, &why, &at) < 0) {
		snprintf(r->whybuf, sizeof(r->whybuf), "extension fields: %s (at byte %zu)", why,
			 r->off + at);
		r->why = r->whybuf;
		return;
	}
	o->ext.buf = malloc(n);
	if (o->ext.buf == NULL) {
		fail(r, "extension fields", "out of memory");
		return;
	}
	memcpy(o->ext.buf, r->p + r->off, n);
	o->ext.len = o->ext.cap = n;
	r->off = r->len;
}

int sbx_record_decode(const unsigned char *blob, size_t len,
		      struct sbx_record *rec, char *err, size_t errlen)
{
	struct rbuf r = {.p = blob, .len = len, .off = HDR_LEN};

	memset(rec, 0, sizeof(*rec));
	if (blob == NULL || len < HDR_LEN || memcmp(blob, SBX_REC_MAGIC, 4) != 0) {
		sbx_audit_seterr(err, errlen, "decode record: not a record (bad magic)");
		return -1;
	}
	if (blob[4] != 1 && blob[4] != 2) {
		sbx_audit_seterr(err, errlen, "decode record: unsupported version %u", blob[4]);
		return -1;
	}
	r.version = blob[4];
	if (len > SBX_REC_MAX_BLOB) {
		sbx_audit_seterr(err, errlen, "decode record: %zu bytes, larger than allowed", len);
		return -1;
	}
	if (get_common(&r, rec) == 0 && (sbx_kind_def(rec->kind)->flags & SBX_KF_END_FIELDS))
		get_end(&r, rec);
	if (r.why == NULL && r.off != r.len && r.version == 1) {
		snprintf(r.whybuf, sizeof(r.whybuf), "%zu trailing bytes", r.len - r.off);
		r.why = r.whybuf;
	}
	if (r.why == NULL && r.off != r.len)
		get_ext(&r, rec);
	if (r.why != NULL) {
		sbx_audit_seterr(err, errlen, "decode record: %s", r.why);
		sbx_record_free(rec);
		memset(rec, 0, sizeof(*rec));
		return -1;
	}
	return 0;
}

void sbx_record_free(struct sbx_record *rec)
{
	if (rec == NULL)
		return;
	free(rec->artifacts);
	rec->artifacts = NULL;
	rec->n_artifacts = 0;
	sbx_rext_free(&rec->ext);
}
