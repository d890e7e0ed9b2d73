/* SPDX-License-Identifier: ISC */
/*
 * The "limits" object of the result, `sbx policies --json`, the dry run
 * and `sbx-audit show --json`: one function, every row of the limits
 * table (common/limit.h) under its JSON key, so there is one vocabulary.
 */
#ifndef SBX_LIMITJSON_H
#define SBX_LIMITJSON_H
#include <jansson.h>

#include "limit.h"
#include "policy.h"

/* {"wall_time_ms": 30000, ..., "cpus": 1.0, ...}: integers in the unit of
 * the key, cpus a number of CPUs. NULL when out of memory. */
json_t *sbx_limits_json(const struct sbx_limits *l);

/* The value of one limit as the object above holds it. */
json_t *sbx_limit_json(const struct sbx_limit_def *d, uint64_t v);

#endif
