/* SPDX-License-Identifier: ISC */
/* spin THREADS MS: THREADS threads each burn MS milliseconds of their own
 * CPU time, so the wall time shows the cpus quota (sched-bwc.rst). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static long ms;
static void *burn(void *arg)
{
	struct timespec t;
	(void)arg;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < ms);
	return NULL;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t th[64];
	ms = argc > 2 ? atol(argv[2]) : 1000;
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, burn, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
