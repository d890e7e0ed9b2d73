/* SPDX-License-Identifier: ISC */
/*
 * May the caller run the setuid helper, and if not, why: checked before a
 * run's exec fails with "Permission denied", and by `sbx mcp` at start-up.
 */
#ifndef SBX_CLIENT_ACCESS_H
#define SBX_CLIENT_ACCESS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when gid is the caller's effective or a supplementary group. */
bool caller_in_gid(gid_t gid);

/*
 * NULL when the caller may execute SBX_HELPER_PATH; else an error code of
 * common/errcode.h ("not_in_group", "setup") with one line in msg that
 * says why and what to do: not in group sbx (an administrator runs
 * usermod), added to it after this login session began (log in again or
 * newgrp sbx), the helper missing, or its mode changed by the
 * administrator (sbx switched off).
 */
const char *helper_access(char *msg, size_t len);

#endif
