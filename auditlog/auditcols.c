/* SPDX-License-Identifier: ISC */
/*
 * The SQL columns of a record. They exist for queries (list, search by
 * user or time) and are always derived from the decoded blob, so the
 * verifier can recompute them and catch an UPDATE that edits only the
 * convenient copy.
 */
#include "auditdb.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sbx_audit_colnames[SBX_NCOLS] = {
	"seq", "kind", "run_id", "time", "realtime_ns", "uid", "user", "host",
	"policy", "language", "code_sha256", "session", "attempt", "parent_id",
	"outcome", "exit_code", "signal", "limit_fired", "wall_ms", "cpu_ms",
	"memory_peak_bytes", "stdout_bytes", "stderr_bytes", "artifacts",
};

/* Projected fields, in table order; computed once (the table is const). */
static const struct sbx_field_def *proj[SBX_MAX_PROJ];
static size_t n_proj;
static pthread_once_t proj_once = PTHREAD_ONCE_INIT;

static void find_proj(void)
{
	size_t i;

	for (i = 0; i < sbx_n_record_fields && n_proj < SBX_MAX_PROJ; i++)
		if (sbx_record_fields[i].sql != NULL && strcmp(sbx_record_fields[i].sql, "origin") != 0)
			proj[n_proj++] = &sbx_record_fields[i];
}

size_t sbx_audit_ncols(void)
{
	pthread_once(&proj_once, find_proj);
	return SBX_NCOLS + n_proj;
}

const char *sbx_audit_colname(size_t i)
{
	pthread_once(&proj_once, find_proj);
	if (i < SBX_NCOLS)
		return sbx_audit_colnames[i];
	return i - SBX_NCOLS < n_proj ? proj[i - SBX_NCOLS]->sql : NULL;
}

const struct sbx_field_def *sbx_audit_colfield(size_t i)
{
	pthread_once(&proj_once, find_proj);
	return i >= SBX_NCOLS && i - SBX_NCOLS < n_proj ? proj[i - SBX_NCOLS] : NULL;
}

static void put_digits(char *p, unsigned v, int n)
{
	while (n-- > 0) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* Proleptic Gregorian calendar, as gmtime uses: the date of a day count
 * from 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date
 * Algorithms", civil_from_days). Formatting by hand: this runs for every
 * record of a verify, where gmtime_r and snprintf cost a tenth of it. */
int sbx_iso_time(int64_t realtime_ns, char *buf, size_t len)
{
	/* Floor division so times before 1970 still come out right. */
	int64_t sec = realtime_ns / 1000000000;
	int64_t rem = realtime_ns % 1000000000;
	int64_t days, sod, z, era, doe, yoe, y, doy, mp, d, m;

	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	days = sec / 86400;
	sod = sec % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (y < 0 || y > 9999 || len < 25)
		return -1;
	/* YYYY-MM-DDTHH:MM:SS.mmmZ */
	put_digits(buf, (unsigned)y, 4);
	buf[4] = '-';
	put_digits(buf + 5, (unsigned)m, 2);
	buf[7] = '-';
	put_digits(buf + 8, (unsigned)d, 2);
	buf[10] = 'T';
	put_digits(buf + 11, (unsigned)(sod / 3600), 2);
	buf[13] = ':';
	put_digits(buf + 14, (unsigned)(sod / 60 % 60), 2);
	buf[16] = ':';
	put_digits(buf + 17, (unsigned)(sod % 60), 2);
	buf[19] = '.';
	put_digits(buf + 20, (unsigned)(rem / 1000000), 3);
	buf[23] = 'Z';
	buf[24] = '\0';
	return 0;
}

/* Lower-case hex of a public digest, as sodium_bin2hex writes it; that one
 * is constant-time, which a digest that is stored in clear does not need
 * and which cost a verify a few percent. out holds 65 bytes. */
static void hex32(char *out, const unsigned char *d)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < 32; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[64] = '\0';
}

static void set_int(struct sbx_colval *v, int64_t i)
{
	v->type = SBX_COL_INT;
	v->i = i;
}

static void set_text(struct sbx_colval *v, const char *s)
{
	v->type = SBX_COL_TEXT;
	v->s = s;
	v->n = strlen(s);
}

static void set_opt_text(struct sbx_colval *v, const char *s)
{
	if (s[0] != '\0')
		set_text(v, s);
}

static json_t *jstr(const char *s)
{
	char *clean;
	json_t *j = json_string(s);

	if (j != NULL)
		return j;
	/* Artifact names are whatever the payload created: keep the column
	 * valid JSON by replacing bytes that are not UTF-8. */
	clean = sbx_utf8_sanitize(s, strlen(s));
	if (clean == NULL)
		return NULL;
	j = json_string(clean);
	free(clean);
	return j;
}

static char *artifacts_json(const struct sbx_record *r)
{
	json_t *arr = json_array();
	char hex[65];
	char *out;
	size_t i;

	if (arr == NULL)
		return NULL;
	for (i = 0; i < r->n_artifacts; i++) {
		const struct sbx_artifact *a = &r->artifacts[i];
		json_t *o = json_object();
		sodium_bin2hex(hex, sizeof(hex), a->sha256, 32);
		if (o == NULL || json_array_append_new(arr, o) < 0 ||
		    json_object_set_new(o, "name", jstr(a->name)) < 0 ||
		    json_object_set_new(o, "size", json_integer((json_int_t)a->size)) < 0 ||
		    json_object_set_new(o, "media_type", jstr(a->media_type)) < 0 ||
		    json_object_set_new(o, "sha256", json_string(hex)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	/* Key order is insertion order (jansson >= 2.8), so the text is stable. */
	out = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return out;
}

/* The projected fields' values (NULL when absent): one pass over the
 * record's fields, which are in tag order as proj[] is (the table's order),
 * instead of a search per column (verify does this for every record). */
static void project(const struct sbx_record *r, struct sbx_cols *c)
{
	size_t i = 0, n = sbx_audit_ncols() - SBX_NCOLS, off = 0, len;
	const struct sbx_field_def *def;
	const unsigned char *p;
	unsigned tag;

	while (i < n && r->ext.len > 0 && sbx_rec_next(r, &off, &tag, &def, &p, &len)) {
		struct sbx_colval *v;
		struct sbx_fval f;
		while (i < n && proj[i]->tag < tag)
			i++;
		if (i == n || proj[i]->tag != tag || def == NULL)
			continue;
		v = &c->v[SBX_NCOLS + i];
		memset(&f, 0, sizeof(f));
		if (def->type == SBX_FT_LIST || def->type == SBX_FT_OBJ || sbx_fval_parse(def->type, p, len, &f) != 0)
			continue;
		switch (f.type) {
		case SBX_FT_U64:
		case SBX_FT_I64:
			set_int(v, f.i); /* U64 as its two's complement, like the fixed ones */
			break;
		case SBX_FT_DIGEST:
			hex32(c->proj_hex[i], f.p);
			set_text(v, c->proj_hex[i]);
			break;
		case SBX_FT_STR:
			v->type = SBX_COL_TEXT;
			v->s = (const char *)f.p;
			v->n = f.n;
			break;
		default:
			break; /* BYTES, LIST, OBJ are never projected (unit test) */
		}
	}
}

int sbx_record_columns(const struct sbx_record *r, struct sbx_cols *c,
		       char *err, size_t errlen)
{
	const char *kind = sbx_record_kind_name(r->kind);
	struct sbx_colval *v;

	/* only what is read: this runs for every record of a verify */
	memset(c->v, 0, sbx_audit_ncols() * sizeof(c->v[0]));
	c->artifacts_json = NULL;
	v = c->v;
	set_int(&v[SBX_COL_SEQ], (int64_t)r->seq);
	if (kind != NULL)
		set_text(&v[SBX_COL_KIND], kind);
	set_text(&v[SBX_COL_RUN_ID], r->run_id);
	if (sbx_iso_time(r->realtime_ns, c->time, sizeof(c->time)) == 0)
		set_text(&v[SBX_COL_TIME], c->time);
	set_int(&v[SBX_COL_REALTIME_NS], r->realtime_ns);
	set_int(&v[SBX_COL_UID], r->uid);
	set_text(&v[SBX_COL_USER], r->user);
	set_text(&v[SBX_COL_HOST], r->host);
	set_text(&v[SBX_COL_POLICY], r->policy);
	set_text(&v[SBX_COL_LANGUAGE], r->language);
	hex32(c->code_hex, r->code_sha256);
	set_text(&v[SBX_COL_CODE_SHA256], c->code_hex);
	set_opt_text(&v[SBX_COL_SESSION], r->session);
	set_int(&v[SBX_COL_ATTEMPT], r->attempt);
	set_opt_text(&v[SBX_COL_PARENT_ID], r->parent_id);
	project(r, c);
	if (kind == NULL || !(sbx_kind_def(r->kind)->flags & SBX_KF_END_FIELDS))
		return 0;
	set_text(&v[SBX_COL_OUTCOME], r->outcome);
	set_int(&v[SBX_COL_EXIT_CODE], r->exit_code);
	set_int(&v[SBX_COL_SIGNAL], r->signal);
	set_opt_text(&v[SBX_COL_LIMIT_FIRED], r->limit);
	/* Unsigned counters are stored as their two's complement bit pattern;
	 * real values never reach 2^63. */
	set_int(&v[SBX_COL_WALL_MS], (int64_t)r->wall_ms);
	set_int(&v[SBX_COL_CPU_MS], (int64_t)r->cpu_ms);
	set_int(&v[SBX_COL_MEMORY_PEAK], (int64_t)r->memory_peak_bytes);
	set_int(&v[SBX_COL_STDOUT_BYTES], (int64_t)r->stdout_bytes);
	set_int(&v[SBX_COL_STDERR_BYTES], (int64_t)r->stderr_bytes);
	if (r->n_artifacts == 0) {
		/* what json_dumps gives for an empty array, without building one */
		set_text(&v[SBX_COL_ARTIFACTS], "[]");
		return 0;
	}
	c->artifacts_json = artifacts_json(r);
	if (c->artifacts_json == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "artifacts column: out of memory");
		return -1;
	}
	set_text(&v[SBX_COL_ARTIFACTS], c->artifacts_json);
	return 0;
}

void sbx_cols_free(struct sbx_cols *c)
{
	free(c->artifacts_json);
	c->artifacts_json = NULL;
}
