/* SPDX-License-Identifier: ISC */
/*
 * --full: every record's Ed25519 signature. Verification dominates the
 * cost (about 50 us each), so the jobs are batched and split over one
 * thread per CPU this process may run on (sched_getaffinity(2): taskset
 * and cpusets count); the SQLite walk stays on the main thread.
 */
#include "verifyint.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

int vfy_sigs_init(struct vfy_sigs *s, const unsigned char *pk)
{
	s->pk = pk;
	s->n = 0;
	s->jobs = malloc(VFY_SIG_BATCH * sizeof(*s->jobs));
	return s->jobs ? 0 : -1;
}

void vfy_sigs_free(struct vfy_sigs *s)
{
	free(s->jobs);
	s->jobs = NULL;
}

#define MAX_SIG_THREADS 16

struct half {
	const unsigned char *pk;
	struct vfy_sig_job *jobs;
	size_t n;
};

static void *run(void *arg)
{
	struct half *h = arg;
	size_t i;

	for (i = 0; i < h->n; i++) {
		struct vfy_sig_job *j = &h->jobs[i];
		j->ok = sbx_audit_sig_ok(h->pk, j->origin, j->olen, (uint64_t)j->seq, j->chain, j->sig);
	}
	return NULL;
}

static int cpus(void)
{
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;

	return n < 1 ? 1 : n > MAX_SIG_THREADS ? MAX_SIG_THREADS : n;
}

void vfy_sigs_flush(struct vfy_sigs *s, struct sbx_verify_report *rep, int *oom)
{
	struct half part[MAX_SIG_THREADS];
	pthread_t t[MAX_SIG_THREADS];
	int started[MAX_SIG_THREADS] = {0};
	int k, n = cpus();
	size_t i, at = 0;

	if (s->n == 0)
		return;
	for (k = 0; k < n; k++) {
		size_t len = s->n / (size_t)n + ((size_t)k < s->n % (size_t)n);
		part[k] = (struct half){s->pk, s->jobs + at, len};
		at += len;
	}
	/* A failed thread start costs speed, not correctness. */
	for (k = 1; k < n; k++)
		started[k] = part[k].n > 0 && pthread_create(&t[k], NULL, run, &part[k]) == 0;
	run(&part[0]);
	for (k = 1; k < n; k++) {
		if (started[k])
			pthread_join(t[k], NULL);
		else
			run(&part[k]);
	}
	for (i = 0; i < s->n; i++)
		if (!s->jobs[i].ok)
			vfy_add(rep, oom, s->jobs[i].seq, SBX_FIND_BAD_SIGNATURE,
				"valid signature", "invalid",
				"signature does not verify with the public key "
				"(seq, origin, chain or signature altered, or another key)");
	s->n = 0;
}

void vfy_sigs_queue(struct vfy_sigs *s, int64_t seq, const unsigned char chain[32],
		    const unsigned char *sig, const char *origin, size_t olen,
		    struct sbx_verify_report *rep, int *oom)
{
	struct vfy_sig_job *j = &s->jobs[s->n++];

	j->seq = seq;
	memcpy(j->chain, chain, 32);
	memcpy(j->sig, sig, crypto_sign_BYTES);
	/* An over-long origin can never verify; keep a prefix and fail it. */
	j->olen = olen > SBX_ORIGIN_MAX ? SBX_ORIGIN_MAX + 1 : olen;
	memcpy(j->origin, origin, olen > SBX_ORIGIN_MAX ? SBX_ORIGIN_MAX : olen);
	if (s->n == VFY_SIG_BATCH)
		vfy_sigs_flush(s, rep, oom);
}
