/* SPDX-License-Identifier: ISC */
/* sbx-audit show: the human-readable form. Every string is escaped. */
#include "show.h"

#include "limit.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "unconst.h"

static void field(const char *name)
{
	/* a label longer than the column still gets its space */
	printf("  %-13s ", name);
}

static void hex(const unsigned char *p, size_t n)
{
	char h[2 * 64 + 1];

	sodium_bin2hex(h, sizeof(h), p, n);
	fputs(h, stdout);
}

static void argv_line(const struct sbx_record *r)
{
	size_t i = 0;
	int first = 1;

	while (i < r->argv_len) {
		const char *arg = r->argv + i;
		size_t n = strnlen(arg, r->argv_len - i);
		char *e = out_esc(arg, n, 0);
		int quote = n == 0 || strpbrk(e, " '\"") != NULL;

		printf("%s%s%s%s", first ? "" : " ", quote ? "'" : "", e, quote ? "'" : "");
		free(e);
		first = 0;
		i += n + 1;
	}
	fputc('\n', stdout);
}

/* Every limit as a policy writes it (limit.h), six to a line; input_size
 * from its version 2 field (older records do not say it). */
static void limits(const struct sbx_record *r)
{
	struct sbx_limits l = r->limits;
	struct sbx_fval v;
	int have_input = sbx_rec_get(r, SBX_F_INPUT_LIMIT, &v) == 1;
	int k = 0;

	if (have_input)
		l.input_bytes = v.u;
	if (sbx_rec_get(r, SBX_F_WS_LIMIT, &v) == 1)
		l.workspace_bytes = v.u;
	for (size_t i = 0; i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];
		char val[32];

		/* 0 is no limit's value: a row the record does not carry */
		if ((d->id == SBX_LIMIT_INPUT_SIZE && !have_input) || sbx_limit_get(&l, d->id) == 0)
			continue;
		if (k % 6 == 0) {
			if (k > 0)
				fputc('\n', stdout);
			field(k == 0 ? "limits" : "");
		}
		sbx_limit_format(d, sbx_limit_get(&l, d->id), val, sizeof(val));
		printf("%s%s %s", k % 6 ? ", " : "", d->key, val);
		k++;
	}
	fputc('\n', stdout);
}

static void common(const struct sbx_record *r)
{
	field("host");
	out_str(stdout, r->host);
	fputs(" (boot ", stdout);
	out_str(stdout, r->boot_id[0] ? r->boot_id : "-");
	printf(")\n");
	field("user");
	out_str(stdout, r->user);
	printf(" (uid %" PRIu32 ", gid %" PRIu32 ")\n", r->uid, r->gid);
	/* refused before a policy loaded: none applied (what was asked for
	 * follows, in its own fields) */
	if (r->kind != SBX_REC_REFUSED) {
		field("policy");
		out_str(stdout, r->policy);
		fputs("  sha256 ", stdout);
		hex(r->policy_sha256, 32);
		fputc('\n', stdout);
		limits(r);
		field("language");
		out_str(stdout, r->language);
		fputc('\n', stdout);
		field("argv");
		argv_line(r);
	}
	field("code sha256");
	hex(r->code_sha256, 32);
	fputc('\n', stdout);
	field("session");
	out_str(stdout, r->session[0] ? r->session : "-");
	printf("  attempt %" PRIu32 "  parent ", r->attempt);
	out_str(stdout, r->parent_id[0] ? r->parent_id : "-");
	fputc('\n', stdout);
}

static void excerpt(const char *s)
{
	char *e = out_esc(s, strlen(s), 1), *line, *save = NULL;

	printf("  stderr excerpt:\n");
	for (line = strtok_r(e, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		printf("    | %s\n", line);
	free(e);
}

static void end_fields(const struct sbx_record *r)
{
	size_t i;

	field("outcome");
	out_str(stdout, r->outcome);
	if (r->signal != 0)
		printf("  signal %" PRId32, r->signal);
	else
		printf("  exit %" PRId32, r->exit_code);
	fputs("  limit ", stdout);
	out_str(stdout, r->limit[0] ? r->limit : "-");
	fputc('\n', stdout);
	if (r->error[0]) {
		field("error");
		out_str(stdout, r->error);
		fputc('\n', stdout);
	}
	field("resources");
	printf("wall %" PRIu64 " ms, cpu %" PRIu64 " ms, memory peak %" PRIu64 " B\n",
	       r->wall_ms, r->cpu_ms, r->memory_peak_bytes);
	field("stdout");
	printf("%" PRIu64 " B  sha256 ", r->stdout_bytes);
	hex(r->stdout_sha256, 32);
	fputc('\n', stdout);
	field("stderr");
	printf("%" PRIu64 " B  sha256 ", r->stderr_bytes);
	hex(r->stderr_sha256, 32);
	fputc('\n', stdout);
	if (r->stderr_excerpt[0])
		excerpt(r->stderr_excerpt);
	field("artifacts");
	printf("%zu\n", r->n_artifacts);
	for (i = 0; i < r->n_artifacts; i++) {
		const struct sbx_artifact *a = &r->artifacts[i];
		fputs("    ", stdout);
		out_str(stdout, a->name);
		printf("  %" PRIu64 " B  ", a->size);
		out_str(stdout, a->media_type[0] ? a->media_type : "-");
		fputs("  sha256 ", stdout);
		hex(a->sha256, 32);
		fputc('\n', stdout);
	}
}

/* One scalar value, escaped: integers in decimal, digests and bytes hex. */
static void value(const struct sbx_fval *v)
{
	switch (v->type) {
	case SBX_FT_U64:
		printf("%" PRIu64, v->u);
		break;
	case SBX_FT_I64:
		printf("%" PRId64, v->i);
		break;
	case SBX_FT_STR: {
		char *e = out_esc((const char *)v->p, v->n, 0);
		fputs(v->n ? e : "''", stdout);
		free(e);
		break;
	}
	default:
		hex(v->p, v->n > 64 ? 64 : v->n);
		if (v->n > 64)
			printf("... (%zu bytes)", v->n);
		break;
	}
}

static void item_text(size_t idx, const struct sbx_fval *vals, void *ctx)
{
	const struct sbx_field_def *f = ctx;
	size_t k;

	(void)idx;
	fputs(f->type == SBX_FT_LIST ? "    " : "", stdout);
	for (k = 0; f->sub[k].key != NULL; k++) {
		printf("%s%s ", k ? "  " : "", f->sub[k].key);
		value(&vals[k]);
	}
	fputc('\n', stdout);
}

/* Version 2: every extension field, labelled by the record-field table. */
static void ext_fields(const struct sbx_record *r)
{
	const struct sbx_field_def *f;
	const unsigned char *p;
	size_t off = 0, n;
	unsigned tag;

	while (sbx_rec_next(r, &off, &tag, &f, &p, &n)) {
		struct sbx_fval v;
		if (f != NULL && f->tag == SBX_F_ORIGIN)
			continue; /* printed from the stored column, which verify compares */
		if (f == NULL) {
			char label[32];
			snprintf(label, sizeof(label), "tag %u", tag);
			field(label);
			printf("(a field this sbx-audit does not know, %zu bytes) ", n);
			v = (struct sbx_fval){.type = SBX_FT_BYTES, .p = p, .n = n};
			value(&v);
			fputc('\n', stdout);
		} else if (f->type == SBX_FT_LIST) {
			field(f->label);
			printf("%ld\n", sbx_rec_items(f, p, n, NULL, NULL));
			sbx_rec_items(f, p, n, item_text, sbx_unconst(f));
		} else if (f->type == SBX_FT_OBJ) {
			field(f->label);
			sbx_rec_items(f, p, n, item_text, sbx_unconst(f));
		} else if (sbx_fval_parse(f->type, p, n, &v) == 0) {
			field(f->label);
			value(&v);
			fputc('\n', stdout);
		}
	}
}

/* The kind table's name in capitals ("START"), into u (16 bytes). */
static const char *kind_label(int kind, char *u)
{
	const char *k = sbx_record_kind_name(kind);
	size_t i;

	for (i = 0; k != NULL && k[i] && i < 15; i++)
		u[i] = (char)toupper((unsigned char)k[i]);
	u[i] = '\0';
	return u;
}

void show_text(const struct shown *r, size_t n)
{
	int have_start = 0;
	size_t i;

	for (i = 0; i < n; i++)
		have_start |= r[i].ok && r[i].rec.kind == SBX_REC_START;
	for (i = 0; i < n; i++) {
		const struct sbx_record *rec = &r[i].rec;
		char t[48] = "-", u[16];

		if (!r[i].ok) {
			printf("%s?   seq %" PRId64 "  undecodable: ", i ? "\n" : "", r[i].seq);
			out_str(stdout, r[i].why);
			fputc('\n', stdout);
			continue;
		}
		sbx_iso_time(rec->realtime_ns, t, sizeof(t));
		printf("%s%-5s seq %" PRId64 "  %s  run ", i ? "\n" : "", kind_label(rec->kind, u),
		       r[i].seq, t);
		out_str(stdout, rec->run_id);
		fputc('\n', stdout);
		if (rec->kind != SBX_REC_END || !have_start)
			common(rec);
		if (sbx_kind_def(rec->kind)->flags & SBX_KF_END_FIELDS)
			end_fields(rec);
		ext_fields(rec);
		field("origin");
		out_str(stdout, r[i].origin);
		fputc('\n', stdout);
		if (r[i].has_chain) {
			field("chain");
			hex(r[i].chain, 32);
			fputc('\n', stdout);
		}
	}
	if (have_start && !(r[n - 1].ok && r[n - 1].rec.kind == SBX_REC_END))
		printf("\n(no END record: the run is incomplete)\n");
}
