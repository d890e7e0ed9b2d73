/* SPDX-License-Identifier: ISC */
/* An egress pair as a socket address: the supervisor binds the sandbox's
 * listener to it, the relay connects to it (egress_proto.h). */
#include <netinet/in.h>
#include <string.h>

#include "egress_proto.h"

socklen_t sbx_egress_sockaddr(int family, const uint8_t addr[16], uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, addr, 4);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	memcpy(&in6->sin6_addr, addr, 16);
	return sizeof(*in6);
}
