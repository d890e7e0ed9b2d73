/* SPDX-License-Identifier: ISC */
/*
 * The last steps of every child the helper turns into another program
 * (sbx-recorder as _sbx, sbx-signer as _sbxsign, sbx-collector as the
 * caller): the descriptors the program expects at their fixed numbers
 * (common/proto.h, signer/signwire.h), fds 0-2 on /dev/null, every other
 * descriptor closed (close_range(2)), the ids dropped for good (drop_to),
 * then execveat(2) of a file root opened and checked (open_trusted). One
 * copy, so the three programs cannot drift apart in what they inherit.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "helper.h"
#include "testhook.h"

/* above every fixed number, so that no dup3 onto a target closes a
 * descriptor still to be moved (the recorder's exe is the highest) */
#define DROPEXEC_PARK 64
_Static_assert(SBX_REC_FD_INPUT0 + SBX_MAX_INPUTS < DROPEXEC_PARK, "DROPEXEC_PARK below a recorder fd");

_Noreturn void exec_dropped(uid_t uid, gid_t gid, int exe, const int *src, size_t n, int first,
			    char *const argv[], bool keep_hooks)
{
	static char *const envp[] = {NULL};
	int parked[DROPEXEC_PARK], devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	const int last = first + (int)n; /* where exe goes, close-on-exec */
	char err[HELPER_ERR_LEN];

	if (first < 3 || last >= DROPEXEC_PARK || exe < 0 || devnull < 0 ||
	    (devnull = fcntl(devnull, F_DUPFD_CLOEXEC, DROPEXEC_PARK)) < 0)
		_exit(SBX_EXIT_FAILURE);
	for (size_t i = 0; i <= n; i++) {
		int fd = i < n ? src[i] : exe;
		/* a negative source leaves its number closed (no workspace: no upper) */
		if ((parked[i] = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, DROPEXEC_PARK)) < 0 && fd >= 0)
			_exit(SBX_EXIT_FAILURE);
	}
	close_range(0, DROPEXEC_PARK - 1, 0);
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(SBX_EXIT_FAILURE);
	for (size_t i = 0; i <= n; i++)
		if (parked[i] >= 0 && dup3(parked[i], first + (int)i, i == n ? O_CLOEXEC : 0) < 0)
			_exit(SBX_EXIT_FAILURE);
	unsigned top = ~0U;
#ifdef SBX_TEST_HOOKS
	if (keep_hooks) {
		close_range(SBX_HOOK_FD_OUT + 1, ~0U, 0);
		fcntl(SBX_HOOK_FD_IN, F_SETFD, 0);
		fcntl(SBX_HOOK_FD_OUT, F_SETFD, 0);
		top = SBX_HOOK_FD_IN - 1;
	}
#endif
	(void)keep_hooks;
	close_range((unsigned)last + 1, top, 0);
	if (drop_to(uid, gid, err, sizeof(err)) < 0)
		_exit(SBX_EXIT_FAILURE);
	syscall(SYS_execveat, last, "", argv, envp, AT_EMPTY_PATH);
	_exit(SBX_EXIT_FAILURE);
}
