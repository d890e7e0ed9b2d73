/* SPDX-License-Identifier: ISC */
/* The outcome table (outcome.h). */
#include "outcome.h"

#include <string.h>
#include <bsd/string.h>

const struct sbx_outcome_def sbx_outcome_defs[SBX_OUTCOME_N] = {
#define SBX_OUTCOME_ROW(sym, name, status, limit, color, doc) \
	[SBX_OUTCOME_##sym] = {name, color, doc, SBX_OUTCOME_##sym, status, limit},
	SBX_OUTCOMES(SBX_OUTCOME_ROW)
#undef SBX_OUTCOME_ROW
};

const struct sbx_outcome_def *sbx_outcome_by_name(const char *name)
{
	for (size_t i = 0; i < SBX_OUTCOME_N; i++)
		if (strcmp(name, sbx_outcome_defs[i].name) == 0)
			return &sbx_outcome_defs[i];
	return NULL;
}

bool sbx_outcome_of_run(const struct sbx_outcome_def *o)
{
	return o->status != SBX_STATUS_NONE;
}

const char *sbx_outcome_names(bool with_audit_only)
{
	/* every name and a space: the longest list there is */
#define SBX_OUTCOME_NAME(sym, name, status, limit, color, doc) name " "
	static char all[sizeof(SBX_OUTCOMES(SBX_OUTCOME_NAME))], runs[sizeof(all)];
#undef SBX_OUTCOME_NAME
	char *buf = with_audit_only ? all : runs;

	if (buf[0] == '\0')
		for (size_t i = 0; i < SBX_OUTCOME_N; i++) {
			if (!with_audit_only && !sbx_outcome_of_run(&sbx_outcome_defs[i]))
				continue;
			if (buf[0] != '\0')
				strlcat(buf, " ", sizeof(all));
			strlcat(buf, sbx_outcome_defs[i].name, sizeof(all));
		}
	return buf;
}
