/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's child that becomes sbx-collector (common/proto.h
 * "collector"): the caller's uid and gids, no capabilities, no_new_privs,
 * exactly the descriptors of enum sbx_collector_fd, and an exec of the
 * binary the supervisor opened as root (open_trusted). Nothing of the
 * walk of /out or of the workspace runs in this image any more: what the
 * payload left is parsed by a program root never ran.
 */
#include <inttypes.h>
#include <stdio.h>

#include "helper.h"

_Noreturn void collector_exec(const struct run *r, int exe, int outdir, int upper, int art)
{
	char a[24], o[24], w[24], id[SBX_ID_LEN + 1];
	char *argv[] = {"sbx-collector", a, o, w, id, NULL};
	/* in the order of enum sbx_collector_fd, from SBX_COL_FD_ART */
	const int src[] = {art, outdir, upper, r->ws_fd, r->cs_fd};
	_Static_assert(SBX_COL_FD_CHANGESET - SBX_COL_FD_ART + 1 == sizeof(src) / sizeof(src[0]),
		       "enum sbx_collector_fd and src[] disagree");

	snprintf(a, sizeof(a), "%" PRIu64, r->limits.artifacts);
	snprintf(o, sizeof(o), "%" PRIu64, r->limits.out_bytes);
	snprintf(w, sizeof(w), "%" PRIu64, r->limits.workspace_bytes);
	snprintf(id, sizeof(id), "%s", r->run_id);
	exec_dropped(r->uid, r->gid, exe, src, sizeof(src) / sizeof(src[0]), SBX_COL_FD_ART, argv, true);
}
