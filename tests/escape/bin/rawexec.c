/* SPDX-License-Identifier: ISC */
/*
 * rawexec: exec a program with an argument vector and environment that a
 * shell or Python cannot build: argc 0, environment entries without '=',
 * a near-ARG_MAX environment, fds 0-2 closed. Used by the escape tests to
 * attack sbx-helper's entry (tests/escape/07-argv.t, 08-env.t).
 *
 *   rawexec [-0] [-c] [-E] [-B BYTES] [-e ENTRY]... -- PATH [ARG0 ARGS...]
 *     -0        exec with argc 0 (argv = {NULL})
 *     -c        close fds 0, 1 and 2 just before execve(2)
 *     -E        pass this process's environment on (before any -e)
 *     -B BYTES  add about BYTES of environment in 64 KiB entries
 *     -e ENTRY  add ENTRY to the environment verbatim ('=' optional)
 *     -r RES:SOFT:HARD  set an rlimit just before execve(2) (RES one of
 *               NOFILE FSIZE CPU AS STACK CORE; "inf" for RLIM_INFINITY,
 *               "hard" for the hard limit this process already has:
 *               CI machines may start with a finite hard limit that an
 *               unprivileged caller cannot raise)
 * Exit status 127 with a message if execve(2) fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

static rlim_t lim(const char *s, rlim_t hard)
{
	if (strcmp(s, "hard") == 0)
		return hard;
	return strncmp(s, "inf", 3) == 0 ? RLIM_INFINITY : strtoull(s, NULL, 10);
}

static int set_limit(char *spec)
{
	static const struct { const char *n; int r; } t[] = {
		{"NOFILE", RLIMIT_NOFILE}, {"FSIZE", RLIMIT_FSIZE}, {"CPU", RLIMIT_CPU},
		{"AS", RLIMIT_AS}, {"STACK", RLIMIT_STACK}, {"CORE", RLIMIT_CORE},
	};
	char *soft = strchr(spec, ':'), *hard = soft ? strchr(soft + 1, ':') : NULL;

	if (hard == NULL)
		return -1;
	*soft++ = '\0';
	hard++;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(spec, t[i].n) == 0) {
			struct rlimit now;
			if (getrlimit(t[i].r, &now) < 0)
				return -1;
			struct rlimit rl = {lim(soft, now.rlim_max), lim(hard, now.rlim_max)};
			return setrlimit(t[i].r, &rl);
		}
	return -1;
}

int main(int argc, char **argv)
{
	static char *limits[16];
	size_t nl = 0;
	static char *envp[8192];
	size_t ne = 0;
	int argc0 = 0, closeio = 0, opt;

	while ((opt = getopt(argc, argv, "0cEB:e:r:")) != -1) {
		switch (opt) {
		case '0': argc0 = 1; break;
		case 'c': closeio = 1; break;
		case 'E':
			for (char **e = environ; *e && ne < 4096; e++)
				envp[ne++] = *e;
			break;
		case 'B': {
			long left = atol(optarg);
			for (int i = 0; left > 0 && ne < 8000; i++) {
				size_t n = left > 65536 ? 65536 : (size_t)left;
				char *s = malloc(n + 16);
				size_t h = (size_t)snprintf(s, 16, "BIG%d=", i);
				memset(s + h, 'A', n);
				s[h + n] = '\0';
				envp[ne++] = s;
				left -= (long)(n + h + 1);
			}
			break;
		}
		case 'r':
			if (nl < 16)
				limits[nl++] = optarg;
			break;
		case 'e':
			if (ne < 8000)
				envp[ne++] = optarg;
			break;
		default:
			fprintf(stderr, "rawexec: bad option\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "rawexec: no program\n");
		return 2;
	}
	envp[ne] = NULL;
	char *none[] = {NULL};
	char **av = argc0 ? none : argv + optind + 1;
	if (!argc0 && av[0] == NULL) {
		static char *self[2];
		self[0] = argv[optind];
		av = self;
	}
	for (size_t i = 0; i < nl; i++)
		if (set_limit(limits[i]) < 0) {
			fprintf(stderr, "rawexec: -r %s: cannot set\n", limits[i]);
			return 2;
		}
	if (closeio) {
		close(0);
		close(1);
		close(2);
	}
	execve(argv[optind], av, envp);
	if (!closeio)
		fprintf(stderr, "rawexec: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
