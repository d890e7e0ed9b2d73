/* SPDX-License-Identifier: ISC */
/*
 * Egress ([network] mode = allow): the helper's part. Design, and what it
 * defends: docs/egress.md; messages: common/egress_proto.h.
 *
 *   supervisor (egress.c, root): narrows the allow list to --allow, starts
 *     sbx-relay as _sbxnet, reads the fixed-size address records it sends
 *     back (root reads no DNS answer), keeps the fds until the recorder
 *     and the sandbox have theirs, ends the relay when the sandbox is gone.
 *   sandbox init (egress_net.c, the caller with capabilities in the
 *     sandbox's user namespace only): /etc/hosts with the pinned names,
 *     the pinned addresses on lo, a listening socket on each pair, handed
 *     to the relay.
 *   seccomp filter and its listener (egress_notify.c): TCP stream sockets
 *     only; every connect(2) is shown to the sandbox init, which records
 *     the destination and lets the kernel go on.
 */
#ifndef SBX_EGRESS_H
#define SBX_EGRESS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress_proto.h"
#include "policy.h"

struct egress_run {
	struct sbx_egress_rule want[SBX_EGRESS_MAX]; /* --allow, in argv order */
	size_t n_want;
	struct sbx_egress_pair pairs[SBX_EGRESS_PAIRS_MAX]; /* resolved, policy order */
	size_t n_pairs;
	pid_t relay;
	int ctl;     /* supervisor <-> relay (SBX_RELAY_FD_CTL) */
	int sandbox; /* the sandbox init's end of SBX_RELAY_FD_SANDBOX, until clone */
	int report;  /* the recorder's end of SBX_RELAY_FD_REPORT */
};

struct run;

/* egress.c (supervisor) */
void egress_init(struct run *r);
/* Keep only the --allow entries of the policy's list: each must be one of
 * them. -1 with err naming the entry and the policy. */
int egress_narrow(struct run *r, char *err, size_t errlen);
/* Start sbx-relay and resolve the allow list: -1 with one line in err
 * ("POLICY-FILE:LINE: allow: 'NAME' ..."), the relay stopped. */
int egress_start(struct run *r, char *err, size_t errlen);
/* In a forked child that is not the sandbox: close what is not its own
 * (keep_report: the recorder keeps the report fd). */
void egress_close_in_child(struct run *r, int keep_report);
/* The recorder / the sandbox have their ends: close ours. */
void egress_recorder_started(struct run *r);
void egress_sandbox_started(struct run *r);
/* The sandbox is gone: the relay closes every connection and reports. */
void egress_stop(struct run *r);
/* After the recorder is done: wait for the relay (5 s, then SIGKILL). */
void egress_reap(struct run *r);
/* The policy file's path, for errors that name it. */
void egress_policy_path(const struct run *r, char *buf, size_t len);
/* What the recorder needs to know of the run's egress (egress_proto.h). */
void egress_facts(const struct run *r, struct sbx_egress_facts *f);

/* egress_net.c (sandbox init, before privileges are dropped) */
/* Lines for /etc/hosts after the standard ones; bytes written. */
size_t egress_hosts(const struct run *r, char *buf, size_t len);
/* The fd the sandbox keeps (the relay's), into fds; how many (0 or 1). */
size_t egress_keep_fd(const struct run *r, int *fds);
/* Pinned addresses on lo (up), listeners handed to the relay. */
int egress_sandbox_setup(const struct run *r, char *err, size_t errlen);

/* egress_notify.c (sandbox init) */
/* After the filter is loaded (install_seccomp): keep its listener
 * descriptor fd and allocate the notification buffers; -1 on failure. */
int egress_notify_listen(int fd);
/* What the listener needs to classify a destination (from egress_net.c). */
void egress_notify_prepare(const struct run *r);
/* The listener descriptor for init's poll, or -1. */
int egress_notify_fd(void);
/* One pending notification: record it, let the call go on. */
void egress_notify_handle(void);

#endif
