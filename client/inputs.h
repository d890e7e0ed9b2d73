/* SPDX-License-Identifier: ISC */
/* Input files (`sbx run --input PATH`), handed to the helper as sealed
 * memfds (proto.h --input-fd/--input-name). */
#ifndef SBX_CLIENT_INPUTS_H
#define SBX_CLIENT_INPUTS_H
#include "cli.h"

/*
 * Open every o->inputs[i] as the caller (so only files the caller may read),
 * copy it into a memfd sealed against writing, shrinking and growing, and
 * fill o->input_fds / o->input_names (the basename). Dies with
 * "sbx: --input: PATH: why" (exit 125) on a file that cannot be read, is
 * not a regular file, has a basename the sandbox does not accept, repeats
 * another input's name, or makes the inputs larger than SBX_INPUTS_MAX
 * bytes (the policy's input_size is checked by the helper).
 */
void inputs_open(struct run_opts *o);

/*
 * sbx run -c CODE or FILE: when the standard input is a pipe, a socket or
 * a regular file (not a terminal, not a device such as /dev/null), read
 * it to its end into a sealed memfd (o->stdin_fd) that becomes the
 * program's standard input; at most cap bytes (the policy's input_size,
 * which the helper checks again), else exit 77 with code input_too_large
 * naming the cap and the policy. With "-" (the code is read from stdin)
 * or a terminal, nothing is read.
 */
void stdin_open(struct run_opts *o, uint64_t cap, const char *policy);

#endif
