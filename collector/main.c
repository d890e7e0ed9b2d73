/* SPDX-License-Identifier: ISC */
/*
 * sbx-collector: exec'd by sbx-helper's supervisor once every sandboxed
 * process of a run is dead, as the caller, with the descriptors and argv
 * of common/proto.h "collector"; never by a user (run by hand it has no
 * artifact channel and exits 2). It copies /out and, for a --workspace
 * run, the changeset, and ends the artifact list with SBX_COLLECT_DONE.
 *
 * Exit status: 0 the list is complete, 1 the recorder could not be told
 * it is (it then reports the list incomplete), 2 started wrongly (argv,
 * descriptors, or as root).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bsd/string.h>

#include "collector.h"
#include "fdio.h"
#include "testhook.h"

/* A decimal count the supervisor wrote: digits only, no sign, no overflow. */
static int count(const char *s, uint64_t *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0' ? 0 : -1;
}

/* fd is open: the supervisor passed it (proto.h: a closed one has nothing to collect) */
static int passed(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 ? fd : -1;
}

int main(int argc, char **argv)
{
	struct collect c;
	int type;
	socklen_t tlen = sizeof(type);

	/* the caller cannot read our file, so exec made us not dumpable
	 * (proto.h); said again for a build installed with the wrong mode */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	TEST_HOOK_INHERIT();
	TEST_HOOK("collector-dropped");
	if (getuid() == 0 || geteuid() == 0 || argc != 5 || count(argv[1], &c.artifacts) < 0 ||
	    count(argv[2], &c.out_bytes) < 0 || count(argv[3], &c.workspace_bytes) < 0 ||
	    strlcpy(c.run_id, argv[4], sizeof(c.run_id)) >= sizeof(c.run_id) ||
	    getsockopt(SBX_COL_FD_ART, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 || type != SOCK_SEQPACKET) {
		fputs("sbx-collector: started by sbx-helper only (common/proto.h)\n", stderr);
		return 2;
	}
	c.art = SBX_COL_FD_ART;
	c.outdir = passed(SBX_COL_FD_OUT);
	c.upper = passed(SBX_COL_FD_UPPER);
	c.lower = passed(SBX_COL_FD_LOWER);
	c.csdir = passed(SBX_COL_FD_CHANGESET);
	if (c.upper >= 0)
		changeset_collect(&c);
	/* a list the recorder was not told all of ends without the last word */
	if (c.outdir >= 0 && artifacts_collect(&c) < 0)
		return 1;
	/* the last word: without it the recorder reports the list incomplete */
	return sbx_send_fd(c.art, &(char){SBX_COLLECT_DONE}, 1, -1, 0) < 0 ? 1 : 0;
}
