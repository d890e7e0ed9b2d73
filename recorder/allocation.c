/* SPDX-License-Identifier: ISC */
/*
 * What the caller's allocation did to a run (helper/cgcaller.c, issue 21):
 * which limits its cgroups lowered (bits of enum sbx_limit in the run
 * description, named by the limit table's policy keys) and which v1
 * controllers have the run's cgroup beneath the caller's. The supervisor
 * decided both from cgroupfs; this only spells them out.
 */
#include <stdint.h>
#include <string.h>
#include <bsd/string.h>

#include "allocation.h"
#include "limit.h"
#include "recfield.h"
#include "record.h"
#include "rundesc.h"

_Static_assert(SBX_LIMIT_N <= 64, "alloc_tightened holds one bit per limit");

static void tightened_names(const struct sbx_run_desc *d, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < SBX_LIMIT_N; i++)
		if (d->alloc_tightened & (1ULL << i)) {
			if (buf[0])
				strlcat(buf, " ", len);
			strlcat(buf, sbx_limit_defs[i].key, len);
		}
}

int allocation_fields(struct sbx_record *rec, const struct sbx_run_desc *d, char *err, size_t errlen)
{
	char names[64];

	tightened_names(d, names, sizeof(names));
	if (names[0] && sbx_rec_put_str(rec, SBX_F_ALLOC_TIGHTENED, names, err, errlen) < 0)
		return -1;
	if (d->alloc_nested[0] && sbx_rec_put_str(rec, SBX_F_ALLOC_NESTED, d->alloc_nested, err, errlen) < 0)
		return -1;
	return 0;
}

/* "a b c" as a JSON array of strings */
static json_t *words(const char *s)
{
	json_t *a = json_array();

	while (a != NULL && *s) {
		size_t n = strcspn(s, " ");
		if (n > 0)
			json_array_append_new(a, json_stringn(s, n));
		s += n;
		s += strspn(s, " ");
	}
	return a;
}

json_t *allocation_json(const struct sbx_run_desc *d)
{
	char names[64];

	tightened_names(d, names, sizeof(names));
	if (names[0] == '\0' && d->alloc_nested[0] == '\0')
		return NULL;
	return json_pack("{s:o,s:o}", "tightened", words(names), "nested", words(d->alloc_nested));
}
