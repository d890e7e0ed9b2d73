/* SPDX-License-Identifier: ISC */
#include "treesize.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtree.h"

uint64_t tree_size_bytes(int top)
{
	/* an array of DIR pointers, one per level */
	DIR **st = calloc(RMTREE_MAX_DEPTH + 1, sizeof(DIR *)); /* NOLINT(bugprone-sizeof-expression) */
	uint64_t bytes = 0;
	struct dirent *e;
	struct stat sb;
	int depth = 0, fd;

	if (st == NULL)
		return 0;
	fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || (st[0] = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		free(st);
		return 0;
	}
	while (depth >= 0) {
		int dfd = dirfd(st[depth]);

		e = readdir(st[depth]);
		if (e == NULL) {
			closedir(st[depth--]);
			continue;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(sb.st_mode))
			bytes += (uint64_t)sb.st_size;
		else if (S_ISDIR(sb.st_mode) && depth < RMTREE_MAX_DEPTH) {
			fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			if (fd >= 0 && (st[depth + 1] = fdopendir(fd)) != NULL)
				depth++;
			else if (fd >= 0)
				close(fd);
		}
	}
	free(st);
	return bytes;
}
