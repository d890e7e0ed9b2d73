/* SPDX-License-Identifier: ISC */
/* The record fields of START (startfacts.c). */
#ifndef SBX_STARTFACTS_H
#define SBX_STARTFACTS_H
#include <stddef.h>

struct run;
struct run_env;
struct sbx_record;

/*
 * Add to rec (a START) the fields of version 2 that describe the run:
 * sbx_version, code_bytes, kernel_release, interpreter_path, the
 * environment (environment.h, also into *env for the result) and, unless
 * the run is refused (r->error set), the inputs with their SHA-256 (also
 * kept in r->inputs[i].sha256 for the result). Returns 0, or -1 with err
 * (an input that cannot be read whole: the run must not start).
 */
int start_fields(struct sbx_record *rec, struct run *r, struct run_env *env, char *err, size_t errlen);

#endif
