/* SPDX-License-Identifier: ISC */
/* The caller's allocation in START, END and the result (allocation.c). */
#ifndef SBX_ALLOCATION_H
#define SBX_ALLOCATION_H
#include <stddef.h>
#include <jansson.h>

struct sbx_record;
struct sbx_run_desc;

/* Add allocation_tightened and allocation_nested to rec (START or END)
 * when they are not empty. 0, or -1 with err. */
int allocation_fields(struct sbx_record *rec, const struct sbx_run_desc *d, char *err, size_t errlen);
/* The result's "allocation": {"tightened": ["memory", ...], "nested":
 * ["memory", ...]} (docs/result.schema.json); NULL when both are empty. */
json_t *allocation_json(const struct sbx_run_desc *d);

#endif
