/* SPDX-License-Identifier: ISC */
/* Fork until the pids limit stops us; keep trying. */
#include <unistd.h>
int main(void)
{
	for (;;)
		fork();
}
