/* SPDX-License-Identifier: ISC */
#include "resultschema.h"

#include <string.h>

#include "result_schema.h" /* generated from docs/result.schema.json */

json_t *result_schema(void)
{
	return json_loads(sbx_result_schema_json, 0, NULL);
}

const char *result_schema_version(void)
{
	static char v[16];

	if (v[0] == '\0') {
		json_t *s = result_schema();
		const char *c = json_string_value(
			json_object_get(json_object_get(json_object_get(s, "properties"), "schema_version"),
					"const"));
		/* the unit test checks that the built-in schema has one */
		snprintf(v, sizeof(v), "%s", c ? c : "?");
		json_decref(s);
	}
	return v;
}

/* Replace {"$ref": "#/$defs/NAME"} in v (recursively) by a copy of
 * defs[NAME], itself inlined; the schema has no cycles (the unit test
 * inlines it). 0, or -1 for a reference that is not in defs. */
static int inline_refs(json_t *v, json_t *defs, int depth) // NOLINT(misc-no-recursion): depth capped at 32
{
	const char *k;
	json_t *x;
	size_t i;

	if (depth > 32)
		return -1;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			json_t *ref = json_object_get(x, "$ref");
			if (json_is_string(ref)) {
				const char *r = json_string_value(ref);
				json_t *d = strncmp(r, "#/$defs/", 8) == 0 ? json_object_get(defs, r + 8) : NULL;
				if (d == NULL)
					return -1;
				d = json_deep_copy(d);
				if (d == NULL || inline_refs(d, defs, depth + 1) < 0 || json_array_set_new(v, i, d) < 0)
					return -1;
			} else if (inline_refs(x, defs, depth + 1) < 0) {
				return -1;
			}
		}
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	json_object_foreach(v, k, x) {
		json_t *ref = json_object_get(x, "$ref");
		if (json_is_string(ref)) {
			const char *r = json_string_value(ref);
			json_t *d = strncmp(r, "#/$defs/", 8) == 0 ? json_object_get(defs, r + 8) : NULL;
			json_t *desc = json_object_get(x, "description");
			if (d == NULL)
				return -1;
			d = json_deep_copy(d);
			/* a description beside the $ref is kept */
			if (d == NULL || inline_refs(d, defs, depth + 1) < 0 ||
			    (desc != NULL && json_object_set(d, "description", desc) < 0) ||
			    json_object_set_new(v, k, d) < 0)
				return -1;
		} else if (inline_refs(x, defs, depth + 1) < 0) {
			return -1;
		}
	}
	return 0;
}

json_t *result_schema_inline(void)
{
	json_t *s = result_schema(), *defs;

	if (s == NULL)
		return NULL;
	defs = json_incref(json_object_get(s, "$defs"));
	json_object_del(s, "$defs");
	json_object_del(s, "$schema");
	json_object_del(s, "$id");
	if (inline_refs(s, defs, 0) < 0) {
		json_decref(s);
		s = NULL;
	}
	json_decref(defs);
	return s;
}
