/* SPDX-License-Identifier: ISC */
/*
 * The sandbox's seccomp filter as libseccomp rules: the one definition of
 * every profile (docs/seccomp.md). Linked by the build-time generator
 * (seccomp/gen.c, which exports each variant's BPF into the setuid helper
 * as data) and by the unit test that compiles the same rules at run time
 * and compares the two byte for byte (tests/unit/test_seccomp.c). Never
 * linked by sbx-helper: the helper loads the precompiled program
 * (helper/seccomp.c) and does not link libseccomp.
 */
#ifndef SBX_SECCOMP_RULES_H
#define SBX_SECCOMP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <seccomp.h>

#include "policy.h"

/* The filter depends on two policy values only, never on a run's own
 * values (paths, ids, addresses): the profile and the network mode; one
 * program per pair (SBX_SECCOMP_PROFILES x SBX_NET_MODES, policy.h). */

/* A filter context for the native architecture with every rule of the
 * (profile, net) variant added, or NULL with err set (what failed and the
 * libseccomp error). The caller releases it (seccomp_release). */
scmp_filter_ctx sbx_seccomp_build(enum sbx_seccomp_profile profile, enum sbx_net_mode net,
				  char *err, size_t errlen);

/* The BPF program libseccomp generates for ctx (seccomp_export_bpf), in
 * *prog (malloc'd, the caller frees) and its size in bytes in *len; -1 with
 * err set on failure. */
int sbx_seccomp_export(scmp_filter_ctx ctx, unsigned char **prog, size_t *len, char *err, size_t errlen);

#endif
