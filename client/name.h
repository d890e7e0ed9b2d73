/* SPDX-License-Identifier: ISC */
/* The file name the code gets under /code (proto.h --name). */
#ifndef SBX_CLIENT_NAME_H
#define SBX_CLIENT_NAME_H
#include <stddef.h>

#define CODE_NAME_MAX 64

/* 1 if name is acceptable to the helper: [A-Za-z0-9._-], 1..64 bytes,
 * not starting with '.'; else 0. */
int code_name_valid(const char *name);

/*
 * A name for FILE's code from its basename: other bytes become '_' (a run
 * of them one '_'), leading dots go, and an over-long name loses the end of
 * its stem rather than its suffix, so "my report (v2).py" -> "my_report_v2_.py".
 * Writes "" when nothing usable is left; out has CODE_NAME_MAX + 1 bytes.
 */
void code_name_from_path(const char *path, char *out);

#endif
