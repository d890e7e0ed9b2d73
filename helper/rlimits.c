/* SPDX-License-Identifier: ISC */
/*
 * rlimits: the helper's own, and the payload's (getrlimit(2), setrlimit(2)).
 *
 * The caller's limits arrive through execve(2). The helper raises what it
 * needs for itself (raise_rlimits), and the payload gets, resource by
 * resource, the policy's value where the policy has one, never above the
 * caller's original hard limit, and the caller's original soft and hard
 * limits everywhere else (payload_rlimit). The helper's own processes
 * (recorder, signer, relay, collector) keep the raised limits: RLIMIT_NPROC
 * above all, which the kernel counts per uid, so under the shared system
 * uids every user's runs would count against this caller's limit. So nothing the helper raised
 * for its own work reaches the payload: an administrator's per-user hard
 * limits (limits.conf, systemd's LimitAS= and friends) hold inside the
 * sandbox as they do outside it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "helper.h"
#include "units.h"

static const struct {
	int res;
	const char *name;
	const char *ulimit;  /* the shell's option and unit, for the message */
	rlim_t scale;        /* bytes per ulimit unit, 0: not a size */
	rlim_t min_hard;     /* RLIM_INFINITY: must be unlimited */
} need[] = {
	/* RLIMIT_CPU would SIGKILL the supervisor midway (a cgroup left
	 * behind), RLIMIT_FSIZE cut an SQLite write, RLIMIT_RTTIME kill a
	 * blocked process: no finite hard value is safe */
	{RLIMIT_CPU, "RLIMIT_CPU", "-t unlimited", 0, RLIM_INFINITY},
	{RLIMIT_FSIZE, "RLIMIT_FSIZE", "-f unlimited", 0, RLIM_INFINITY},
	{RLIMIT_RTTIME, "RLIMIT_RTTIME", "-R unlimited", 0, RLIM_INFINITY},
	/* libsodium, SQLite and jansson need address space and stack */
	{RLIMIT_AS, "RLIMIT_AS", "-v", 1024, 1ULL << 30},
	{RLIMIT_DATA, "RLIMIT_DATA", "-d", 1024, 1ULL << 30},
	{RLIMIT_STACK, "RLIMIT_STACK", "-s", 1024, 8ULL << 20},
	/* the recorder holds every artifact and input at once */
	{RLIMIT_NOFILE, "RLIMIT_NOFILE", "-n", 0, HELPER_NOFILE},
	{RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", "-i", 0, 64},
	/* counted per uid, and _sbx, _sbxsign, _sbxnet are shared by every
	 * user's runs: unlimited where root may, else the caller's hard limit,
	 * at least HELPER_NPROC (helper.h) */
	{RLIMIT_NPROC, "RLIMIT_NPROC", "-u", 0, HELPER_NPROC},
};

static void describe(size_t i, rlim_t v, char *buf, size_t len)
{
	if (need[i].scale && v != RLIM_INFINITY)
		sbx_format_size((uint64_t)v, buf, len);
	else if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

int raise_rlimits(struct rlimit caller[RLIMIT_NLIMITS], char *err, size_t errlen)
{
	const struct rlimit zero = {0, 0};
	struct rlimit rl;

	for (int res = 0; res < RLIMIT_NLIMITS; res++)
		if (getrlimit(res, &caller[res]) < 0)
			caller[res] = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
	setrlimit(RLIMIT_CORE, &zero);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		rl = caller[need[i].res];
		/* root may raise a hard limit where it holds CAP_SYS_RESOURCE */
		struct rlimit want = {RLIM_INFINITY, RLIM_INFINITY};
		if (need[i].res == RLIMIT_NOFILE)
			want.rlim_cur = want.rlim_max = rl.rlim_max > HELPER_NOFILE ? rl.rlim_max : HELPER_NOFILE;
		if (setrlimit(need[i].res, &want) == 0) {
			if (need[i].res != RLIMIT_NOFILE)
				continue;
			rl = want;
		} else if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need[i].min_hard) {
			char have[32], must[32], hint[64];
			describe(i, rl.rlim_max, have, sizeof(have));
			describe(i, need[i].min_hard, must, sizeof(must));
			if (need[i].scale)
				snprintf(hint, sizeof(hint), "ulimit -H %s %llu, in KiB", need[i].ulimit,
					 (unsigned long long)(need[i].min_hard / need[i].scale));
			else if (need[i].min_hard == RLIM_INFINITY)
				snprintf(hint, sizeof(hint), "ulimit -H %s", need[i].ulimit);
			else
				snprintf(hint, sizeof(hint), "ulimit -H %s %llu", need[i].ulimit,
					 (unsigned long long)need[i].min_hard);
			snprintf(err, errlen, "%s hard limit %s set by the caller is too low for sbx (it needs %s): "
				 "raise it (%s) and retry", need[i].name, have, must, hint);
			return -1;
		}
		rl.rlim_cur = rl.rlim_max;
		if (need[i].res == RLIMIT_NOFILE && rl.rlim_cur > 4096)
			rl.rlim_cur = 4096;
		if (setrlimit(need[i].res, &rl) < 0) {
			snprintf(err, errlen, "%s: %s", need[i].name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static rlim_t lower(rlim_t a, rlim_t b)
{
	/* RLIM_INFINITY is the largest rlim_t */
	return a < b ? a : b;
}

void payload_rlimit(int res, const struct rlimit *caller, const struct sbx_limits *l, struct rlimit *out)
{
	struct rlimit pol;

	switch (res) {
	case RLIMIT_CORE: pol = (struct rlimit){0, 0}; break;
	case RLIMIT_FSIZE: pol = (struct rlimit){l->file_size_bytes, l->file_size_bytes}; break;
	case RLIMIT_NOFILE: pol = (struct rlimit){l->open_files, l->open_files}; break;
	/* a backstop: the cgroup's pids.max fires first */
	case RLIMIT_NPROC: pol = (struct rlimit){l->pids + 8, l->pids + 8}; break;
	/* the cgroup's CPU time ends the run; SIGXCPU a second before SIGKILL */
	case RLIMIT_CPU: pol = (struct rlimit){l->cpu_ms / 1000 + 1, l->cpu_ms / 1000 + 2}; break;
	default:
		*out = *caller;
		/* a soft stack too small for an interpreter to start (a 64 KiB one
		 * crashes Python) is the caller's to raise up to its hard limit
		 * anyway: the payload gets 8 MiB, never above that hard limit */
		if (res == RLIMIT_STACK && out->rlim_cur < (1ULL << 20))
			out->rlim_cur = lower(8ULL << 20, out->rlim_max);
		return;
	}

	out->rlim_max = lower(pol.rlim_max, caller->rlim_max);
	out->rlim_cur = lower(pol.rlim_cur, out->rlim_max);
}

int payload_rlimits(const struct rlimit caller[RLIMIT_NLIMITS], const struct sbx_limits *l, char *err,
		    size_t errlen)
{
	struct rlimit rl;

	for (int res = 0; res < RLIMIT_NLIMITS; res++) {
		payload_rlimit(res, &caller[res], l, &rl);
		/* only ever lowered from the helper's own, which needs no privilege */
		if (setrlimit(res, &rl) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "setrlimit %d: %s", res, strerror(errno));
			return -1;
		}
	}
	return 0;
}
