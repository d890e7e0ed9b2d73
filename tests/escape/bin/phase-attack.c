/* SPDX-License-Identifier: ISC */
/*
 * phase-attack HELPER: run the test-only sbx-helper-hooked (see
 * helper/testhook.h) as its caller and, at each pause point, attack every
 * process of the helper's tree that the caller did not write itself: the
 * supervisor and its direct children (recorder, sandbox init, collector).
 * The payload, the caller's own code, is not a target.
 *
 * Attacks, each expected to be refused: PTRACE_ATTACH, PTRACE_SEIZE,
 * process_vm_readv, open /proc/PID/mem (read and write), pidfd_getfd of
 * fds 0-9, open /proc/PID/{environ,ns/user,fd,root,cwd,exe}.
 *
 * Output, one line each:
 *   PHASE name pid=HOSTPID              a pause point was reached
 *   DENIED|ALLOWED phase target=PID role=ROLE what=ATTACK errno=NAME
 *   STATUS phase role=ROLE pid=PID KEY VALUE   from /proc/PID/status
 *   EXIT n, ID run-id
 * Exit status: 0 if every attack was refused, 1 if one was not, 2 on a
 * usage or set-up error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int allowed;
static pid_t helper;

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

static void report(const char *phase, pid_t t, const char *role, const char *what, int ok, int e)
{
	printf("%s %s target=%d role=%s what=%s errno=%s\n", ok ? "ALLOWED" : "DENIED", phase, (int)t, role,
	       what, ok ? "-" : ename(e));
	if (ok)
		allowed++;
}

/* Field "Key:" of /proc/PID/status, tabs turned into spaces; "" if none. */
static void status_field(pid_t pid, const char *key, char *out, size_t outlen)
{
	char path[64], line[512];
	size_t k = strlen(key);
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			char *v = line + k + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = '\0';
			for (char *p = v; *p; p++)
				if (*p == '\t')
					*p = ' ';
			snprintf(out, outlen, "%s", v);
			break;
		}
	fclose(f);
}

static pid_t ppid_of(pid_t pid)
{
	char v[64];
	status_field(pid, "PPid", v, sizeof(v));
	return v[0] ? (pid_t)atoi(v) : -1;
}

static void attack(const char *phase, pid_t t, const char *role)
{
	static const char *const files[] = {"environ", "ns/user", "fd", "root/", "cwd/", "exe"};
	char path[64], buf[16] = ""; /* process_vm_readv's target */
	struct iovec l = {.iov_base = buf, .iov_len = 8}, r = {.iov_base = (void *)&allowed, .iov_len = 8};
	int fd, st;

	errno = 0;
	if (ptrace(PTRACE_ATTACH, t, 0, 0) == 0) {
		report(phase, t, role, "PTRACE_ATTACH", 1, 0);
		waitpid(t, &st, __WALL);
		ptrace(PTRACE_DETACH, t, 0, 0);
	} else
		report(phase, t, role, "PTRACE_ATTACH", 0, errno);
	if (ptrace(PTRACE_SEIZE, t, 0, 0) == 0) {
		/* a seized tracee must be stopped before it can be let go */
		report(phase, t, role, "PTRACE_SEIZE", 1, 0);
		ptrace(PTRACE_INTERRUPT, t, 0, 0);
		waitpid(t, &st, __WALL);
		ptrace(PTRACE_DETACH, t, 0, 0);
	} else
		report(phase, t, role, "PTRACE_SEIZE", 0, errno);
	/* permission is checked before the address: EPERM, not EFAULT */
	errno = 0;
	if (process_vm_readv(t, &l, 1, &r, 1, 0) >= 0 || errno == EFAULT)
		report(phase, t, role, "process_vm_readv", 1, 0);
	else
		report(phase, t, role, "process_vm_readv", 0, errno);
	for (int w = 0; w < 2; w++) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)t);
		fd = open(path, (w ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		report(phase, t, role, w ? "open-mem-rw" : "open-mem-ro", fd >= 0, errno);
		if (fd >= 0)
			close(fd);
	}
	int pfd = (int)syscall(SYS_pidfd_open, t, 0);
	if (pfd >= 0) {
		int got = -1, e = EPERM;
		for (int i = 0; i < 10 && got < 0; i++) {
			got = (int)syscall(SYS_pidfd_getfd, pfd, i, 0);
			if (got < 0 && errno != EBADF)
				e = errno;
		}
		report(phase, t, role, "pidfd_getfd", got >= 0, e);
		if (got >= 0)
			close(got);
		close(pfd);
	} else
		report(phase, t, role, "pidfd_getfd", 0, errno);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char what[32];
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)t, files[i]);
		snprintf(what, sizeof(what), "open-%s", files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		/* a process gone in the meantime is not a success either */
		report(phase, t, role, what, fd >= 0, errno);
		if (fd >= 0)
			close(fd);
	}
}

static void show_status(const char *phase, pid_t t, const char *role)
{
	static const char *const keys[] = {"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff",
					   "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"};
	char v[256];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		status_field(t, keys[i], v, sizeof(v));
		printf("STATUS %s role=%s pid=%d %s %s\n", phase, role, (int)t, keys[i], v[0] ? v : "-");
	}
}

/* The role of a direct child of the supervisor. */
static const char *role_of(pid_t pid)
{
	char ns[64], uid[64];

	status_field(pid, "NSpid", ns, sizeof(ns));
	if (strchr(ns, ' '))
		return "sandbox-init";
	status_field(pid, "Uid", uid, sizeof(uid));
	return atoi(uid) == (int)getuid() ? "collector" : "recorder";
}

static void attack_all(const char *phase)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	attack(phase, helper, "supervisor");
	show_status(phase, helper, "supervisor");
	while (d && (de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t p = (pid_t)atoi(de->d_name);
		if (ppid_of(p) != helper)
			continue;
		const char *role = role_of(p);
		attack(phase, p, role);
		show_status(phase, p, role);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	static const char code[] = "echo payload-ran\n";
	int res[2], hin[2], hout[2], mfd, st, phases = 0;
	char line[256], *json = NULL;
	size_t jlen = 0;
	FILE *hooks;

	if (argc != 2) {
		fprintf(stderr, "usage: phase-attack HELPER\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	mfd = memfd_create("code", MFD_ALLOW_SEALING);
	if (mfd < 0 || write(mfd, code, sizeof(code) - 1) < 0 ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, res) < 0 || pipe(hin) < 0 || pipe(hout) < 0) {
		perror("phase-attack: set-up");
		return 2;
	}
	helper = fork();
	if (helper == 0) {
		if (dup2(hin[0], 0) < 0 || dup2(hout[1], 2) < 0 || dup2(mfd, 3) < 0 || dup2(res[1], 4) < 0)
			_exit(2);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 1);
		closefrom(5);
		execl(argv[1], argv[1], "run", "--lang", "sh", "--code-fd", "3", "--result-fd", "4", (char *)NULL);
		_exit(127);
	}
	close(hin[0]);
	close(hout[1]);
	close(res[1]);
	close(mfd);
	signal(SIGPIPE, SIG_IGN);
	hooks = fdopen(hout[0], "r");
	while (fgets(line, sizeof(line), hooks)) {
		char phase[64];
		int pid;

		if (sscanf(line, "sbx-test-hook: %63s %d", phase, &pid) != 2) {
			printf("HELPER %s", line);
			continue;
		}
		phases++;
		printf("PHASE %s pid=%d\n", phase, pid);
		attack_all(phase);
		(void)!write(hin[1], "c", 1);
	}
	/* the result socket: frames; the result JSON is the last one's payload */
	for (;;) {
		char buf[65536];
		ssize_t n = read(res[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		char *grown = realloc(json, jlen + (size_t)n + 1);
		if (grown == NULL)
			break;
		json = grown;
		memcpy(json + jlen, buf, (size_t)n);
		jlen += (size_t)n;
		json[jlen] = '\0';
	}
	waitpid(helper, &st, 0);
	printf("EXIT %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (json) {
		char *id = memmem(json, jlen, "\"id\":\"", 6);
		if (id)
			printf("ID %.32s\n", id + 6);
	}
	printf("PHASES %d ALLOWED %d\n", phases, allowed);
	close(hin[1]);
	return allowed ? 1 : 0;
}
