/* SPDX-License-Identifier: ISC */
#include "runenv.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *const sbx_cpu_vars[] = {
	"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
	"BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "PYTHON_CPU_COUNT",
};
const size_t sbx_n_cpu_vars = sizeof(sbx_cpu_vars) / sizeof(sbx_cpu_vars[0]);

/* The entry of e setting the variable named by name[0..n), or -1. */
static long find(const struct sbx_runenv *e, const char *name, size_t n)
{
	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->entry[i], name, n) == 0 && e->entry[i][n] == '=')
			return (long)i;
	return -1;
}

static void add(struct sbx_runenv *e, const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (eq == NULL || e->n == SBX_RUNENV_MAX || find(e, kv, (size_t)(eq - kv)) >= 0)
		return;
	snprintf(e->entry[e->n++], SBX_RUNENV_LEN, "%s", kv);
}

void sbx_runenv_build(struct sbx_runenv *e, const struct sbx_policy *p, const struct sbx_language *l,
		      unsigned cpus)
{
	char kv[64];

	e->n = 0;
	for (size_t i = 0; i < p->n_env; i++)
		add(e, p->env[i]);
	if (l != NULL && l->search_path[0] != '\0') {
		const char *eq = strchr(l->search_path, '=');
		size_t n = (size_t)(eq - l->search_path);
		long at = find(e, l->search_path, n);

		if (at < 0) {
			add(e, l->search_path);
		} else {
			char *policy_value = e->entry[at] + n + 1;
			char joined[SBX_RUNENV_LEN];
			/* an empty policy value would add "" (the working
			 * directory) to the path: leave it out */
			snprintf(joined, sizeof(joined), "%s%s%s", l->search_path, policy_value[0] ? ":" : "",
				 policy_value);
			memcpy(e->entry[at], joined, sizeof(joined));
		}
	}
	for (size_t i = 0; l != NULL && i < l->n_env; i++)
		add(e, l->env[i]);
	for (size_t i = 0; i < sbx_n_cpu_vars; i++) {
		snprintf(kv, sizeof(kv), "%s=%u", sbx_cpu_vars[i], cpus);
		add(e, kv);
	}
	for (size_t i = 0; i < e->n; i++)
		e->envp[i] = e->entry[i];
	e->envp[e->n] = NULL;
}
