/* SPDX-License-Identifier: ISC */
/* The limits table (limit.h) and what reads and writes its values. */
#include "limit.h"

#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "units.h"

const struct sbx_limit_def sbx_limit_defs[SBX_LIMIT_N] = {
#define SBX_LIMIT_ROW(sym, key, unit, json, field, def, max, what, doc, opt) \
	[SBX_LIMIT_##sym] = {key, json, what, doc, opt, offsetof(struct sbx_limits, field), def, max, SBX_LIMIT_##sym, unit},
	SBX_LIMITS(SBX_LIMIT_ROW)
#undef SBX_LIMIT_ROW
};

/* Every field of struct sbx_limits is in the table, once (SBX_LIMIT_N
 * counts the rows). */
_Static_assert(sizeof(struct sbx_limits) == SBX_LIMIT_N * sizeof(uint64_t), "a struct sbx_limits field without a row");

uint64_t sbx_limit_get(const struct sbx_limits *l, enum sbx_limit id)
{
	uint64_t v;

	memcpy(&v, (const char *)l + sbx_limit_defs[id].offset, sizeof(v));
	return v;
}

void sbx_limit_set(struct sbx_limits *l, enum sbx_limit id, uint64_t v)
{
	memcpy((char *)l + sbx_limit_defs[id].offset, &v, sizeof(v));
}

const struct sbx_limit_def *sbx_limit_by_key(const char *key)
{
	for (size_t i = 0; i < SBX_LIMIT_N; i++)
		if (strcmp(key, sbx_limit_defs[i].key) == 0)
			return &sbx_limit_defs[i];
	return NULL;
}

void sbx_limits_default(struct sbx_limits *l)
{
	for (size_t i = 0; i < SBX_LIMIT_N; i++)
		sbx_limit_set(l, (enum sbx_limit)i, sbx_limit_defs[i].def);
}

int sbx_limit_parse(const struct sbx_limit_def *d, const char *s, uint64_t *out, const char **why)
{
	int rc = -1;

	switch (d->unit) {
	case SBX_UNIT_MS:
		rc = sbx_parse_duration_ms(s, out);
		*why = "not a duration (examples: 30s, 500ms, 2m)";
		break;
	case SBX_UNIT_BYTES:
		rc = sbx_parse_size(s, out);
		*why = "not a size (examples: 512M, 64K, 1G)";
		break;
	case SBX_UNIT_COUNT:
		rc = sbx_parse_uint(s, d->max, out);
		*why = "not a whole number in range";
		break;
	case SBX_UNIT_MILLICPU:
		/* a number of CPUs with up to three decimals: the duration
		 * parser reads "0.5" (seconds) as 500 (milliseconds) */
		rc = sbx_parse_duration_ms(s, out) < 0 || strpbrk(s, "smh") != NULL ? -1 : 0;
		*why = "not a CPU count (examples: 1, 0.5, 2)";
		break;
	}
	if (rc < 0 || *out == 0)
		return -1;
	if (*out > d->max) {
		*why = "above the most sbx accepts";
		return -2;
	}
	return 0;
}

void sbx_limit_format(const struct sbx_limit_def *d, uint64_t v, char *buf, size_t len)
{
	switch (d->unit) {
	case SBX_UNIT_MS:
		sbx_format_duration_ms(v, buf, len);
		return;
	case SBX_UNIT_BYTES:
		sbx_format_size(v, buf, len);
		return;
	case SBX_UNIT_COUNT:
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return;
	case SBX_UNIT_MILLICPU:
		if (v % 1000 == 0)
			snprintf(buf, len, "%llu", (unsigned long long)(v / 1000));
		else if (v % 100 == 0)
			snprintf(buf, len, "%llu.%llu", (unsigned long long)(v / 1000), (unsigned long long)(v % 1000 / 100));
		else
			snprintf(buf, len, "%llu.%03llu", (unsigned long long)(v / 1000), (unsigned long long)(v % 1000));
		return;
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

const char *sbx_unit_name(enum sbx_unit u)
{
	switch (u) {
	case SBX_UNIT_MS: return "ms";
	case SBX_UNIT_BYTES: return "bytes";
	case SBX_UNIT_MILLICPU: return "thousandths";
	case SBX_UNIT_COUNT: break;
	}
	return "";
}
