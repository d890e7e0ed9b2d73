/* SPDX-License-Identifier: ISC */
/* The limits as JSON (limitjson.h). */
#include "limitjson.h"

json_t *sbx_limit_json(const struct sbx_limit_def *d, uint64_t v)
{
	if (d->unit == SBX_UNIT_MILLICPU)
		return json_real((double)v / 1000.0);
	return json_integer((json_int_t)v);
}

json_t *sbx_limits_json(const struct sbx_limits *l)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i < SBX_LIMIT_N; i++) {
		const struct sbx_limit_def *d = &sbx_limit_defs[i];

		if (json_object_set_new(o, d->json, sbx_limit_json(d, sbx_limit_get(l, d->id))) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
