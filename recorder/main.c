/* SPDX-License-Identifier: ISC */
/*
 * sbx-recorder: exec'd by sbx-helper's supervisor, never by a user (it is
 * installed 0755 root-owned in LIBEXECDIR/sbx; run by hand it finds no
 * control socket and exits 125). It reads the one run description the
 * supervisor sends (common/rundesc.h), checked for magic, version and
 * size, and records the run (recorder.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "proto.h"
#include "recorder.h"
#include "testhook.h"

int main(void)
{
	static struct sbx_run_desc d;
	char err[256];
	ssize_t n;

	/* execve(2) of a readable binary made us dumpable again: no other _sbx
	 * process (another run's recorder) may attach to this one */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	TEST_HOOK_INHERIT();
	/* inherited as ignored from the supervisor; said again here */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	/* a scheduler's cancel or a shutdown signals every process: the
	 * supervisor ends the run and this process ends after END (SIGKILL
	 * still works); blocked already, from the supervisor */
	signal(SIGTERM, SIG_IGN);
	openlog("sbx", LOG_PID, LOG_AUTHPRIV);
	if (fcntl(SBX_REC_FD_CONTROL, F_GETFD) < 0) {
		fprintf(stderr, "sbx-recorder: started by sbx-helper only\n");
		return SBX_EXIT_FAILURE;
	}
	TEST_HOOK("recorder-dropped");
	do
		n = recv(SBX_REC_FD_CONTROL, &d, sizeof(d), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0 || sbx_run_desc_check(&d, (size_t)n, false, err, sizeof(err)) < 0) {
		syslog(LOG_ERR, "recorder: run description: %s", n < 0 ? "not received" : err);
		return SBX_EXIT_FAILURE;
	}
	recorder_run(&d);
}
