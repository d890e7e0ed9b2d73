/* SPDX-License-Identifier: ISC */
/*
 * Extension fields as JSON, from the record-field table alone, so that a
 * field added to the table is shown by sbx-audit show --json and export
 * without code of its own. Strings are bytes from callers and payloads:
 * invalid UTF-8 becomes U+FFFD (JSON cannot carry it).
 */
#include "auditdb.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *hex_json(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h = malloc(2 * n + 1);
	json_t *j;
	size_t i;

	if (h == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		h[2 * i] = digits[p[i] >> 4];
		h[2 * i + 1] = digits[p[i] & 15];
	}
	h[2 * n] = '\0';
	j = json_string(h);
	free(h);
	return j;
}

static json_t *str_json(const unsigned char *p, size_t n)
{
	json_t *j = json_stringn((const char *)p, n);
	char *clean;

	if (j != NULL)
		return j;
	clean = sbx_utf8_sanitize((const char *)p, n);
	if (clean == NULL)
		return NULL;
	j = json_string(clean);
	free(clean);
	return j;
}

json_t *sbx_fval_json(const struct sbx_fval *v)
{
	char dec[24];

	switch (v->type) {
	case SBX_FT_U64:
		if (v->u <= (uint64_t)INT64_MAX)
			return json_integer((json_int_t)v->u);
		/* beyond what a JSON integer of jansson carries: exact as text */
		snprintf(dec, sizeof(dec), "%" PRIu64, v->u);
		return json_string(dec);
	case SBX_FT_I64:
		return json_integer((json_int_t)v->i);
	case SBX_FT_STR:
		return str_json(v->p, v->n);
	case SBX_FT_DIGEST:
	case SBX_FT_BYTES:
		return hex_json(v->p, v->n);
	default:
		return NULL;
	}
}

struct items {
	const struct sbx_field_def *f;
	json_t *out;   /* array (LIST) or object (OBJ) */
	int failed;
};

static void item_json(size_t idx, const struct sbx_fval *vals, void *ctx)
{
	struct items *it = ctx;
	json_t *o = it->f->type == SBX_FT_OBJ ? it->out : json_object();
	size_t k;

	(void)idx;
	if (o == NULL) {
		it->failed = 1;
		return;
	}
	for (k = 0; it->f->sub[k].key != NULL; k++) {
		json_t *v = sbx_fval_json(&vals[k]);
		if (v == NULL || json_object_set_new(o, it->f->sub[k].key, v) < 0)
			it->failed = 1;
	}
	if (it->f->type == SBX_FT_LIST && json_array_append_new(it->out, o) < 0)
		it->failed = 1;
}

json_t *sbx_field_json(const struct sbx_field_def *f, const unsigned char *p, size_t n)
{
	struct items it = {.f = f};
	struct sbx_fval v;

	if (f == NULL)
		return hex_json(p, n);
	if (f->type != SBX_FT_LIST && f->type != SBX_FT_OBJ) {
		if (sbx_fval_parse(f->type, p, n, &v) < 0)
			return NULL;
		return sbx_fval_json(&v);
	}
	it.out = f->type == SBX_FT_LIST ? json_array() : json_object();
	if (it.out == NULL)
		return NULL;
	if (sbx_rec_items(f, p, n, item_json, &it) < 0 || it.failed) {
		json_decref(it.out);
		return NULL;
	}
	return it.out;
}

int sbx_rext_json(const struct sbx_record *rec, json_t *into)
{
	const struct sbx_field_def *f;
	const unsigned char *p;
	size_t off = 0, n;
	unsigned tag;
	char key[32];

	while (sbx_rec_next(rec, &off, &tag, &f, &p, &n)) {
		const char *k = f ? f->key : key;
		json_t *v;
		if (f == NULL)
			snprintf(key, sizeof(key), "tag_%u", tag); /* a newer writer's field */
		if (json_object_get(into, k) != NULL)
			continue;
		v = sbx_field_json(f, p, n);
		if (v == NULL || json_object_set_new(into, k, v) < 0)
			return -1;
	}
	return 0;
}
