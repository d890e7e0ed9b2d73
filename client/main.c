/* SPDX-License-Identifier: ISC */
/* sbx: the unprivileged front end of the sandbox. See cli.c for the
 * command line and ../shared/DESIGN.md for the whole system. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "workspace.h"
#include "doctor.h"
#include "fail.h"
#include "proto.h"
#include "loop.h"
#include "mcp.h"
#include "mcp_store.h"
#include "units.h"
#include "run.h"
#include "dryrun.h"
#include "inputs.h"
#include "policies.h"
#include "policy.h"
#include "session.h"
#include "live.h"
#include "stack.h"

/* With 0, 1 or 2 closed, the next open() would take its place and the
 * helper would write its output into, say, the result socket. */
static void ensure_std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			_exit(SBX_EXIT_FAILURE);
	}
}

/* `sbx mcp [--keep-artifacts SIZE] [--max-text SIZE] [--workspace DIR]
 * [--help]`: the artifact store's size in bytes (returned), the bound of
 * each text block (mcp_set_max_text) and the workspace of execute_code's
 * runs (mcp_set_workspace); --help prints the usage and exits 0. */
static uint64_t mcp_options(int argc, char **argv)
{
	static const char *const opts[] = {"--keep-artifacts", "--max-text", "--workspace"};
	static const char *const examples[] = {"256M, 0", "32K, 1M", "~/project"};
	uint64_t keep = MCP_STORE_DEFAULT, text;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		size_t k, n = 0;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_usage_mcp(stdout);
			exit(0);
		}
		if (strcmp(argv[i], "--version") == 0)
			cli_version();
		for (k = 0; k < 3; k++) {
			n = strlen(opts[k]);
			if (strncmp(argv[i], opts[k], n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
				break;
		}
		if (k == 3)
			cli_die_usage("mcp", "unexpected argument '%s' (see sbx mcp --help)", argv[i]);
		if (argv[i][n] == '=')
			v = argv[i] + n + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else
			cli_die_usage(opts[k], "needs a %s (examples: %s)", k == 2 ? "directory" : "size", examples[k]);
		if (k == 0 && sbx_parse_size(v, &keep) < 0)
			cli_die_usage("mcp --keep-artifacts", "'%s' is not a size (examples: 256M, 1G, 0)", v);
		if (k == 1 && (sbx_parse_size(v, &text) < 0 || text < 256 || text > (64u << 20)))
			cli_die_usage("mcp --max-text", "'%s' is not a size from 256 bytes to 64M (examples: 32K, 1M)", v);
		if (k == 1)
			mcp_set_max_text((size_t)text);
		if (k == 2)
			mcp_set_workspace(v); /* dies with one line when it is not a directory */
	}
	return keep;
}

int main(int argc, char **argv)
{
	struct run_opts o;

	ensure_std_fds();
	cli_stack_floor();
	if (argc < 2) {
		cli_usage(stderr);
		return SBX_EXIT_FAILURE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		cli_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		cli_version();
	if (strcmp(argv[1], "mcp") == 0) {
		return mcp_serve(mcp_options(argc - 1, argv + 1));
	}
	if (strcmp(argv[1], "policies") == 0)
		return policies_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "session") == 0)
		return session_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return doctor_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "changes") == 0)
		return changes_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "apply") == 0)
		return apply_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "run") != 0)
		cli_die_usage(argv[1], "unknown command (see sbx --help)");
	if (cli_parse_run(argc - 1, argv + 1, &o) == 1)
		return 0;
	if (o.lang != NULL)
		policies_check_language(o.lang);
	inputs_open(&o);
	if (!o.dry_run) {
		struct sbx_limits l;
		char pol[SBX_NAME_MAX + 1];

		policy_limits(o.policy, &l, pol, sizeof(pol));
		stdin_open(&o, l.input_bytes, pol);
	}
	if (o.work_session && !o.dry_run) {
		bool live;
		int rc = live_run(&o, &live);
		if (live)
			return rc;
	}
	if (o.work_session) {
		o.work_fd = session_open(o.work_session);
		/* recorded as the run's session; the retry loop uses its own id */
		o.session = o.work_session;
	}
	if (o.workspace && !o.dry_run)
		ws_open(&o);
	if (o.dry_run)
		return run_dry(&o);
	if (o.fix)
		return run_fix_loop(&o);
	return run_code(&o);
}
