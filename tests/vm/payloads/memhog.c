/* SPDX-License-Identifier: ISC */
/* Touch memory 16 MiB at a time until the memory limit stops us. */
#include <stdlib.h>
#include <string.h>
int main(void)
{
	for (int i = 0; i < 256; i++) {
		char *p = malloc(16 << 20);
		if (p == NULL)
			return 1;
		memset(p, i, 16 << 20);
	}
	return 0;
}
