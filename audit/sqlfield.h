/* SPDX-License-Identifier: ISC */
/*
 * SQL access to the extension fields of a record's signed blob
 * (sqlfield.c), for the fields the writer does not project into columns.
 */
#ifndef SBX_AUDIT_SQLFIELD_H
#define SBX_AUDIT_SQLFIELD_H
#include <sqlite3.h>

/*
 * Register sbx_field(blob, key) on db: the field whose JSON key
 * (recfield.h, as show --json names it) is key, from the record blob;
 * NULL when absent or when the blob does not decode; an SQL error for a
 * key that is not a scalar field of the table. Returns 0, or -1 (db's
 * error message says why).
 */
int sqlfield_register(sqlite3 *db);

#endif
