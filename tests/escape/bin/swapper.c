/* SPDX-License-Identifier: ISC */
/*
 * swapper A B MS: exchange the directory entries A and B atomically
 * (renameat2 RENAME_EXCHANGE) as fast as possible for MS milliseconds,
 * then print how many exchanges succeeded. The escape tests use it to race
 * a directory against a symbolic link under a path sbx is using.
 * Exit status 0, or 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long long end, n = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: swapper A B MILLISECONDS\n");
		return 2;
	}
	end = now_ms() + atoll(argv[3]);
	while (now_ms() < end)
		for (int i = 0; i < 64; i++)
			if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
				n++;
	printf("%lld\n", n);
	return 0;
}
