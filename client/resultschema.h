/* SPDX-License-Identifier: ISC */
/*
 * The result JSON Schema (docs/result.schema.json), built into sbx: the one
 * source of the result's shape. Every result carries its schema_version;
 * the MCP tool's outputSchema is the same schema, self-contained.
 */
#ifndef SBX_CLIENT_RESULTSCHEMA_H
#define SBX_CLIENT_RESULTSCHEMA_H
#include <jansson.h>

/* "MAJOR.MINOR": the schema's properties.schema_version.const. */
const char *result_schema_version(void);

/* The schema as written (new reference; NULL when out of memory). */
json_t *result_schema(void);

/* The schema with every "$ref" replaced by a copy of its "$defs" entry and
 * without "$schema", "$id" and "$defs": what clients that resolve no
 * references (MCP outputSchema) can use (new reference, or NULL). */
json_t *result_schema_inline(void);

#endif
