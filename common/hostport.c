/* SPDX-License-Identifier: ISC */
/*
 * HOST:PORT parsing. Runs as root in the setuid helper on the root-owned
 * policy and on argv (--allow), so it only checks characters and lengths
 * and calls inet_pton(3); it resolves nothing (sbx-relay does that, as
 * _sbxnet).
 */
#include "hostport.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <bsd/string.h>

#include "units.h"

static int valid_name(const char *h, const char **why)
{
	size_t label = 0, n = strlen(h);

	if (n == 0) {
		*why = "no host name before the ':'";
		return -1;
	}
	if (n > SBX_HOST_MAX) {
		*why = "host name longer than 253 bytes";
		return -1;
	}
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (c == '.' || c == '\0') {
			if (label == 0) {
				*why = c == '\0' ? "host name ends with '.'" : "empty label in the host name";
				return -1;
			}
			if (h[i - 1] == '-') {
				*why = "a label of the host name ends with '-'";
				return -1;
			}
			label = 0;
			continue;
		}
		if (!(isalnum(c) || c == '-' || c == '_')) {
			*why = "the host name holds a character other than letters, digits, '-', '_' and '.'";
			return -1;
		}
		if (label == 0 && c == '-') {
			*why = "a label of the host name starts with '-'";
			return -1;
		}
		if (++label > 63) {
			*why = "a label of the host name is longer than 63 bytes";
			return -1;
		}
	}
	return 0;
}

int sbx_host_is_literal(const char *host)
{
	unsigned char a[16];

	return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

int sbx_hostport_parse(const char *s, char host[SBX_HOST_MAX + 1], uint16_t *port, const char **why)
{
	char buf[SBX_HOSTPORT_LEN + 1];
	const char *colon, *ps;
	struct in_addr a4;
	unsigned char a6[16];
	uint64_t p;
	size_t hl;

	*why = "not HOST:PORT";
	if (strlen(s) >= sizeof(buf))
		return -1;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (close == NULL || close[1] != ':') {
			*why = "an IPv6 address is written [ADDRESS]:PORT";
			return -1;
		}
		hl = (size_t)(close - s - 1);
		memcpy(buf, s + 1, hl);
		buf[hl] = '\0';
		if (strchr(buf, '%') != NULL) {
			*why = "an IPv6 zone (%interface) is not allowed";
			return -1;
		}
		if (inet_pton(AF_INET6, buf, a6) != 1) {
			*why = "not an IPv6 address between the brackets";
			return -1;
		}
		inet_ntop(AF_INET6, a6, host, SBX_HOST_MAX + 1);
		ps = close + 2;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL) {
			*why = "no port (write HOST:PORT)";
			return -1;
		}
		hl = (size_t)(colon - s);
		if (memchr(s, ':', hl) != NULL) {
			*why = "an IPv6 address is written [ADDRESS]:PORT";
			return -1;
		}
		memcpy(buf, s, hl);
		buf[hl] = '\0';
		if (valid_name(buf, why) < 0)
			return -1;
		/* inet_aton(3) reads "10.1" and "0x7f.1" as addresses: only
		 * the dotted quad is taken as one, the rest is refused */
		if (inet_aton(buf, &a4) != 0 && inet_pton(AF_INET, buf, &a4) != 1) {
			*why = "an IPv4 address is written as four decimal numbers A.B.C.D";
			return -1;
		}
		for (size_t i = 0; i <= hl; i++)
			host[i] = (char)tolower((unsigned char)buf[i]);
		ps = colon + 1;
	}
	if (ps[0] == '\0') {
		*why = "no port after the ':'";
		return -1;
	}
	if (!isdigit((unsigned char)ps[0]) || sbx_parse_uint(ps, 65535, &p) < 0) {
		*why = "the port is not a number from 1 to 65535";
		return -1;
	}
	if (p == 0) {
		*why = "port 0 is not a port (1 to 65535)";
		return -1;
	}
	*port = (uint16_t)p;
	return 0;
}

void sbx_hostport_format(const char *host, uint16_t port, char *out, size_t len)
{
	if (strchr(host, ':') != NULL)
		snprintf(out, len, "[%s]:%u", host, (unsigned)port);
	else
		snprintf(out, len, "%s:%u", host, (unsigned)port);
}
