/* SPDX-License-Identifier: ISC */
#include "errcode.h"

#include <string.h>

#include "proto.h"

const struct sbx_errcode sbx_errcodes[] = {
	/* the program ran and ended badly: code = outcome */
	{"error", "error", SBX_EXIT_PROGRAM, "the program exited with a non-zero status"},
	{"timeout", "timeout", SBX_EXIT_TIMEOUT, "the wall-clock limit (wall_time) was reached"},
	{"cpu_limit", "cpu_limit", SBX_EXIT_TIMEOUT, "the CPU-time limit (cpu_time) was reached"},
	{"memory_limit", "memory_limit", 128 + 9, "the memory limit was reached (killed)"},
	{"pids_limit", "pids_limit", 128 + 9, "the process limit was reached (killed)"},
	{"output_limit", "output_limit", 128 + 9, "the output cap was reached (killed)"},
	{"file_size", "file_size", 128 + 25, "a file reached the policy's file_size (SIGXFSZ)"},
	{"signal", "signal", SBX_EXIT_SIGNAL, "killed by a signal that no limit sent"},
	/* sbx could not run it: outcome sandbox_error */
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
};
const size_t sbx_n_errcodes = sizeof(sbx_errcodes) / sizeof(sbx_errcodes[0]);

const struct sbx_errcode *sbx_errcode_find(const char *code)
{
	for (size_t i = 0; code != NULL && i < sbx_n_errcodes; i++)
		if (strcmp(sbx_errcodes[i].code, code) == 0)
			return &sbx_errcodes[i];
	return NULL;
}

const struct sbx_errcode *sbx_errcode_of_outcome(const char *outcome)
{
	const struct sbx_errcode *e = sbx_errcode_find(outcome);

	return e != NULL && strcmp(e->outcome, outcome) == 0 ? e : NULL;
}
