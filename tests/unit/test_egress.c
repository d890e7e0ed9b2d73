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

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_record.h"
#include "hostport.h"
#include "policy.h"
#include "recfield.h"
#include "rundesc.h"

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

/* A run allowed db.internal:5432 at 10.1.2.3. */
static void allow_run(struct sbx_egress_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->mode = SBX_NET_ALLOW;
	f->started = 1;
	f->n_rules = 1;
	f->connections = 4;
	strcpy(f->rules[0].host, "db.internal");
	f->rules[0].port = 5432;
	f->n_pairs = 1;
	f->pairs[0] = (struct sbx_egress_pair){.family = AF_INET, .rule = 0, .port = 5432};
	inet_pton(AF_INET, "10.1.2.3", f->pairs[0].addr);
}

static struct sbx_egress_report conn_rec(const char *addr, uint16_t port, uint8_t end)
{
	struct sbx_egress_report m = {.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_REPORT_CONN, .end = end,
				      .family = AF_INET, .rule = 0, .port = port, .bytes_out = 10, .bytes_in = 20};
	inet_pton(AF_INET, addr, m.addr);
	return m;
}

/* The report as the relay would send it: recs, then (if totals) an END. */
static void feed(struct sbx_egress_facts *r, const struct sbx_egress_report *recs, size_t n, bool totals,
		 struct egress_report *rep)
{
	struct sbx_egress_report end = {.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_REPORT_END, .count = 1,
					.bytes_out = 10, .bytes_in = 20, .rule = SBX_EGRESS_LIMIT_BYTES_IN};
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(write(sv[0], &recs[i], sizeof(recs[i])), sizeof(recs[i]));
	if (totals)
		assert_int_equal(write(sv[0], &end, sizeof(end)), sizeof(end));
	close(sv[0]);
	egress_report_read(sv[1], r, rep);
}

static void report_checked(void **state)
{
	static struct sbx_egress_facts r;
	static struct egress_report rep;
	struct sbx_egress_report recs[3];
	(void)state;

	allow_run(&r);
	recs[0] = conn_rec("10.1.2.3", 5432, SBX_END_CLOSED);
	recs[1] = (struct sbx_egress_report){.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_REPORT_REFUSED,
					     .end = SBX_ATTEMPT_UNREACHABLE, .family = AF_INET, .port = 80, .count = 7};
	feed(&r, recs, 2, true, &rep);
	assert_true(rep.complete);
	assert_string_equal(rep.status, "complete");
	assert_int_equal(rep.n_conns, 1);
	assert_int_equal(rep.n_refused, 1);
	/* hostile or broken reports: said so, never taken as true */
	recs[0] = conn_rec("10.9.9.9", 5432, SBX_END_CLOSED); /* not a pair of the run */
	feed(&r, recs, 1, true, &rep);
	assert_false(rep.complete);
	assert_string_equal(rep.status, "malformed: sbx-relay sent a connection to no pair of this run");
	assert_int_equal(rep.n_conns, 0);
	recs[0] = conn_rec("10.1.2.3", 5433, SBX_END_CLOSED); /* pinned address, other port */
	feed(&r, recs, 1, true, &rep);
	assert_int_equal(rep.n_conns, 0);
	recs[0] = conn_rec("10.1.2.3", 5432, 200); /* no such end */
	feed(&r, recs, 1, true, &rep);
	assert_string_equal(rep.status, "malformed: sbx-relay sent a connection that ended in no known way");
	recs[0] = conn_rec("10.1.2.3", 5432, SBX_END_CLOSED);
	recs[0].magic = 1;
	feed(&r, recs, 1, true, &rep);
	assert_string_equal(rep.status, "malformed: sbx-relay sent a record without the magic number");
	recs[0] = (struct sbx_egress_report){.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_REPORT_REFUSED,
					     .end = SBX_ATTEMPT_PAIR, .family = AF_INET};
	feed(&r, recs, 1, true, &rep);
	assert_string_equal(rep.status, "malformed: sbx-relay sent a refused destination it cannot be");
	for (int i = 0; i < 3; i++)
		recs[i] = conn_rec("10.1.2.3", 5432, SBX_END_CLOSED);
	r.connections = 2; /* more connections than the limit */
	feed(&r, recs, 3, true, &rep);
	assert_string_equal(rep.status, "malformed: sbx-relay sent more connections than the limit");
	r.connections = 4;
	feed(&r, recs, 1, false, &rep); /* the relay died before its totals */
	assert_false(rep.complete);
	assert_string_equal(rep.status, "incomplete: sbx-relay ended without its totals");
	assert_int_equal(rep.n_conns, 1);
}

static void end_fields(void **state)
{
	static struct sbx_egress_facts r;
	static struct egress_report rep;
	struct sbx_egress_report recs[2];
	struct sbx_record end;
	struct sbx_fval v;
	char e[256];
	(void)state;

	allow_run(&r);
	recs[0] = conn_rec("10.1.2.3", 5432, SBX_END_BYTES_IN);
	recs[1] = (struct sbx_egress_report){.magic = SBX_EGRESS_MAGIC, .kind = SBX_EGRESS_REPORT_REFUSED,
					     .end = SBX_ATTEMPT_REFUSED, .family = AF_INET, .port = 22, .count = 3};
	inet_pton(AF_INET, "10.1.2.3", recs[1].addr);
	feed(&r, recs, 2, true, &rep);
	memset(&end, 0, sizeof(end));
	end.kind = SBX_REC_END;
	assert_int_equal(egress_end_fields(&end, &r, &rep, e, sizeof(e)), 0);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_REACHED, &v), 1);
	assert_int_equal(v.n, strlen("[\"db.internal:5432\",\"10.1.2.3:5432\"]"));
	assert_memory_equal(v.p, "[\"db.internal:5432\",\"10.1.2.3:5432\"]", v.n);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_REFUSED_DESTS, &v), 1);
	assert_memory_equal(v.p, "[\"10.1.2.3:22\"]", v.n);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_REFUSED_COUNT, &v), 1);
	assert_int_equal(v.u, 3);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_LIMITS_HIT, &v), 1);
	assert_memory_equal(v.p, "bytes_in", v.n);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_REPORT, &v), 1);
	assert_memory_equal(v.p, "complete", v.n);
	sbx_rext_free(&end.ext);
	/* a run that did not start has no network fields */
	r.started = 0;
	memset(&end, 0, sizeof(end));
	assert_int_equal(egress_end_fields(&end, &r, &rep, e, sizeof(e)), 0);
	assert_int_equal(sbx_rec_get(&end, SBX_F_NET_CONN_COUNT, &v), 0);
}

/* The egress facts travel in the run description from the supervisor to
 * sbx-recorder: the recorder refuses facts it could not print or check a
 * report against (a count past its array, a pair of no entry, an unknown
 * family, a name off its array, a mode other than the run's). */
static void desc_egress_checked(void **state)
{
	static struct sbx_run_desc d, good;
	char why[256];

	(void)state;
	memset(&good, 0, sizeof(good));
	sbx_msg_hdr_init(&good.hdr, SBX_REC_MSG_RUN, sizeof(good));
	strcpy(good.run_id, "0123456789abcdef0123456789abcdef");
	assert_int_equal(sbx_run_desc_add_arg(&good, "/usr/bin/python3"), 0);
	good.net = good.egress.mode = SBX_NET_ALLOW;
	good.egress.n_rules = 1;
	strcpy(good.egress.rules[0].host, "db.internal");
	good.egress.rules[0].port = 5432;
	good.egress.n_pairs = 1;
	good.egress.pairs[0] = (struct sbx_egress_pair){.family = AF_INET, .rule = 0, .port = 5432, .addr = {10, 1, 2, 3}};
	d = good;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), 0);
	d.egress.mode = SBX_NET_NONE;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "network"));
	d = good;
	d.egress.n_rules = SBX_EGRESS_MAX + 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	d = good;
	d.egress.n_pairs = SBX_EGRESS_PAIRS_MAX + 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	d = good;
	d.egress.pairs[0].rule = 1;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	d = good;
	d.egress.pairs[0].family = AF_UNIX;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	d = good;
	memset(d.egress.rules[0].host, 'h', sizeof(d.egress.rules[0].host));
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	/* without mode = allow, no list */
	d = good;
	d.net = d.egress.mode = SBX_NET_NONE;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), -1);
	d.egress.n_rules = d.egress.n_pairs = 0;
	assert_int_equal(sbx_run_desc_check(&d, sizeof(d), false, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostport_good), cmocka_unit_test(hostport_bad),
		cmocka_unit_test(network_allow), cmocka_unit_test(network_errors),
		cmocka_unit_test(report_checked), cmocka_unit_test(end_fields), cmocka_unit_test(desc_egress_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
