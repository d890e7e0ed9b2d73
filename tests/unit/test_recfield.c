/* SPDX-License-Identifier: ISC */
/*
 * Record format version 2: the record-kind and record-field tables (each
 * walked through every consumer: codec, columns, JSON), extension fields
 * through encode and decode, the decoder against hostile extension bytes,
 * and a log written by the version 1 code (tests/unit/data/v1log, made by
 * audit-bench fixture of the commit before version 2) still verifying,
 * before and after a version 2 writer appended to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "record.h"

#ifndef SBX_SRCDIR
#define SBX_SRCDIR "."
#endif

/* Keys show --json sets itself (show_json.c); extension keys must differ. */
static const char *const fixed_keys[] = {
	"seq", "kind", "run_id", "time", "realtime_ns", "boottime_ns", "boot_id", "host", "uid",
	"gid", "user", "policy", "policy_sha256", "limits", "language", "argv", "code_sha256",
	"session", "attempt", "parent_id", "outcome", "exit_code", "signal", "limit", "wall_ms",
	"cpu_ms", "memory_peak_bytes", "stdout_bytes", "stdout_sha256", "stderr_bytes",
	"stderr_sha256", "stderr_excerpt", "error", "artifacts", "chain", "undecodable",
	"fields", NULL,
};

static void base(struct sbx_record *r, int kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->run_id, sizeof(r->run_id), "%032x", 0x5eed);
	strcpy(r->host, "h");
	strcpy(r->user, "alice");
	strcpy(r->policy, "default");
	strcpy(r->language, "python");
	r->uid = 1000;
	r->realtime_ns = 1714564800000000000LL;
}

static int ident(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || *s == '_' || (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

static void test_tables(void **state)
{
	size_t i, j, k;

	(void)state;
	assert_int_equal(SBX_REC_START, 1); /* version 1 numbers never change */
	assert_int_equal(SBX_REC_END, 2);
	for (i = 0; i < sbx_n_record_kinds; i++) {
		const struct sbx_kind_def *d = &sbx_record_kinds[i];
		assert_true(d->kind > 0 && d->kind < 32); /* a bit of the kinds mask */
		assert_true(ident(d->name));
		assert_ptr_equal(sbx_kind_def(d->kind), d);
		assert_ptr_equal(sbx_kind_by_name(d->name), d);
		for (j = 0; j < i; j++)
			assert_true(sbx_record_kinds[j].kind != d->kind);
	}
	for (i = 0; i < sbx_n_record_fields; i++) {
		const struct sbx_field_def *f = &sbx_record_fields[i];
		int in_range = 0;
		if (i > 0)
			assert_true(sbx_record_fields[i - 1].tag < f->tag); /* sorted, unique */
		assert_true(f->tag > 0);
		for (j = 0; j < sbx_n_tag_ranges; j++)
			if (strcmp(sbx_tag_ranges[j].owner, f->owner) == 0)
				in_range = f->tag >= sbx_tag_ranges[j].lo && f->tag <= sbx_tag_ranges[j].hi;
		if (!in_range)
			fail_msg("field %s: tag %u outside the range of %s", f->key, f->tag, f->owner);
		assert_ptr_equal(sbx_field_def(f->tag), f);
		assert_true(ident(f->key));
		assert_non_null(f->label);
		assert_non_null(f->doc);
		for (k = 0; fixed_keys[k] != NULL; k++)
			if (strcmp(fixed_keys[k], f->key) == 0 && f->tag != SBX_F_ORIGIN)
				fail_msg("field %s: JSON key taken by a fixed field", f->key);
		for (j = 0; j < i; j++) {
			assert_string_not_equal(sbx_record_fields[j].key, f->key);
			assert_string_not_equal(sbx_record_fields[j].label, f->label);
		}
		assert_true(f->kinds != 0 && (f->kinds & ~(unsigned)SBX_KALL) == 0);
		if (f->type == SBX_FT_STR || f->type == SBX_FT_BYTES || f->type == SBX_FT_LIST)
			assert_true(f->max > 0);
		if (f->type == SBX_FT_LIST || f->type == SBX_FT_OBJ) {
			assert_non_null(f->sub);
			for (k = 0; f->sub[k].key != NULL; k++) {
				assert_true(ident(f->sub[k].key));
				assert_true(f->sub[k].type >= SBX_FT_U64 && f->sub[k].type <= SBX_FT_BYTES);
			}
			assert_true(k > 0 && k <= 8);
		} else {
			assert_null(f->sub);
		}
		if (f->sql != NULL) {
			assert_true(ident(f->sql));
			assert_true(f->type == SBX_FT_U64 || f->type == SBX_FT_I64 ||
				    f->type == SBX_FT_STR || f->type == SBX_FT_DIGEST);
			for (k = 0; k < SBX_NCOLS; k++)
				assert_string_not_equal(sbx_audit_colnames[k], f->sql);
		}
	}
	/* the projected columns: every field with one, in table order */
	for (i = SBX_NCOLS, j = 0; j < sbx_n_record_fields; j++) {
		const struct sbx_field_def *f = &sbx_record_fields[j];
		if (f->sql == NULL || f->tag == SBX_F_ORIGIN)
			continue;
		assert_ptr_equal(sbx_audit_colfield(i), f);
		assert_string_equal(sbx_audit_colname(i), f->sql);
		i++;
	}
	assert_int_equal(sbx_audit_ncols(), i);
	assert_true(i - SBX_NCOLS <= SBX_MAX_PROJ);
}

/* The man page names every record kind, record field (in RECORD FIELDS)
 * and verify finding kind. */
static void test_documented(void **state)
{
	FILE *f = fopen(SBX_SRCDIR "/man/sbx-audit.1", "r");
	static char page[1 << 18];
	size_t n, i;
	char want[128];

	(void)state;
	assert_non_null(f);
	n = fread(page, 1, sizeof(page) - 1, f);
	fclose(f);
	page[n] = '\0';
	for (i = 0; i < sbx_n_record_kinds; i++) {
		snprintf(want, sizeof(want), ".It Cm %s\n", sbx_record_kinds[i].name);
		if (strstr(page, want) == NULL)
			fail_msg("man/sbx-audit.1: record kind %s not documented", sbx_record_kinds[i].name);
	}
	for (i = SBX_FIND_NONE + 1; i < SBX_FIND_NKINDS; i++) {
		snprintf(want, sizeof(want), ".It Cm %s\n", sbx_finding_kind_name((enum sbx_finding_kind)i));
		if (strstr(page, want) == NULL)
			fail_msg("man/sbx-audit.1: finding kind %s not documented",
				 sbx_finding_kind_name((enum sbx_finding_kind)i));
	}
	for (i = 0; i < sbx_n_record_fields; i++) {
		const char *k = sbx_record_fields[i].key, *sec = strstr(page, ".Sh RECORD FIELDS"), *at;
		int found = 0;
		assert_non_null(sec);
		/* on an ".It Cm a , b" line of the section, as a whole word */
		for (at = sec; !found && (at = strstr(at, k)) != NULL; at++) {
			const char *bol = at;
			while (bol > sec && bol[-1] != '\n')
				bol--;
			found = strncmp(bol, ".It Cm ", 7) == 0 && (at[-1] == ' ') &&
				(at[strlen(k)] == '\n' || at[strlen(k)] == ' ');
		}
		if (!found)
			fail_msg("man/sbx-audit.1: record field %s not in RECORD FIELDS", k);
	}
}

/* One field of every type, through encode, decode, get, JSON and columns. */
static void test_roundtrip(void **state)
{
	struct sbx_record r, d;
	struct sbx_fval v, item[3];
	unsigned char dg[32], *b, *b2;
	size_t l, l2;
	struct sbx_cols c;
	json_t *j;
	char *s;

	(void)state;
	base(&r, SBX_REC_START);
	memset(dg, 0xab, 32);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_KERNEL, "6.1.0-18-amd64", NULL, 0), 0);
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_CODE_BYTES, UINT64_MAX, NULL, 0), 0);
	assert_int_equal(sbx_rec_put_digest(&r, SBX_F_INTERP_SHA256, dg, NULL, 0), 0);
	item[0] = (struct sbx_fval){.type = SBX_FT_STR, .p = (const unsigned char *)"a\xff.csv", .n = 6};
	item[1] = (struct sbx_fval){.type = SBX_FT_U64, .u = 12};
	item[2] = (struct sbx_fval){.type = SBX_FT_DIGEST, .p = dg, .n = 32};
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 3, NULL, 0), 0);
	item[0].p = (const unsigned char *)"b.txt";
	item[0].n = 5;
	item[1].u = 0;
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 3, NULL, 0), 0);
	item[0] = (struct sbx_fval){.type = SBX_FT_U64, .u = 7};
	item[1] = (struct sbx_fval){.type = SBX_FT_DIGEST, .p = dg, .n = 32};
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_STDIN, item, 2, NULL, 0), 0);
	/* put out of tag order: kept sorted */
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_SBX_VERSION, "0.9.0", NULL, 0), 0);

	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), 0);
	assert_int_equal(b[4], 2);
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), 0);
	assert_int_equal(sbx_rec_get(&d, SBX_F_KERNEL, &v), 1);
	assert_int_equal(v.n, 14);
	assert_memory_equal(v.p, "6.1.0-18-amd64", 14);
	assert_int_equal(sbx_rec_get(&d, SBX_F_CODE_BYTES, &v), 1);
	assert_true(v.u == UINT64_MAX);
	assert_int_equal(sbx_rec_get(&d, SBX_F_INTERP_PATH, &v), 0);
	assert_int_equal(sbx_rec_get(&d, SBX_F_INPUTS, &v), 1);
	assert_int_equal(sbx_rec_items(sbx_field_def(SBX_F_INPUTS), v.p, v.n, NULL, NULL), 2);
	/* one record, one encoding */
	assert_int_equal(sbx_record_encode(&d, &b2, &l2, NULL, 0), 0);
	assert_int_equal(l, l2);
	assert_memory_equal(b, b2, l);

	j = json_object();
	assert_int_equal(sbx_rext_json(&d, j), 0);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
		"{\"code_bytes\":\"18446744073709551615\","
		"\"inputs\":[{\"name\":\"a\xef\xbf\xbd.csv\",\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":12},"
		"{\"name\":\"b.txt\",\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":0}],"
		"\"interpreter_sha256\":\"abababababababababababababababababababababababababababababababab\","
		"\"kernel_release\":\"6.1.0-18-amd64\",\"sbx_version\":\"0.9.0\","
		"\"stdin\":{\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":7}}");
	free(s);
	json_decref(j);
	/* a START has no projected field here: those columns are NULL */
	assert_int_equal(sbx_record_columns(&d, &c, NULL, 0), 0);
	for (size_t i = SBX_NCOLS; i < sbx_audit_ncols(); i++)
		assert_int_equal(c.v[i].type, SBX_COL_NULL);
	sbx_cols_free(&c);
	sbx_record_free(&d);
	sbx_rext_free(&r.ext);
	free(b);
	free(b2);
}

static void test_put_refused(void **state)
{
	struct sbx_record r;
	struct sbx_fval item[3];
	unsigned char dg[32] = {0}, *b;
	char big[300], err[200];
	size_t l, i;

	(void)state;
	base(&r, SBX_REC_START);
	assert_int_equal(sbx_rec_put_u64(&r, 9999, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not in the record-field table"));
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_KERNEL, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "wrong type"));
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_KERNEL, "x", NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_KERNEL, "y", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already set"));
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_SBX_VERSION, big, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer"));
	/* item of the wrong shape */
	item[0] = (struct sbx_fval){.type = SBX_FT_U64, .u = 1};
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 1, err, sizeof(err)), -1);
	item[0] = (struct sbx_fval){.type = SBX_FT_STR, .p = (const unsigned char *)"n", .n = 1};
	item[1] = (struct sbx_fval){.type = SBX_FT_U64, .u = 1};
	item[2] = (struct sbx_fval){.type = SBX_FT_DIGEST, .p = dg, .n = 31};
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 3, err, sizeof(err)), -1);
	item[2].n = 32;
	for (i = 0; i < sbx_field_def(SBX_F_INPUTS)->max; i++)
		assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 3, NULL, 0), 0);
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_INPUTS, item, 3, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more items"));
	/* an OBJ only once */
	item[0] = (struct sbx_fval){.type = SBX_FT_U64, .u = 1};
	item[1] = (struct sbx_fval){.type = SBX_FT_DIGEST, .p = dg, .n = 32};
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_STDIN, item, 2, NULL, 0), 0);
	assert_int_equal(sbx_rec_add_item(&r, SBX_F_STDIN, item, 2, err, sizeof(err)), -1);
	assert_int_equal(sbx_record_encode(&r, &b, &l, NULL, 0), 0);
	free(b);
	/* a field in a kind it may not appear in: refused at encoding */
	assert_int_equal(sbx_rec_put_u64(&r, SBX_F_BASE_SEQ, 5, NULL, 0), 0);
	assert_int_equal(sbx_record_encode(&r, &b, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not allowed in this kind"));
	sbx_rext_free(&r.ext);
}

/* Encode a record whose extension section is exactly ext (n bytes). */
static void with_ext(int kind, const void *ext, size_t n, unsigned char **b, size_t *l)
{
	struct sbx_record r;
	unsigned char *p;

	base(&r, kind);
	assert_int_equal(sbx_record_encode(&r, &p, l, NULL, 0), 0);
	*b = malloc(*l + n);
	assert_non_null(*b);
	memcpy(*b, p, *l);
	memcpy(*b + *l, ext, n);
	*l += n;
	free(p);
}

static void expect_refused(int kind, const void *ext, size_t n, const char *why)
{
	struct sbx_record d;
	unsigned char *b;
	size_t l;
	char err[256];

	with_ext(kind, ext, n, &b, &l);
	if (sbx_record_decode(b, l, &d, err, sizeof(err)) == 0)
		fail_msg("decoded, expected '%s'", why);
	if (strstr(err, why) == NULL)
		fail_msg("'%s', expected '%s'", err, why);
	free(b);
}

static void test_decode_hostile(void **state)
{
	/* tag (2) length (4) value */
	static const unsigned char k1[] = "\x00\x15\x00\x00\x00\x01x";        /* kernel "x" */
	static const unsigned char two[] = "\x00\x15\x00\x00\x00\x01x\x00\x14\x00\x00\x00\x01y";
	static const unsigned char dup[] = "\x00\x15\x00\x00\x00\x01x\x00\x15\x00\x00\x00\x01y";
	static const unsigned char zero[] = "\x00\x00\x00\x00\x00\x00";
	static const unsigned char past[] = "\x00\x15\x00\x00\x00\x09x";
	static const unsigned char nul[] = "\x00\x15\x00\x00\x00\x02x\x00";
	static const unsigned char dg[] = "\x00\x17\x00\x00\x00\x01x";       /* digest of 1 byte */
	static const unsigned char cnt[] = "\x00\x0a\x00\x00\x00\x04\xff\xff\xff\xff"; /* inputs */
	static const unsigned char left[] = "\x00\x0a\x00\x00\x00\x05\x00\x00\x00\x00\x00";
	static const unsigned char unknown[] = "\x03\xe7\x00\x00\x00\x02hi"; /* tag 999 */
	struct sbx_record d;
	unsigned char *b;
	size_t l, i;
	json_t *j;

	(void)state;
	with_ext(SBX_REC_START, k1, 7, &b, &l);
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), 0);
	sbx_record_free(&d);
	/* every cut is refused but the one that drops the field whole (the
	 * leaf hash, not the decoder, catches that one) */
	for (i = 0; i < l; i++)
		assert_int_equal(sbx_record_decode(b, i, &d, NULL, 0), i == l - 7 ? 0 : -1);
	sbx_record_free(&d);
	free(b);
	expect_refused(SBX_REC_START, two, 14, "strictly increasing");
	expect_refused(SBX_REC_START, dup, 14, "strictly increasing");
	expect_refused(SBX_REC_START, zero, 6, "tag 0");
	expect_refused(SBX_REC_START, past, 7, "runs past the end");
	expect_refused(SBX_REC_START, nul, 8, "NUL");
	expect_refused(SBX_REC_START, dg, 7, "digest is not 32 bytes");
	expect_refused(SBX_REC_START, cnt, 10, "more items");
	expect_refused(SBX_REC_START, left, 11, "bytes after the last item");
	expect_refused(SBX_REC_END, k1, 7, "not allowed in this kind");
	/* a version 1 blob carries no extension fields */
	with_ext(SBX_REC_START, k1, 7, &b, &l);
	b[4] = 1;
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), -1);
	free(b);
	/* nor the kinds added with version 2 */
	with_ext(SBX_REC_REFUSED, "", 0, &b, &l);
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), 0);
	sbx_record_free(&d);
	b[4] = 1;
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), -1);
	free(b);
	/* a newer writer's tag: kept, shown as bytes */
	with_ext(SBX_REC_START, unknown, 8, &b, &l);
	assert_int_equal(sbx_record_decode(b, l, &d, NULL, 0), 0);
	j = json_object();
	assert_int_equal(sbx_rext_json(&d, j), 0);
	assert_string_equal(json_string_value(json_object_get(j, "tag_999")), "6869");
	json_decref(j);
	sbx_record_free(&d);
	free(b);
}

/* ---- logs ---- */

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
}

static size_t n_findings(struct sbx_audit *a, const unsigned char *pk, int full)
{
	/* the fixture's last run (a START, 2025-01-02T03:06:05Z) is in progress */
	struct sbx_verify_opts o = {.full = full, .now_ns = (1735787165LL + 60) * 1000000000};
	struct sbx_verify_report rep;
	char err[256];
	size_t i, n;

	if (sbx_audit_verify_opts(a, pk, &o, &rep, err, sizeof(err)) < 0)
		fail_msg("verify: %s", err);
	for (i = 0; i < rep.n_findings; i++)
		print_message("# seq %lld: %s: %s\n", (long long)rep.findings[i].seq,
			      sbx_finding_kind_name(rep.findings[i].kind), rep.findings[i].what);
	n = rep.n_findings;
	sbx_verify_report_free(&rep);
	return n;
}

/* The attacker's plain connection: one statement; its first value as text
 * into out (may be NULL). */
static void attack(const char *db, const char *sql, char *out, size_t outlen)
{
	sqlite3 *h;
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW && out != NULL)
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static int blob_version(const char *db, int seq)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char q[64];
	int v = -1;

	snprintf(q, sizeof(q), "SELECT blob FROM records WHERE seq=%d", seq);
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 4)
		v = ((const unsigned char *)sqlite3_column_blob(st, 0))[4];
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static void test_v1_log(void **state)
{
	char dir[] = "/tmp/sbx-v1log.XXXXXX", db[64], key[64], pub[64], note[SBX_NOTE_MAX], err[256];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	struct sbx_audit *a;
	struct sbx_record r;
	char v[32];

	(void)state;
	assert_non_null(mkdtemp(dir));
	sh("cp %s/tests/unit/data/v1log/audit.db %s/tests/unit/data/v1log/audit.key "
	   "%s/tests/unit/data/v1log/audit.pub %s/", SBX_SRCDIR, SBX_SRCDIR, SBX_SRCDIR, dir);
	snprintf(db, sizeof(db), "%s/audit.db", dir);
	snprintf(key, sizeof(key), "%s/audit.key", dir);
	snprintf(pub, sizeof(pub), "%s/audit.pub", dir);
	assert_int_equal(chmod(key, 0400), 0);
	assert_int_equal(chmod(db, 0640), 0);
	assert_int_equal(sbx_key_load_public(pub, pk, err, sizeof(err)), 0);
	assert_int_equal(sbx_key_load_secret(key, sk, err, sizeof(err)), 0);

	/* as written by version 1: clean, by a reader */
	assert_int_equal(sbx_audit_open(db, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(sbx_audit_meta_get(a, "format", v, sizeof(v), NULL, 0), 0);
	assert_string_equal(v, "1");
	assert_int_equal(n_findings(a, pk, 1), 0);
	sbx_audit_close(a);
	assert_int_equal(blob_version(db, 1), 1);

	/* a version 2 writer upgrades it and appends */
	if (sbx_audit_open(db, 0, &a, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	assert_int_equal(sbx_audit_meta_get(a, "format", v, sizeof(v), NULL, 0), 0);
	assert_string_equal(v, "2");
	base(&r, SBX_REC_REFUSED);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_REFUSAL, "unknown_policy", NULL, 0), 0);
	assert_int_equal(sbx_rec_put_str(&r, SBX_F_REQ_POLICY, "nope", NULL, 0), 0);
	if (sbx_audit_append(a, &r, sk, "bench", NULL, err, sizeof(err)) < 0)
		fail_msg("append: %s", err);
	sbx_rext_free(&r.ext);
	assert_int_equal(r.seq, 6);
	assert_int_equal(sbx_audit_checkpoint(a, sk, "bench", 0, 0, note, err, sizeof(err)), 1);
	assert_int_equal(n_findings(a, pk, 1), 0);
	assert_int_equal(n_findings(a, pk, 0), 0);
	sbx_audit_close(a);
	assert_int_equal(blob_version(db, 1), 1);
	assert_int_equal(blob_version(db, 6), 2);

	/* the projection of a version 2 field is a column, compared by verify */
	attack(db, "SELECT refusal FROM records WHERE seq=6", v, sizeof(v));
	assert_string_equal(v, "unknown_policy");
	attack(db, "UPDATE records SET refusal='nothing' WHERE seq=6", NULL, 0);
	assert_int_equal(sbx_audit_open(db, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(n_findings(a, pk, 0), 1);
	sbx_audit_close(a);
	/* and the blob's origin against the stored one */
	attack(db, "UPDATE records SET refusal='unknown_policy', origin='x' WHERE seq=6", NULL, 0);
	assert_int_equal(sbx_audit_open(db, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(n_findings(a, pk, 0), 2); /* columns-mismatch, bad-signature */
	sbx_audit_close(a);
	sh("rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_documented),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_put_refused),
		cmocka_unit_test(test_decode_hostile),
		cmocka_unit_test(test_v1_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
