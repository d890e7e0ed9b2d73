/* SPDX-License-Identifier: ISC */
/* The record fields of START (startfacts.c). */
#ifndef SBX_STARTFACTS_H
#define SBX_STARTFACTS_H
#include <stddef.h>
#include <stdint.h>

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
/* SHA-256 of size bytes of the sealed memfd fd (pread from 0); what names
 * it in err. 0, or -1. */
int hash_sealed(int fd, uint64_t size, const char *what, unsigned char out[32], char *err, size_t errlen);

#endif
