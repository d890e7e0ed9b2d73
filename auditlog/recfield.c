/* SPDX-License-Identifier: ISC */
/*
 * The record-kind and record-field tables (recfield.h) and the codec of
 * extension fields. Decoding reads blobs back from a database an attacker
 * may have edited, so sbx_rext_check() bounds every length by what remains
 * before anything is trusted, and the encoder runs the same check, so a
 * writer can never sign what a reader would refuse.
 */
#include "recfield.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

#include "auditdb.h"

#define TLV_HDR 6 /* u16 tag, u32 length */

const struct sbx_kind_def sbx_record_kinds[] = {
#define SBX_KIND_ROW(sym, num, name, flags, doc) {num, name, flags, doc},
	SBX_RECORD_KINDS(SBX_KIND_ROW)
#undef SBX_KIND_ROW
};
const size_t sbx_n_record_kinds = sizeof(sbx_record_kinds) / sizeof(sbx_record_kinds[0]);

const struct sbx_subfield sbx_sub_input[] = {
	{"name", SBX_FT_STR, 255},
	{"size", SBX_FT_U64, 0},
	{"sha256", SBX_FT_DIGEST, 0},
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_stdin[] = {
	{"size", SBX_FT_U64, 0},
	{"sha256", SBX_FT_DIGEST, 0},
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_workdir[] = {
	{"dev", SBX_FT_U64, 0},
	{"ino", SBX_FT_U64, 0},
	{NULL, 0, 0},
};

const struct sbx_subfield sbx_sub_net_pair[] = {
	{"service", SBX_FT_STR, 261},   /* the allow entry, HOST:PORT */
	{"address", SBX_FT_STR, 46},    /* inet_ntop(3) form */
	{"port", SBX_FT_U64, 0},
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_net_limits[] = {
	{"connections", SBX_FT_U64, 0},
	{"bytes_out", SBX_FT_U64, 0},
	{"bytes_in", SBX_FT_U64, 0},
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_net_conn[] = {
	{"service", SBX_FT_STR, 261},
	{"address", SBX_FT_STR, 46},
	{"port", SBX_FT_U64, 0},
	{"start_ms", SBX_FT_U64, 0},
	{"duration_ms", SBX_FT_U64, 0},
	{"bytes_out", SBX_FT_U64, 0},
	{"bytes_in", SBX_FT_U64, 0},
	{"end", SBX_FT_STR, 16},        /* SBX_EGRESS_ENDS names (common/egress_proto.h) */
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_net_refused[] = {
	{"address", SBX_FT_STR, 46},
	{"port", SBX_FT_U64, 0},
	{"reason", SBX_FT_STR, 16},     /* refused, unreachable, unread, connections */
	{"count", SBX_FT_U64, 0},
	{NULL, 0, 0},
};
const struct sbx_subfield sbx_sub_ckpt[] = {
	{"size", SBX_FT_U64, 0},
	{"root", SBX_FT_DIGEST, 0},
	{NULL, 0, 0},
};

const struct sbx_field_def sbx_record_fields[] = {
#define SBX_FIELD_ROW(sym, tag, label, key, type, kinds, sql, max, sub, owner, doc) \
	{tag, label, key, type, kinds, sql, max, sub, owner, doc},
	SBX_RECORD_FIELDS(SBX_FIELD_ROW)
#undef SBX_FIELD_ROW
};
const size_t sbx_n_record_fields = sizeof(sbx_record_fields) / sizeof(sbx_record_fields[0]);

const struct sbx_tag_range sbx_tag_ranges[] = {
	{"audit", 1, 99},      {"analyst", 100, 119},  {"egress", 120, 139},
	{"images", 140, 159},  {"sessions", 160, 179}, {"workspace", 180, 199},
	{"fleet", 200, 219},   {"sec", 220, 229},
};
const size_t sbx_n_tag_ranges = sizeof(sbx_tag_ranges) / sizeof(sbx_tag_ranges[0]);

const struct sbx_kind_def *sbx_kind_def(int kind)
{
	size_t i;

	for (i = 0; i < sbx_n_record_kinds; i++)
		if (sbx_record_kinds[i].kind == kind)
			return &sbx_record_kinds[i];
	return NULL;
}

const struct sbx_kind_def *sbx_kind_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sbx_n_record_kinds; i++)
		if (strcmp(sbx_record_kinds[i].name, name) == 0)
			return &sbx_record_kinds[i];
	return NULL;
}

const char *sbx_record_kind_name(int kind)
{
	const struct sbx_kind_def *k = sbx_kind_def(kind);

	return k ? k->name : NULL;
}

/* The table is sorted by tag (a unit test checks it). */
const struct sbx_field_def *sbx_field_def(unsigned tag)
{
	size_t lo = 0, hi = sbx_n_record_fields;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sbx_record_fields[mid].tag == tag)
			return &sbx_record_fields[mid];
		if (sbx_record_fields[mid].tag < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- scalar values ---- */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void wr64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (unsigned char)v;
		v >>= 8;
	}
}

int sbx_fval_parse(enum sbx_ftype type, const unsigned char *p, size_t n, struct sbx_fval *v)
{
	uint64_t x = 0;
	size_t i;

	memset(v, 0, sizeof(*v));
	v->type = type;
	v->p = p;
	v->n = n;
	switch (type) {
	case SBX_FT_U64:
	case SBX_FT_I64:
		if (n != 8)
			return -1;
		for (i = 0; i < 8; i++)
			x = x << 8 | p[i];
		v->u = x;
		/* two's complement without an implementation-defined cast */
		v->i = x > (uint64_t)INT64_MAX ? -(int64_t)(UINT64_MAX - x) - 1 : (int64_t)x;
		return 0;
	case SBX_FT_DIGEST:
		return n == 32 ? 0 : -1;
	case SBX_FT_STR:
		return n > 0 && memchr(p, '\0', n) != NULL ? -1 : 0;
	case SBX_FT_BYTES:
		return 0;
	default:
		return -1;
	}
}

/* A scalar of type t within max (STR/BYTES); why set on failure. */
static int scalar_ok(enum sbx_ftype t, uint32_t max, const unsigned char *p, size_t n,
		     const char **why)
{
	struct sbx_fval v;

	if (sbx_fval_parse(t, p, n, &v) < 0) {
		*why = t == SBX_FT_STR ? "string holds a NUL byte" :
		       t == SBX_FT_DIGEST ? "digest is not 32 bytes" :
		       (t == SBX_FT_U64 || t == SBX_FT_I64) ? "integer is not 8 bytes" :
		       "sub-field of a non-scalar type";
		return -1;
	}
	if ((t == SBX_FT_STR || t == SBX_FT_BYTES) && n > max) {
		*why = "value longer than the field allows";
		return -1;
	}
	return 0;
}

/* One item (the sub-fields of f once) from [*off, n): advances *off. */
static int item_ok(const struct sbx_field_def *f, const unsigned char *p, size_t n,
		   size_t *off, struct sbx_fval *vals, const char **why)
{
	const struct sbx_subfield *s;
	size_t k = 0;

	for (s = f->sub; s->key != NULL; s++, k++) {
		uint32_t l;
		if (n - *off < 4) {
			*why = "item truncated";
			return -1;
		}
		l = rd32(p + *off);
		if (l > n - *off - 4) {
			*why = "sub-field length runs past the field";
			return -1;
		}
		if (scalar_ok(s->type, s->max, p + *off + 4, l, why) < 0)
			return -1;
		if (vals != NULL)
			sbx_fval_parse(s->type, p + *off + 4, l, &vals[k]);
		*off += 4 + (size_t)l;
	}
	return 0;
}

static size_t n_sub(const struct sbx_field_def *f)
{
	size_t k = 0;

	while (f->sub[k].key != NULL)
		k++;
	return k;
}

#define MAX_SUB 8

long sbx_rec_items(const struct sbx_field_def *f, const unsigned char *p, size_t n,
		   void (*fn)(size_t idx, const struct sbx_fval *vals, void *ctx), void *ctx)
{
	struct sbx_fval vals[MAX_SUB];
	const char *why;
	size_t off = 0, count = 1, i;

	if (f == NULL || f->sub == NULL || n_sub(f) > MAX_SUB)
		return -1;
	if (f->type == SBX_FT_LIST) {
		if (n < 4)
			return -1;
		count = rd32(p);
		off = 4;
	} else if (f->type != SBX_FT_OBJ) {
		return -1;
	}
	for (i = 0; i < count; i++) {
		if (item_ok(f, p, n, &off, vals, &why) < 0)
			return -1;
		if (fn != NULL)
			fn(i, vals, ctx);
	}
	return off == n ? (long)count : -1;
}

/* A field's value against its definition. */
static int value_ok(const struct sbx_field_def *f, const unsigned char *p, size_t n,
		    const char **why)
{
	size_t off = 0, i, count;

	if (f->type != SBX_FT_LIST && f->type != SBX_FT_OBJ)
		return scalar_ok(f->type, f->max, p, n, why);
	if (f->sub == NULL || n_sub(f) > MAX_SUB) {
		*why = "field without sub-fields";
		return -1;
	}
	count = 1;
	if (f->type == SBX_FT_LIST) {
		if (n < 4) {
			*why = "list without an item count";
			return -1;
		}
		count = rd32(p);
		off = 4;
		/* each item is at least 4 bytes a sub-field */
		if (count > f->max || count > (n - 4) / (4 * n_sub(f))) {
			*why = "more items than the field allows or the bytes hold";
			return -1;
		}
	}
	for (i = 0; i < count; i++)
		if (item_ok(f, p, n, &off, NULL, why) < 0)
			return -1;
	if (off != n) {
		*why = "bytes after the last item";
		return -1;
	}
	return 0;
}

int sbx_rext_check(const unsigned char *p, size_t n, int kind, const char **why, size_t *at)
{
	size_t off = 0;
	unsigned last = 0;

	*at = 0;
	while (off < n) {
		const struct sbx_field_def *f;
		unsigned tag;
		uint32_t l;

		*at = off;
		if (n - off < TLV_HDR) {
			*why = "extension field header truncated";
			return -1;
		}
		tag = (unsigned)p[off] << 8 | p[off + 1];
		l = rd32(p + off + 2);
		if (tag <= last) {
			*why = tag == 0 ? "extension tag 0" : "extension tags not strictly increasing";
			return -1;
		}
		if (l > n - off - TLV_HDR) {
			*why = "extension field length runs past the end";
			return -1;
		}
		f = sbx_field_def(tag);
		if (f != NULL) {
			if (kind < 0 || kind > 31 || !(f->kinds & (1u << kind))) {
				*why = "extension field not allowed in this kind of record";
				return -1;
			}
			if (value_ok(f, p + off + TLV_HDR, l, why) < 0)
				return -1;
		}
		last = tag;
		off += TLV_HDR + (size_t)l;
	}
	return 0;
}

void sbx_rext_free(struct sbx_rext *e)
{
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* ---- building ---- */

static int seterr(char *err, size_t errlen, const char *what, unsigned tag)
{
	const struct sbx_field_def *f = sbx_field_def(tag);

	sbx_audit_seterr(err, errlen, "record field %s (tag %u): %s", f ? f->key : "?", tag, what);
	return -1;
}

/* Offset of tag's TLV, or of the first larger tag (insertion point);
 * *found says which. */
static size_t find(const struct sbx_rext *e, unsigned tag, int *found)
{
	size_t off = 0;

	*found = 0;
	while (off + TLV_HDR <= e->len) {
		unsigned t = (unsigned)e->buf[off] << 8 | e->buf[off + 1];
		if (t >= tag) {
			*found = t == tag;
			return off;
		}
		off += TLV_HDR + rd32(e->buf + off + 2);
	}
	return e->len;
}

static int reserve(struct sbx_rext *e, size_t more)
{
	size_t want, ncap;
	unsigned char *nb;

	if (more > SBX_REC_MAX_BLOB || e->len > SBX_REC_MAX_BLOB - more)
		return -1;
	want = e->len + more;
	if (want <= e->cap)
		return 0;
	ncap = e->cap ? e->cap : 256;
	while (ncap < want)
		ncap *= 2;
	nb = realloc(e->buf, ncap);
	if (nb == NULL)
		return -1;
	e->buf = nb;
	e->cap = ncap;
	return 0;
}

/* Insert a new TLV for tag with value (n bytes) in tag order. */
static int insert(struct sbx_record *rec, unsigned tag, const void *val, size_t n,
		  char *err, size_t errlen)
{
	struct sbx_rext *e = &rec->ext;
	int found;
	size_t at;

	if (n > UINT32_MAX || reserve(e, TLV_HDR + n) < 0)
		return seterr(err, errlen, "out of memory or too large", tag);
	at = find(e, tag, &found);
	if (found)
		return seterr(err, errlen, "already set", tag);
	memmove(e->buf + at + TLV_HDR + n, e->buf + at, e->len - at);
	e->buf[at] = (unsigned char)(tag >> 8);
	e->buf[at + 1] = (unsigned char)tag;
	wr32(e->buf + at + 2, (uint32_t)n);
	if (n > 0)
		memcpy(e->buf + at + TLV_HDR, val, n);
	e->len += TLV_HDR + n;
	return 0;
}

static const struct sbx_field_def *want_type(unsigned tag, enum sbx_ftype t, char *err,
					     size_t errlen)
{
	const struct sbx_field_def *f = sbx_field_def(tag);

	if (f == NULL) {
		seterr(err, errlen, "not in the record-field table", tag);
		return NULL;
	}
	if (f->type != t) {
		seterr(err, errlen, "value of the wrong type", tag);
		return NULL;
	}
	return f;
}

int sbx_rec_put_u64(struct sbx_record *rec, unsigned tag, uint64_t v, char *err, size_t errlen)
{
	unsigned char b[8];

	if (want_type(tag, SBX_FT_U64, err, errlen) == NULL)
		return -1;
	wr64(b, v);
	return insert(rec, tag, b, 8, err, errlen);
}

int sbx_rec_put_i64(struct sbx_record *rec, unsigned tag, int64_t v, char *err, size_t errlen)
{
	unsigned char b[8];

	if (want_type(tag, SBX_FT_I64, err, errlen) == NULL)
		return -1;
	wr64(b, (uint64_t)v);
	return insert(rec, tag, b, 8, err, errlen);
}

static int put_sized(struct sbx_record *rec, unsigned tag, enum sbx_ftype t, const void *p,
		     size_t n, char *err, size_t errlen)
{
	const struct sbx_field_def *f = want_type(tag, t, err, errlen);
	const char *why = NULL;

	if (f == NULL)
		return -1;
	if (scalar_ok(t, f->max, p, n, &why) < 0)
		return seterr(err, errlen, why, tag);
	return insert(rec, tag, p, n, err, errlen);
}

int sbx_rec_put_str(struct sbx_record *rec, unsigned tag, const char *s, char *err, size_t errlen)
{
	return put_sized(rec, tag, SBX_FT_STR, s, strlen(s), err, errlen);
}

int sbx_rec_put_bytes(struct sbx_record *rec, unsigned tag, const void *p, size_t n,
		      char *err, size_t errlen)
{
	return put_sized(rec, tag, SBX_FT_BYTES, n ? p : "", n, err, errlen);
}

int sbx_rec_put_digest(struct sbx_record *rec, unsigned tag, const unsigned char d[32],
		       char *err, size_t errlen)
{
	return put_sized(rec, tag, SBX_FT_DIGEST, d, 32, err, errlen);
}

/* The bytes of one item: each sub-field as u32 length and value. */
static unsigned char *encode_item(const struct sbx_field_def *f, const struct sbx_fval *vals,
				  size_t n, size_t *len, const char **why)
{
	size_t k, total = 0, off = 0;
	unsigned char *b;

	if (n != n_sub(f)) {
		*why = "wrong number of sub-field values";
		return NULL;
	}
	for (k = 0; k < n; k++) {
		const struct sbx_subfield *s = &f->sub[k];
		size_t vl = s->type == SBX_FT_U64 || s->type == SBX_FT_I64 ? 8 : vals[k].n;
		if (vals[k].type != s->type) {
			*why = "sub-field value of the wrong type";
			return NULL;
		}
		if (vl > SBX_REC_MAX_BLOB) {
			*why = "sub-field too large";
			return NULL;
		}
		total += 4 + vl;
	}
	b = malloc(total ? total : 1);
	if (b == NULL) {
		*why = "out of memory";
		return NULL;
	}
	for (k = 0; k < n; k++) {
		const struct sbx_subfield *s = &f->sub[k];
		if (s->type == SBX_FT_U64 || s->type == SBX_FT_I64) {
			wr32(b + off, 8);
			wr64(b + off + 4, s->type == SBX_FT_U64 ? vals[k].u : (uint64_t)vals[k].i);
			off += 12;
		} else {
			wr32(b + off, (uint32_t)vals[k].n);
			if (vals[k].n > 0)
				memcpy(b + off + 4, vals[k].p, vals[k].n);
			off += 4 + vals[k].n;
		}
	}
	/* the same checks a reader makes */
	off = 0;
	if (item_ok(f, b, total, &off, NULL, why) < 0) {
		free(b);
		return NULL;
	}
	*len = total;
	return b;
}

int sbx_rec_add_item(struct sbx_record *rec, unsigned tag, const struct sbx_fval *vals,
		     size_t n, char *err, size_t errlen)
{
	const struct sbx_field_def *f = sbx_field_def(tag);
	struct sbx_rext *e = &rec->ext;
	const char *why = NULL;
	unsigned char *item, cnt[4];
	size_t ilen = 0, at, vlen;
	uint32_t count;
	int found;

	if (f == NULL || (f->type != SBX_FT_LIST && f->type != SBX_FT_OBJ))
		return seterr(err, errlen, f ? "not a list or object field" : "not in the record-field table",
			      tag);
	item = encode_item(f, vals, n, &ilen, &why);
	if (item == NULL)
		return seterr(err, errlen, why, tag);
	at = find(e, tag, &found);
	if (!found) {
		int rc;
		if (f->type == SBX_FT_OBJ) {
			rc = insert(rec, tag, item, ilen, err, errlen);
			free(item);
			return rc;
		}
		wr32(cnt, 0);
		if (insert(rec, tag, cnt, 4, err, errlen) < 0) {
			free(item);
			return -1;
		}
		at = find(e, tag, &found);
	} else if (f->type == SBX_FT_OBJ) {
		free(item);
		return seterr(err, errlen, "already set", tag);
	}
	vlen = rd32(e->buf + at + 2);
	count = rd32(e->buf + at + TLV_HDR);
	if (count >= f->max || vlen + ilen > UINT32_MAX || reserve(e, ilen) < 0) {
		free(item);
		return seterr(err, errlen, count >= f->max ? "more items than the field allows" :
			      "out of memory or too large", tag);
	}
	memmove(e->buf + at + TLV_HDR + vlen + ilen, e->buf + at + TLV_HDR + vlen,
		e->len - (at + TLV_HDR + vlen));
	memcpy(e->buf + at + TLV_HDR + vlen, item, ilen);
	e->len += ilen;
	wr32(e->buf + at + 2, (uint32_t)(vlen + ilen));
	wr32(e->buf + at + TLV_HDR, count + 1);
	free(item);
	return 0;
}

/* ---- reading ---- */

int sbx_rec_next(const struct sbx_record *rec, size_t *off, unsigned *tag,
		 const struct sbx_field_def **def, const unsigned char **p, size_t *n)
{
	const struct sbx_rext *e = &rec->ext;
	uint32_t l;

	if (*off + TLV_HDR > e->len)
		return 0;
	*tag = (unsigned)e->buf[*off] << 8 | e->buf[*off + 1];
	l = rd32(e->buf + *off + 2);
	if (l > e->len - *off - TLV_HDR)
		return 0;
	*def = sbx_field_def(*tag);
	*p = e->buf + *off + TLV_HDR;
	*n = l;
	*off += TLV_HDR + (size_t)l;
	return 1;
}

int sbx_rec_get(const struct sbx_record *rec, unsigned tag, struct sbx_fval *v)
{
	const struct sbx_field_def *f;
	const unsigned char *p;
	size_t off = 0, n;
	unsigned t;

	memset(v, 0, sizeof(*v));
	/* the tags before it without their definitions (sbx_rec_next looks
	 * each up): verify gets several fields of every record */
	while (off + TLV_HDR <= rec->ext.len) {
		const unsigned char *h = rec->ext.buf + off;
		t = (unsigned)h[0] << 8 | h[1];
		if (t >= tag)
			break;
		n = rd32(h + 2);
		if (n > rec->ext.len - off - TLV_HDR)
			return 0;
		off += TLV_HDR + n;
	}
	while (sbx_rec_next(rec, &off, &t, &f, &p, &n)) {
		if (t < tag)
			continue;
		if (t > tag || f == NULL)
			return 0;
		if (f->type == SBX_FT_LIST || f->type == SBX_FT_OBJ) {
			v->type = f->type;
			v->p = p;
			v->n = n;
			return 1;
		}
		return sbx_fval_parse(f->type, p, n, v) == 0;
	}
	return 0;
}
