/* SPDX-License-Identifier: ISC */
/* Egress: HOST:PORT parsing, a policy's [network] section. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hostport.h"
#include "policy.h"

static char err[SBX_ERR_LEN];

static int parse(const char *text, struct sbx_policy *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->name, "t");
	err[0] = '\0';
	return sbx_policy_parse("t.policy", text, strlen(text), p, err, sizeof(err));
}

static const char *bad(const char *s)
{
	static const char *why;
	char host[SBX_HOST_MAX + 1];
	uint16_t port;

	why = NULL;
	if (sbx_hostport_parse(s, host, &port, &why) == 0)
		return "accepted";
	return why;
}

static void hostport_good(void **state)
{
	static const struct { const char *in, *host; unsigned port; } t[] = {
		{"db.internal:5432", "db.internal", 5432},
		{"DB.Example.ORG:443", "db.example.org", 443},
		{"db_1:1", "db_1", 1},
		{"10.0.0.5:65535", "10.0.0.5", 65535},
		{"[2001:DB8::1]:5432", "2001:db8::1", 5432},
		{"[::ffff:10.0.0.1]:80", "::ffff:10.0.0.1", 80},
		{"localhost:5432", "localhost", 5432},
		{"a1.b-c.d:22", "a1.b-c.d", 22},
	};
	char host[SBX_HOST_MAX + 1], out[SBX_HOSTPORT_LEN];
	const char *why;
	uint16_t port;
	(void)state;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(sbx_hostport_parse(t[i].in, host, &port, &why), 0);
		assert_string_equal(host, t[i].host);
		assert_int_equal(port, t[i].port);
	}
	sbx_hostport_format("2001:db8::1", 5432, out, sizeof(out));
	assert_string_equal(out, "[2001:db8::1]:5432");
	sbx_hostport_format("db", 1, out, sizeof(out));
	assert_string_equal(out, "db:1");
	assert_true(sbx_host_is_literal("10.1.2.3"));
	assert_true(sbx_host_is_literal("::1"));
	assert_false(sbx_host_is_literal("db.internal"));
}

static void hostport_bad(void **state)
{
	char longname[300], longlabel[80];
	(void)state;

	assert_string_equal(bad("db.internal"), "no port (write HOST:PORT)");
	assert_string_equal(bad("db.internal:"), "no port after the ':'");
	assert_string_equal(bad("db.internal:0"), "port 0 is not a port (1 to 65535)");
	assert_string_equal(bad("db.internal:65536"), "the port is not a number from 1 to 65535");
	assert_string_equal(bad("db.internal:-1"), "the port is not a number from 1 to 65535");
	assert_string_equal(bad("db.internal:+5"), "the port is not a number from 1 to 65535");
	assert_string_equal(bad("db.internal:http"), "the port is not a number from 1 to 65535");
	assert_string_equal(bad(":5432"), "no host name before the ':'");
	assert_string_equal(bad("2001:db8::1:5432"), "an IPv6 address is written [ADDRESS]:PORT");
	assert_string_equal(bad("[2001:db8::1]5432"), "an IPv6 address is written [ADDRESS]:PORT");
	assert_string_equal(bad("[fe80::1%eth0]:22"), "an IPv6 zone (%interface) is not allowed");
	assert_string_equal(bad("[10.0.0.1]:22"), "not an IPv6 address between the brackets");
	assert_string_equal(bad("db..internal:1"), "empty label in the host name");
	assert_string_equal(bad(".db:1"), "empty label in the host name");
	assert_string_equal(bad("db.:1"), "host name ends with '.'");
	assert_string_equal(bad("-db:1"), "a label of the host name starts with '-'");
	assert_string_equal(bad("db-.x:1"), "a label of the host name ends with '-'");
	assert_string_equal(bad("db/x:1"),
			    "the host name holds a character other than letters, digits, '-', '_' and '.'");
	assert_string_equal(bad("db x:1"),
			    "the host name holds a character other than letters, digits, '-', '_' and '.'");
	/* what inet_aton(3) would read as an address is not a name */
	assert_string_equal(bad("10.1:5432"), "an IPv4 address is written as four decimal numbers A.B.C.D");
	assert_string_equal(bad("0x7f.1:5432"), "an IPv4 address is written as four decimal numbers A.B.C.D");
	assert_string_equal(bad("2130706433:5432"), "an IPv4 address is written as four decimal numbers A.B.C.D");
	memset(longlabel, 'a', 64);
	longlabel[64] = '\0';
	snprintf(longname, sizeof(longname), "%s:1", longlabel);
	assert_string_equal(bad(longname), "a label of the host name is longer than 63 bytes");
	/* too long to be any HOST:PORT */
	memset(longname, 'a', 280);
	memcpy(longname + 280, ":1", 3);
	assert_string_equal(bad(longname), "not HOST:PORT");
	/* 254 bytes of labels */
	for (int i = 0; i < 51; i++)
		memcpy(longname + 5 * i, "abcd.", 5);
	memcpy(longname + 254, ":1", 3);
	longname[253] = 'x';
	assert_string_equal(bad(longname), "host name longer than 253 bytes");
}

static void network_allow(void **state)
{
	struct sbx_policy p;
	(void)state;

	assert_int_equal(parse("[network]\nmode = allow\nallow = db.internal:5432 [2001:db8::5]:443\n"
			       "connections = 4\nbytes_out = 1M\nbytes_in = 2G\n", &p), 0);
	assert_int_equal(p.net, SBX_NET_ALLOW);
	assert_int_equal(p.egress.n_allow, 2);
	assert_string_equal(p.egress.allow[0].host, "db.internal");
	assert_int_equal(p.egress.allow[0].port, 5432);
	assert_int_equal(p.egress.allow[0].line, 3);
	assert_string_equal(p.egress.allow[1].host, "2001:db8::5");
	assert_int_equal(p.egress.connections, 4);
	assert_int_equal(p.egress.bytes_out, 1ULL << 20);
	assert_int_equal(p.egress.bytes_in, 2ULL << 30);
	/* defaults of the limits */
	assert_int_equal(parse("[network]\nmode = allow\nallow = db:1\n", &p), 0);
	assert_int_equal(p.egress.connections, 32);
	assert_int_equal(p.egress.bytes_out, 64ULL << 20);
	assert_int_equal(p.egress.bytes_in, 1ULL << 30);
	assert_string_equal(sbx_net_mode_name(SBX_NET_ALLOW), "allow");
	assert_string_equal(sbx_net_mode_name(SBX_NET_NONE), "none");
	assert_null(sbx_net_mode_name(3));
	assert_null(sbx_net_mode_name(-1));
}

static void network_errors(void **state)
{
	static const struct { const char *text, *err; } t[] = {
		{"[network]\nmode = allow\n",
		 "t.policy:2: mode = allow needs at least one service: allow = HOST:PORT ..."},
		{"[network]\nmode = allow\nallow =\n",
		 "t.policy:2: mode = allow needs at least one service: allow = HOST:PORT ..."},
		{"[network]\nallow = db:1\n", "t.policy:2: allow: only with mode = allow (the mode is none)"},
		{"[network]\nmode = loopback\n\nconnections = 3\n",
		 "t.policy:4: connections, bytes_out and bytes_in: only with mode = allow"},
		{"[network]\nmode = allow\nallow = db:1 db.x:0\n", "t.policy:3: allow: 'db.x:0': port 0 is not a port (1 to 65535)"},
		{"[network]\nmode = allow\nallow = db:1 DB:1\n", "t.policy:3: allow: 'DB:1' given twice"},
		{"[network]\nmode = allow\nallow = db\n", "t.policy:3: allow: 'db': no port (write HOST:PORT)"},
		{"[network]\nmode = open\n", "t.policy:2: mode: 'open' is not one of none, loopback, allow"},
		{"[network]\nmode = allow\nallow = a:1\nconnections = 0\n",
		 "t.policy:4: connections: '0' is not a whole number from 1 to 1024"},
		{"[network]\nmode = allow\nallow = a:1\nconnections = 1025\n",
		 "t.policy:4: connections: '1025' is not a whole number from 1 to 1024"},
		{"[network]\nmode = allow\nallow = a:1\nbytes_out = lots\n",
		 "t.policy:4: bytes_out: 'lots' is not a size (examples: 64M, 1G)"},
		{"[network]\nmode = allow\nallow = a:1\nproxy = x\n", "t.policy:4: unknown key 'proxy' in [network]"},
		{"[network]\nmode = allow\nallow = a:1\nallow = b:2\n", "t.policy:4: key 'allow' given twice in [network]"},
	};
	struct sbx_policy p;
	(void)state;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(parse(t[i].text, &p), -1);
		assert_string_equal(err, t[i].err);
	}
	{
		/* 16 entries fit, 17 do not */
		char text[1024] = "[network]\nmode = allow\nallow =";
		for (int i = 1; i <= 16; i++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), " h%d:%d", i, i);
		assert_int_equal(parse(text, &p), 0);
		assert_int_equal(p.egress.n_allow, 16);
		strcat(text, " h17:17");
		assert_int_equal(parse(text, &p), -1);
		assert_string_equal(err, "t.policy:3: allow: more than 16 entries");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostport_good), cmocka_unit_test(hostport_bad),
		cmocka_unit_test(network_allow), cmocka_unit_test(network_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
