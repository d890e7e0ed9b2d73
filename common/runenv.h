/* SPDX-License-Identifier: ISC */
/*
 * The payload's environment. The helper clears its own environment first
 * (helper/sanitize.c), so nothing of the caller's reaches the payload: what
 * it gets is composed here from root-owned files only, in this order:
 *
 *   1. the policy's [env] set (sbx.policy(5)), as written;
 *   2. the language's search_path from sbx.conf(5) ("VAR=/DIR:/DIR"): VAR
 *      becomes those directories followed by ':' and the policy's value of
 *      VAR when the policy sets it, else the directories alone;
 *   3. the language's env defaults, each unless the policy sets it;
 *   4. the CPU-count variables (sbx_cpu_vars), set to the number of CPUs
 *      the run may use, each unless the policy sets it.
 */
#ifndef SBX_RUNENV_H
#define SBX_RUNENV_H
#include <stddef.h>

#include "policy.h"

/* Variables thread pools and CPU probes read to size themselves: OpenMP
 * (OMP_NUM_THREADS), OpenBLAS, Intel MKL, BLIS, numexpr, and Python 3.13's
 * os.cpu_count() (PYTHON_CPU_COUNT). */
extern const char *const sbx_cpu_vars[];
extern const size_t sbx_n_cpu_vars;

#define SBX_RUNENV_MAX (SBX_MAX_ENV + SBX_MAX_LANG_ENV + 8)
#define SBX_RUNENV_LEN 520 /* a search path and a policy value of 255 bytes each */

struct sbx_runenv {
	char entry[SBX_RUNENV_MAX][SBX_RUNENV_LEN];
	char *envp[SBX_RUNENV_MAX + 1]; /* NULL-terminated, for execve(2) */
	size_t n;
};

/* Compose the environment of a run of language l (NULL: none) under policy
 * p that may use cpus CPUs. Cannot fail: the parsers bound every input. */
void sbx_runenv_build(struct sbx_runenv *e, const struct sbx_policy *p, const struct sbx_language *l,
		      unsigned cpus);

#endif
