/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints leave the host (ckptwitness.h): besides syslog, each new
 * checkpoint note goes to sbx.conf's audit_witness_dir and
 * audit_witness_command. Runs in the recorder as _sbx after the END (or
 * REFUSED) record and its checkpoint are committed: a witness that fails
 * costs only its own copy (a syslog warning), never the run's record.
 */
#include "ckptwitness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>
#include <bsd/string.h>
#include <sodium.h>

/* How long the command may take before it is killed (it delays the end
 * of every run by as much). */
#define WITNESS_COMMAND_MS 5000
#define WITNESS_MAX_ARGS 16

/* The tree size on the note's second line (c2sp.org/tlog-checkpoint). */
static unsigned long long note_size(const char *note)
{
	const char *nl = strchr(note, '\n');

	return nl != NULL ? strtoull(nl + 1, NULL, 10) : 0;
}

int witness_write_dir(const char *dir, const char *note, char *err, size_t errlen)
{
	unsigned char h[32];
	char hex[65], name[96];
	size_t len = strlen(note);
	int dfd, fd;

	/* SIZE-DIGEST.note: a second note for the same size (a fork) gets a
	 * file of its own next to the first, which it can never replace */
	crypto_hash_sha256(h, (const unsigned char *)note, len);
	sodium_bin2hex(hex, sizeof(hex), h, 32);
	snprintf(name, sizeof(name), "%llu-%.16s.note", note_size(note), hex);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "audit_witness_dir %s: %s", dir, strerror(errno));
		return -1;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0 && errno == EEXIST) {
		close(dfd);
		return 0; /* this very note is there already */
	}
	if (fd < 0 || write(fd, note, len) != (ssize_t)len || fsync(fd) < 0) {
		snprintf(err, errlen, "audit_witness_dir %s/%s: %s", dir, name, strerror(errno));
		if (fd >= 0) {
			unlinkat(dfd, name, 0); /* no half note */
			close(fd);
		}
		close(dfd);
		return -1;
	}
	close(fd);
	fsync(dfd);
	close(dfd);
	return 0;
}

/* The command runs with the recorder's account (_sbx): a program the
 * caller could replace would run their code as _sbx, so it must be
 * root's, like the configuration that names it. */
static int trusted_program(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "audit_witness_command %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & 0111)) {
		snprintf(err, errlen, "audit_witness_command %s: must be an executable file owned by root, not "
			 "writable by group or others (owner uid %u, mode %04o)", path, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

int witness_run_command(const char *command, const char *note, char *err, size_t errlen)
{
	char buf[SBX_WITNESS_CMD_LEN], *argv[WITNESS_MAX_ARGS + 1], *save = NULL, *w;
	static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	size_t n = 0, len = strlen(note);
	int in[2], pidfd, st = 0;
	struct pollfd p;
	pid_t pid;

	strlcpy(buf, command, sizeof(buf));
	for (w = strtok_r(buf, " \t", &save); w != NULL && n < WITNESS_MAX_ARGS; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	if (n == 0 || trusted_program(argv[0], err, errlen) < 0)
		return -1;
	/* a note is far below a pipe's capacity: written before the command
	 * reads, the write cannot block */
	if (pipe2(in, O_CLOEXEC) < 0 || (size_t)write(in[1], note, len) != len) {
		snprintf(err, errlen, "audit_witness_command: pipe: %s", strerror(errno));
		return -1;
	}
	close(in[1]);
	pid = fork();
	if (pid < 0) {
		close(in[0]);
		snprintf(err, errlen, "audit_witness_command: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (dup2(in[0], 0) < 0 || null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		closefrom(3);
		setsid();
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(in[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	p = (struct pollfd){.fd = pidfd, .events = POLLIN};
	if (pidfd < 0 || poll(&p, 1, WITNESS_COMMAND_MS) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (pidfd >= 0)
			close(pidfd);
		snprintf(err, errlen, "audit_witness_command %s: killed after %d ms", argv[0], WITNESS_COMMAND_MS);
		return -1;
	}
	close(pidfd);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "audit_witness_command %s: exit status %d", argv[0],
			 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return -1;
	}
	return 0;
}

void witness_deliver(const char *dir, const char *command, const char *run_id, const char *note)
{
	char err[512];

	if (note[0] == '\0')
		return;
	if (dir[0] != '\0' && witness_write_dir(dir, note, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint %llu not witnessed: %s", run_id, note_size(note), err);
	if (command[0] != '\0' && witness_run_command(command, note, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "run=%s checkpoint %llu not witnessed: %s", run_id, note_size(note), err);
}
