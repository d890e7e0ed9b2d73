/* SPDX-License-Identifier: ISC */
#include "hint.h"
#include "stack.h"
#include "unconst.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Package lists are tens of MB; larger files are not read. */
#define LIST_MAX (512ULL << 20)

static bool file_has(int dirfd, const char *file, const char *needle, size_t n)
{
	struct stat st;
	bool found = false;
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < LIST_MAX) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			/* a stanza starts a line; the list's first one starts the file */
			found = memmem(m, (size_t)st.st_size, needle, n) != NULL ||
				((size_t)st.st_size >= n - 1 && memcmp(m, needle + 1, n - 1) == 0);
			munmap(m, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}

/* A compressed list (Acquire::GzipIndexes, lz4 on some images), read
 * through apt's own decompressor: apt-helper cat-file (apt-helper(1)),
 * streamed, the needle searched across read boundaries. */
static bool compressed_has(int dirfd, const char *file, const char *needle, size_t n)
{
	static const char helper[] = "/usr/lib/apt/apt-helper";
	char path[PATH_MAX], buf[65536 + 160];
	size_t keep = 1; /* a virtual newline before the first stanza */
	bool found = false;
	int p[2], null;
	pid_t pid;

	(void)dirfd;
	if (access(helper, X_OK) < 0 || pipe2(p, O_CLOEXEC) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/%s", APT_LISTS_DIR, file);
	pid = fork();
	if (pid == 0) {
		char *const argv[] = {sbx_unconst(helper), (char *)"cat-file", path, NULL};
		char *const envp[] = {(char *)"PATH=/usr/bin:/bin", (char *)"LC_ALL=C", NULL};
		null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		cli_stack_restore();
		execve(helper, argv, envp);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return false;
	}
	buf[0] = '\n';
	for (;;) {
		ssize_t r = read(p[0], buf + keep, sizeof(buf) - keep);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		keep += (size_t)r;
		if (memmem(buf, keep, needle, n) != NULL) {
			found = true;
			break;
		}
		/* the last n - 1 bytes may start a match */
		if (keep >= n) {
			memmove(buf, buf + keep - (n - 1), n - 1);
			keep = n - 1;
		}
	}
	close(p[0]);
	if (found)
		kill(pid, SIGTERM);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return found;
}

bool hint_debian_has(const char *dir, const char *name)
{
	char needle[160];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);
	int n = snprintf(needle, sizeof(needle), "\nPackage: %s\n", name);

	if (d == NULL || n < 0 || (size_t)n >= sizeof(needle)) {
		if (d != NULL)
			closedir(d);
		return false;
	}
	while (!found && (de = readdir(d)) != NULL) {
		const char *p = strstr(de->d_name, "_Packages");
		if (p == NULL || p == de->d_name)
			continue;
		if (p[9] == '\0')
			found = file_has(dirfd(d), de->d_name, needle, (size_t)n);
		else if (p[9] == '.' && strcmp(dir, APT_LISTS_DIR) == 0)
			found = compressed_has(dirfd(d), de->d_name, needle, (size_t)n);
	}
	closedir(d);
	return found;
}

bool hint_missing_module(const char *module, const char *image, char *buf, size_t len)
{
	char top[64], pkg[80];
	size_t i;

	for (i = 0; module[i] != '\0' && module[i] != '.' && i + 1 < sizeof(top); i++) {
		if (!(isalnum((unsigned char)module[i]) || module[i] == '_'))
			return false;
		top[i] = module[i];
	}
	if (i == 0 || (module[i] != '\0' && module[i] != '.'))
		return false;
	top[i] = '\0';
	/* Debian's python3-NAME: lower case, '_' as '-' (Debian Python Policy) */
	snprintf(pkg, sizeof(pkg), "python3-%s", top);
	for (char *p = pkg; *p; p++) {
		if (*p == '_')
			*p = '-';
		else if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	}
	bool known = hint_debian_has(APT_LISTS_DIR, pkg);

	/* an image is built from the host's apt sources (sbx-image(8)), so the
	 * host's lists say whether a rebuild can add the package */
	if (image != NULL && image[0] != '\0' && strcmp(image, "host") != 0) {
		if (known)
			snprintf(buf, len, "the module '%s' is not in the image '%s' this policy runs with, and packages "
				 "cannot be installed at run time (no network); an administrator can rebuild the image "
				 "with the Debian package %s added to its --packages (sbx-image show %s lists them)",
				 top, image, pkg, image);
		else
			snprintf(buf, len, "the module '%s' is not in the image '%s' this policy runs with, and packages "
				 "cannot be installed at run time (no network); no package %s is known to this host "
				 "(sbx-image show %s lists what the image has)", top, image, pkg, image);
		return true;
	}
	if (known)
		snprintf(buf, len, "the module '%s' is not installed in the sandbox, and packages cannot be installed "
			 "at run time (no network); an administrator can add it with the Debian package %s "
			 "(apt install %s)", top, pkg, pkg);
	else
		snprintf(buf, len, "the module '%s' is not installed in the sandbox, and packages cannot be installed "
			 "at run time (no network); no package %s is known to this host: an administrator can "
			 "install it for the host's Python, or use what is installed (sbx run -c 'help(\"modules\")')",
			 top, pkg);
	return true;
}
