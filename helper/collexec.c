/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's child that becomes sbx-collector (common/proto.h
 * "collector"): the caller's uid and gids, no capabilities, no_new_privs,
 * exactly the descriptors of enum sbx_collector_fd, and an exec of the
 * binary the supervisor opened as root (open_trusted). Nothing of the
 * walk of /out or of the workspace runs in this image any more: what the
 * payload left is parsed by a program root never ran.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper.h"
#include "testhook.h"

#define COL_FD_PARK 64
#define COL_FD_EXE (SBX_COL_FD_CHANGESET + 1)

_Noreturn void collector_exec(const struct run *r, int exe, int outdir, int upper, int art)
{
	char a[24], o[24], w[24], id[SBX_ID_LEN + 1], err[HELPER_ERR_LEN];
	char *argv[] = {"sbx-collector", a, o, w, id, NULL}, *const envp[] = {NULL};
	const int src[] = {art, outdir, upper, r->ws_fd, r->cs_fd, exe};
	const int dst[] = {SBX_COL_FD_ART, SBX_COL_FD_OUT, SBX_COL_FD_UPPER, SBX_COL_FD_LOWER,
			   SBX_COL_FD_CHANGESET, COL_FD_EXE};
	int parked[sizeof(src) / sizeof(src[0])];
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (exe < 0)
		_exit(SBX_EXIT_FAILURE);
	snprintf(a, sizeof(a), "%" PRIu64, r->limits.artifacts);
	snprintf(o, sizeof(o), "%" PRIu64, r->limits.out_bytes);
	snprintf(w, sizeof(w), "%" PRIu64, r->limits.workspace_bytes);
	snprintf(id, sizeof(id), "%s", r->run_id);
	/* above every target first, so that no dup2 below closes a source */
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		if ((parked[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, COL_FD_PARK)) < 0 &&
		    src[i] >= 0)
			_exit(SBX_EXIT_FAILURE);
	if (devnull < 0 || (devnull = fcntl(devnull, F_DUPFD_CLOEXEC, COL_FD_PARK)) < 0)
		_exit(SBX_EXIT_FAILURE);
	close_range(0, COL_FD_PARK - 1, 0);
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(SBX_EXIT_FAILURE);
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		if (parked[i] >= 0 && dup3(parked[i], dst[i], dst[i] == COL_FD_EXE ? O_CLOEXEC : 0) < 0)
			_exit(SBX_EXIT_FAILURE);
#ifdef SBX_TEST_HOOKS
	close_range(COL_FD_EXE + 1, SBX_HOOK_FD_IN - 1, 0);
	close_range(SBX_HOOK_FD_OUT + 1, ~0U, 0);
	fcntl(SBX_HOOK_FD_IN, F_SETFD, 0);
	fcntl(SBX_HOOK_FD_OUT, F_SETFD, 0);
#else
	close_range(COL_FD_EXE + 1, ~0U, 0);
#endif
	if (drop_to(r->uid, r->gid, err, sizeof(err)) < 0)
		_exit(SBX_EXIT_FAILURE);
	syscall(SYS_execveat, COL_FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	_exit(SBX_EXIT_FAILURE);
}
