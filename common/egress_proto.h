/* SPDX-License-Identifier: ISC */
/*
 * Egress: the messages between the supervisor (root), sbx-relay (_sbxnet),
 * the sandbox init (the caller, inside the sandbox's namespaces) and the
 * recorder (_sbx). Every message is a fixed-size struct of fixed-width
 * fields in host byte order (all four run on the same machine), sent as
 * one SOCK_SEQPACKET record (the report: a SOCK_STREAM of records), so
 * that no reader parses anything but a known size and checked values.
 * The design and what it defends: docs/egress.md.
 *
 * sbx-relay, exec'd by the supervisor as _sbxnet with no capabilities:
 *
 *   sbx-relay --run-start-ns NS --connections N --bytes-out N --bytes-in N
 *             HOST:PORT...
 *
 *   --run-start-ns  CLOCK_BOOTTIME of the run's start (the START record's
 *                   boottime_ns): connection start offsets count from it.
 *   --connections, --bytes-out, --bytes-in: the policy's [network] limits
 *                   (a count, bytes, bytes; sbx.policy(5)).
 *   HOST:PORT       the effective allow list, in policy order (the index
 *                   of an entry is its "rule").
 *
 *   fd 3  SBX_RELAY_FD_CTL     supervisor (SOCK_SEQPACKET). The relay
 *         sends struct sbx_egress_resolved records, the last one with rule
 *         SBX_EGRESS_RULE_END. The supervisor closing it ends the run: the
 *         relay closes every connection, finishes the report and exits.
 *   fd 4  SBX_RELAY_FD_SANDBOX sandbox init (SOCK_SEQPACKET): struct
 *         sbx_egress_listener records, each with one listening socket as
 *         SCM_RIGHTS; then struct sbx_egress_attempt records while the
 *         payload runs.
 *   fd 5  SBX_RELAY_FD_REPORT  recorder (SOCK_STREAM): struct
 *         sbx_egress_report records, the last one of kind
 *         SBX_EGRESS_REPORT_END; then the relay closes it.
 *
 *   Exit status 0, or 1 with one line on fd 2 (the supervisor's stderr)
 *   prefixed "sbx-relay: ".
 */
#ifndef SBX_EGRESS_PROTO_H
#define SBX_EGRESS_PROTO_H
#include <stdint.h>
#include <sys/socket.h>

#include "policy.h"

#define SBX_RELAY_FD_CTL 3
#define SBX_RELAY_FD_SANDBOX 4
#define SBX_RELAY_FD_REPORT 5

#define SBX_EGRESS_ADDRS_PER_NAME 4 /* addresses pinned per allow entry */
#define SBX_EGRESS_PAIRS_MAX 64     /* address:port pairs per run */
#define SBX_EGRESS_RESOLVE_MS 15000 /* the relay's time to resolve every name */
#define SBX_EGRESS_CONNECT_MS 10000 /* its time to connect to a service */
#define SBX_EGRESS_ATTEMPTS_MAX 256 /* distinct refused destinations kept in the report */

#define SBX_EGRESS_MAGIC 0x53424547u /* "SBEG" */

/* One resolved address of allow entry `rule`: an address:port pair. */
struct sbx_egress_pair {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t rule;   /* index into the allow list */
	uint16_t port;
	uint8_t addr[16]; /* network byte order; IPv4 in the first 4 bytes */
};

/* An address:port pair (family AF_INET or AF_INET6, addr as in struct
 * sbx_egress_pair, port in host order) as a socket address (sockaddr_in
 * or sockaddr_in6: ip(7), ipv6(7)) in ss, for bind(2) or connect(2): its
 * length. egress_addr.c */
socklen_t sbx_egress_sockaddr(int family, const uint8_t addr[16], uint16_t port, struct sockaddr_storage *ss);

/* The egress facts of one run, for the recorder (START fields, checking
 * the relay's report, END fields, the result): from the root-owned
 * policy (narrowed by --allow) and the supervisor's checked records of
 * the relay's resolution. Plain data, so that it can travel in the run
 * description. */
struct sbx_egress_facts {
	uint32_t mode;    /* enum sbx_net_mode; the rest only with SBX_NET_ALLOW */
	uint32_t started; /* 1: the sandbox ran (the relay has a report to give) */
	uint32_t n_rules, n_pairs;
	struct sbx_egress_rule rules[SBX_EGRESS_MAX];
	struct sbx_egress_pair pairs[SBX_EGRESS_PAIRS_MAX];
	uint64_t connections, bytes_out, bytes_in; /* the [network] limits */
};
#define SBX_EGRESS_RULE_END 0xffu

/* relay -> supervisor: one address of one allow entry, or why it has none. */
enum sbx_resolve_status {
	SBX_RESOLVE_OK = 0,
	SBX_RESOLVE_GAI = 1,      /* getaddrinfo(3) failed: gai holds its code, err the errno for EAI_SYSTEM */
	SBX_RESOLVE_NOROUTE = 2,  /* every address lacks a route from this host: err holds the errno */
	SBX_RESOLVE_UNUSABLE = 3, /* only unusable addresses (unspecified, multicast, broadcast) */
};
struct sbx_egress_resolved {
	uint32_t magic;
	uint8_t rule;     /* index of the allow entry, or SBX_EGRESS_RULE_END */
	uint8_t status;   /* enum sbx_resolve_status */
	uint8_t family;   /* AF_INET or AF_INET6 when status is OK */
	uint8_t pad;
	int32_t gai;
	int32_t err;
	uint8_t addr[16]; /* network byte order; IPv4 in the first 4 bytes */
};

/* sandbox init -> relay: one listening socket (SCM_RIGHTS; the relay
 * learns its address with getsockname(2) and checks it is a pair it
 * resolved), or with kind SBX_EGRESS_READY and no fd, the end of them. */
enum { SBX_EGRESS_LISTENER = 'L', SBX_EGRESS_READY = 'R', SBX_EGRESS_ATTEMPT = 'A' };
struct sbx_egress_listener {
	uint32_t magic;
	uint8_t kind;
	uint8_t pad[3];
};

/* sandbox init -> relay: the payload called connect(2) to an address
 * outside its own loopback. verdict says what the network namespace does
 * with it (the namespace decides; this is the record). The address is as
 * the payload's memory held it when the sandbox init read it, which a
 * payload racing its own call can change: see docs/egress.md. */
#define SBX_ATTEMPT_VERDICTS(X)                                                                  \
	X(PAIR, 1, "pair", "an allowed pair: the relay answers")                                \
	X(REFUSED, 2, "refused", "a pinned address, another port: ECONNREFUSED")                \
	X(UNREACHABLE, 3, "unreachable", "any other address: ENETUNREACH")                      \
	X(UNREAD, 4, "unread", "the destination could not be read from the payload's memory")
enum sbx_attempt_verdict {
#define SBX_VERDICT_ENUM(sym, num, name, doc) SBX_ATTEMPT_##sym = (num),
	SBX_ATTEMPT_VERDICTS(SBX_VERDICT_ENUM)
#undef SBX_VERDICT_ENUM
};
struct sbx_egress_attempt {
	uint32_t magic;
	uint8_t kind;     /* SBX_EGRESS_ATTEMPT */
	uint8_t verdict;  /* enum sbx_attempt_verdict */
	uint8_t family;
	uint8_t pad;
	uint16_t port;
	uint16_t pad2;
	uint32_t lost;    /* attempts before this one that could not be sent (socket full) */
	uint8_t addr[16];
};

/* relay -> recorder. How a connection ended: X(SYMBOL, number, name as
 * recorded, meaning). The one table; sbx_egress_end_name() reads it. */
#define SBX_EGRESS_ENDS(X)                                                                       \
	X(CLOSED, 1, "closed", "both sides closed normally")                                    \
	X(RESET, 2, "reset", "a side reset the connection or failed")                           \
	X(REFUSED, 3, "refused", "the service refused the relay's connection")                  \
	X(UNREACHABLE, 4, "unreachable", "no route to the service, or its connect timed out")  \
	X(BYTES_OUT, 5, "bytes_out", "the run's bytes_out limit: delivered up to it, then reset") \
	X(BYTES_IN, 6, "bytes_in", "the run's bytes_in limit: delivered up to it, then reset")  \
	X(RUN_ENDED, 7, "run_ended", "still open when the sandbox was gone")                    \
	X(CONNECTIONS, 8, "connections", "refused: the run's connections limit was reached")    \
	X(RELAY_ERROR, 9, "relay_error", "the relay could not carry it (descriptors, memory)")
enum sbx_egress_end {
#define SBX_END_ENUM(sym, num, name, doc) SBX_END_##sym = (num),
	SBX_EGRESS_ENDS(SBX_END_ENUM)
#undef SBX_END_ENUM
	SBX_END_MAX = 9,
};

/* The recorded name of an sbx_egress_end, or NULL. */
static inline const char *sbx_egress_end_name(unsigned e)
{
	switch (e) {
#define SBX_END_NAME(sym, num, name, doc) case num: return name;
	SBX_EGRESS_ENDS(SBX_END_NAME)
#undef SBX_END_NAME
	default: return NULL;
	}
}

/* The recorded name of an sbx_attempt_verdict, or NULL. */
static inline const char *sbx_attempt_verdict_name(unsigned v)
{
	switch (v) {
#define SBX_VERDICT_NAME(sym, num, name, doc) case num: return name;
	SBX_ATTEMPT_VERDICTS(SBX_VERDICT_NAME)
#undef SBX_VERDICT_NAME
	default: return NULL;
	}
}

/* END's rule field: the limits the run reached */
#define SBX_EGRESS_LIMIT_CONNECTIONS 1u
#define SBX_EGRESS_LIMIT_BYTES_OUT 2u
#define SBX_EGRESS_LIMIT_BYTES_IN 4u
enum sbx_egress_report_kind {
	SBX_EGRESS_REPORT_CONN = 1,    /* one connection through the relay */
	SBX_EGRESS_REPORT_REFUSED = 2, /* one refused destination, with a count */
	SBX_EGRESS_REPORT_END = 3,     /* totals; the last record */
};
struct sbx_egress_report {
	uint32_t magic;
	uint8_t kind;       /* enum sbx_egress_report_kind */
	uint8_t end;        /* CONN: enum sbx_egress_end; REFUSED: enum sbx_attempt_verdict,
			     * or SBX_END_CONNECTIONS for a pair refused past the limit */
	uint8_t family;     /* the destination's */
	uint8_t rule;       /* CONN: the allow entry of the destination; END: SBX_EGRESS_LIMIT_* bits */
	uint16_t port;      /* the destination */
	uint16_t pad;
	uint8_t addr[16];
	uint64_t start_ms;  /* CONN: since the run's start (--run-start-ns) */
	uint64_t duration_ms;
	uint64_t bytes_out; /* CONN: payload -> service, delivered; END: the run's total */
	uint64_t bytes_in;  /* CONN: service -> payload, delivered; END: the run's total */
	uint64_t count;     /* REFUSED: attempts to this destination; END: connections */
	uint64_t more;      /* END: refused attempts not itemised (past SBX_EGRESS_ATTEMPTS_MAX or lost) */
};

#endif
