/* SPDX-License-Identifier: ISC */
/*
 * HOST:PORT, the form of a policy's [network] allow entries, of
 * `sbx run --allow` and of sbx-relay's arguments (sbx.policy(5)).
 */
#ifndef SBX_HOSTPORT_H
#define SBX_HOSTPORT_H
#include <stddef.h>
#include <stdint.h>

#define SBX_HOST_MAX 253 /* a DNS name's text form, RFC 1035 2.3.4 / RFC 1123 2.1 */
/* "[" IPv6 "]:" 65535, or a name and ":65535", with the NUL */
#define SBX_HOSTPORT_LEN (SBX_HOST_MAX + 8)

/*
 * Parse "NAME:PORT", "A.B.C.D:PORT" or "[IPV6]:PORT". NAME is a DNS name:
 * labels of letters, digits, '-' and '_' (1 to 63 bytes, no '-' at either
 * end), at most 253 bytes, no trailing dot; it is stored lower-cased. An
 * IPv4 address must be in dotted-quad form (inet_pton(3)): the short and
 * hexadecimal forms inet_aton(3) also reads ("10.1", "0x7f.1") are refused
 * rather than resolved to something the reader did not expect. An IPv6
 * address is bracketed and has no zone ("%eth0"); it is stored without
 * brackets, in the form inet_ntop(3) writes. PORT is decimal, 1 to 65535.
 * Returns 0, or -1 with *why set to a static English phrase.
 */
int sbx_hostport_parse(const char *s, char host[SBX_HOST_MAX + 1], uint16_t *port, const char **why);

/* 1 if host (as stored by sbx_hostport_parse) is an IPv4 or IPv6 literal. */
int sbx_host_is_literal(const char *host);

/* "host:port", "[v6]:port" for an IPv6 literal. */
void sbx_hostport_format(const char *host, uint16_t port, char *out, size_t len);

#endif
