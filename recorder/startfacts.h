/* SPDX-License-Identifier: ISC */
/* The record fields of START (startfacts.c). */
#ifndef SBX_STARTFACTS_H
#define SBX_STARTFACTS_H
#include <stddef.h>

struct rec;
struct sbx_record;

/*
 * Add to rec (a START) the fields of version 2 that describe the run:
 * the input_size limit, sbx_version, code_bytes, kernel_release,
 * interpreter_path, the environment (environment.h, also into c->env for
 * the result) and, unless
 * the run is refused, the inputs with their SHA-256 (also kept in
 * c->input_sha256 for the result). Returns 0, or -1 with err (an input
 * that cannot be read whole: the run must not start).
 */
int start_fields(struct sbx_record *rec, struct rec *c, char *err, size_t errlen);

#endif
