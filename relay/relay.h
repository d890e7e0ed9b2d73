/* SPDX-License-Identifier: ISC */
/*
 * sbx-relay internals. One relay per run with [network] mode = allow,
 * running as _sbxnet (no capabilities, no_new_privs, not dumpable):
 *
 *   resolve.c  resolve the allow list once (getaddrinfo(3)), check a route
 *              to each address, hand the supervisor fixed-size records;
 *   loop.c     take the listening sockets the sandbox init made on the
 *              pinned address:port pairs, accept, connect to the same pair
 *              from the host's network namespace, count attempts;
 *   conn.c     move bytes both ways with splice(2) under the run's byte
 *              limits, half-closes and resets passed on;
 *   report.c   what the recorder puts in the END record.
 *
 * Interface (fds, argv, messages): common/egress_proto.h.
 */
#ifndef SBX_RELAY_H
#define SBX_RELAY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_proto.h"
#include "hostport.h"
#include "policy.h"

/* An address:port the payload may reach, resolved from allow entry `rule`. */
struct pair {
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
	uint8_t rule;
	int listen_fd; /* -1 until the sandbox init passes it, and once closed */
};

struct rule {
	char host[SBX_HOST_MAX + 1];
	uint16_t port;
};

/* Direction 0: payload -> service ("out"); 1: service -> payload ("in"). */
struct conn {
	bool used, connecting;
	int fd[2];          /* [0] the payload's side (accepted), [1] the service's */
	int pipe[2][2];     /* per direction: read end, write end */
	size_t pending[2];  /* bytes in the pipe */
	bool eof[2];        /* the source of the direction has closed */
	bool shut[2];       /* shutdown(SHUT_WR) done on the direction's destination */
	uint64_t bytes[2];  /* delivered */
	uint64_t start_ms;  /* CLOCK_BOOTTIME, ms */
	const struct pair *pair;
	int closing;        /* a limit was reached: the SBX_END_* it ends with, once drained */
	uint64_t closing_by; /* ms: reset then even if not drained */
};

struct relay {
	struct rule rules[SBX_EGRESS_MAX];
	size_t n_rules;
	struct pair pairs[SBX_EGRESS_PAIRS_MAX];
	size_t n_pairs;
	uint64_t run_start_ms;        /* CLOCK_BOOTTIME */
	uint64_t max_conns, limit[2]; /* connections, bytes_out, bytes_in */
	uint64_t reserved[2];         /* bytes taken from a source, counted against limit[] */
	uint64_t total[2];            /* bytes delivered */
	uint64_t n_conns;             /* accepted so far */
	unsigned limits_hit;          /* SBX_EGRESS_LIMIT_* */
	struct conn *conns;
	size_t conns_cap;
	bool listeners_closed;
};

/* resolve.c: fill r->pairs and send the records to the supervisor (fd 3).
 * -1 only when the supervisor cannot be told. */
int relay_resolve(struct relay *r);
/* loop.c: receive the listeners, relay until the supervisor closes fd 3. */
void relay_loop(struct relay *r);
/* conn.c */
void conn_start(struct relay *r, const struct pair *p, int accepted);
void conn_events(struct relay *r, struct conn *c, int which, short revents);
void conn_connected(struct relay *r, struct conn *c);
void conn_end(struct relay *r, struct conn *c, int how);
/* A closing connection: ended (reset) once both sides received what the
 * limits allowed, or past its deadline. true if it was ended. */
bool conn_closing_check(struct relay *r, struct conn *c, uint64_t now);
uint64_t now_ms(void);
/* report.c */
void report_attempt(struct relay *r, const struct sbx_egress_attempt *a, bool connections_limit);
void report_conn(struct relay *r, const struct conn *c, int how);
void report_finish(struct relay *r);
/* main.c */
__attribute__((format(printf, 1, 2))) void relay_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2), noreturn)) void relay_die(const char *fmt, ...);

#endif
