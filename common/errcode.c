/* SPDX-License-Identifier: ISC */
#include "errcode.h"

#include <stdbool.h>
#include <string.h>

#include "outcome.h"
#include "proto.h"

/*
 * The codes of a run that ended badly are the outcomes' names, their exit
 * statuses and descriptions the outcome table's (outcome.h): one row each
 * there. Here only sbx's own failures, all of outcome sandbox_error.
 */
#define SBX_ERRCODE_OF_OUTCOME(sym, name, status, limit, color, doc) {name, name, status, doc},
static const struct sbx_errcode of_outcomes[] = {SBX_OUTCOMES(SBX_ERRCODE_OF_OUTCOME)};
#undef SBX_ERRCODE_OF_OUTCOME

static const struct sbx_errcode own[] = {
	{"usage", "sandbox_error", SBX_EXIT_USAGE, "a bad option, value or argument"},
	{"unknown_language", "sandbox_error", SBX_EXIT_USAGE, "no such language in sbx.conf"},
	{"unknown_policy", "sandbox_error", SBX_EXIT_USAGE, "no such policy"},
	{"input_unreadable", "sandbox_error", SBX_EXIT_USAGE, "an --input file cannot be read as the caller"},
	{"input_too_large", "sandbox_error", SBX_EXIT_REFUSED, "the inputs and standard input exceed the policy's input_size"},
	{"artifacts_unwritable", "sandbox_error", SBX_EXIT_USAGE, "the --artifacts directory cannot be written"},
	{"not_in_group", "sandbox_error", SBX_EXIT_REFUSED, "the caller is not in group sbx"},
	{"policy_denied", "sandbox_error", SBX_EXIT_REFUSED, "the policy does not allow this caller or request"},
	{"limit_above_policy", "sandbox_error", SBX_EXIT_REFUSED, "a requested limit is above the policy's"},
	{"setup", "sandbox_error", SBX_EXIT_FAILURE, "the sandbox could not be set up or the run not finished"},
	{"audit_unavailable", "sandbox_error", SBX_EXIT_AUDIT, "the audit log could not record the run"},
	{"session_ended", "sandbox_error", SBX_EXIT_NO_SESSION, "the live session of --session has ended"},
};

/* An outcome is a code when a run can end with it and it is not ok or
 * sandbox_error (whose codes are sbx's own, above). */
static bool outcome_is_code(const struct sbx_errcode *e)
{
	const struct sbx_outcome_def *o = sbx_outcome_by_name(e->code);

	return o != NULL && sbx_outcome_of_run(o) && o->id != SBX_OUTCOME_OK && o->id != SBX_OUTCOME_SANDBOX_ERROR;
}

size_t sbx_errcode_count(void)
{
	size_t n = sizeof(own) / sizeof(own[0]);

	for (size_t i = 0; i < sizeof(of_outcomes) / sizeof(of_outcomes[0]); i++)
		n += outcome_is_code(&of_outcomes[i]);
	return n;
}

const struct sbx_errcode *sbx_errcode_at(size_t i)
{
	for (size_t k = 0; k < sizeof(of_outcomes) / sizeof(of_outcomes[0]); k++)
		if (outcome_is_code(&of_outcomes[k]) && i-- == 0)
			return &of_outcomes[k];
	return i < sizeof(own) / sizeof(own[0]) ? &own[i] : NULL;
}


const struct sbx_errcode *sbx_errcode_find(const char *code)
{
	const struct sbx_errcode *e;

	for (size_t i = 0; code != NULL && (e = sbx_errcode_at(i)) != NULL; i++)
		if (strcmp(e->code, code) == 0)
			return e;
	return NULL;
}

const struct sbx_errcode *sbx_errcode_of_outcome(const char *outcome)
{
	const struct sbx_errcode *e = sbx_errcode_find(outcome);

	return e != NULL && strcmp(e->outcome, outcome) == 0 ? e : NULL;
}
