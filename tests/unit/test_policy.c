/* SPDX-License-Identifier: ISC */
/* Policy and sbx.conf parsing, units, tighten-only merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"
#include "runenv.h"
#include "units.h"

static char err[SBX_ERR_LEN];

static int parse(const char *text, struct sbx_policy *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->name, "t");
	err[0] = '\0';
	return sbx_policy_parse("t.policy", text, strlen(text), p, err, sizeof(err));
}

static void sizes(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(sbx_parse_size("512M", &v), 0);
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(sbx_parse_size("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(sbx_parse_size("1G", &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(sbx_parse_size("1.5G", &v), 0);
	assert_int_equal(v, 3ULL << 29);
	assert_int_equal(sbx_parse_size("100", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(sbx_parse_size("64MiB", &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(sbx_parse_size("", &v), -1);
	assert_int_equal(sbx_parse_size("12X", &v), -1);
	assert_int_equal(sbx_parse_size("-1M", &v), -1);
	assert_int_equal(sbx_parse_size("M", &v), -1);
	assert_int_equal(sbx_parse_size("99999999999999999999", &v), -1);
	assert_int_equal(sbx_parse_size("17179869184G", &v), -1); /* 2^64: overflow */
	assert_int_equal(sbx_parse_size("0.5", &v), -1);          /* half a byte */
	/* formatting is the inverse for exact multiples */
	char buf[32];
	sbx_format_size(67108864, buf, sizeof(buf));
	assert_string_equal(buf, "64M");
	sbx_format_size(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
	sbx_format_size(1536, buf, sizeof(buf));
	assert_string_equal(buf, "1536");
	sbx_format_size(1ULL << 50, buf, sizeof(buf));
	assert_string_equal(buf, "1024T");
}

static void durations(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(sbx_parse_duration_ms("30s", &v), 0);
	assert_int_equal(v, 30000);
	assert_int_equal(sbx_parse_duration_ms("500ms", &v), 0);
	assert_int_equal(v, 500);
	assert_int_equal(sbx_parse_duration_ms("1.5s", &v), 0);
	assert_int_equal(v, 1500);
	assert_int_equal(sbx_parse_duration_ms("2m", &v), 0);
	assert_int_equal(v, 120000);
	assert_int_equal(sbx_parse_duration_ms("1h", &v), 0);
	assert_int_equal(v, 3600000);
	assert_int_equal(sbx_parse_duration_ms("7", &v), 0);
	assert_int_equal(v, 7000);
	assert_int_equal(sbx_parse_duration_ms("1.5ms", &v), -1);
	assert_int_equal(sbx_parse_duration_ms("10x", &v), -1);
	assert_int_equal(sbx_parse_duration_ms("s", &v), -1);
	assert_int_equal(sbx_parse_duration_ms("1.2345s", &v), -1);
}

static void default_policy_file(void **state)
{
	struct sbx_policy p;
	char *text;
	long len;
	FILE *f = fopen(SBX_SRCDIR "/policies/default.policy", "r");
	(void)state;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	assert_int_equal(parse(text, &p), 0);
	/* issue 2's default: 30 s, 30 s, 512M, 64 pids, 1 cpu, 64M, 64M, 1M, no network */
	assert_int_equal(p.limits.wall_ms, 30000);
	assert_int_equal(p.limits.cpu_ms, 30000);
	assert_int_equal(p.limits.memory_bytes, 512ULL << 20);
	assert_int_equal(p.limits.pids, 64);
	assert_int_equal(p.limits.cpus_milli, 1000);
	assert_int_equal(p.limits.tmp_bytes, 64ULL << 20);
	assert_int_equal(p.limits.out_bytes, 64ULL << 20);
	assert_int_equal(p.limits.output_bytes, 1ULL << 20);
	assert_int_equal(p.limits.input_bytes, 64ULL << 20);
	assert_int_equal(p.limits.shm_bytes, 64ULL << 20);
	assert_int_equal(p.net, SBX_NET_NONE);
	assert_string_equal(p.ro[0], "/usr");
	assert_true(p.n_env >= 3);
	free(text);
}

static void values(void **state)
{
	struct sbx_policy p;
	(void)state;
	assert_int_equal(parse("[limits]\nshm_size = 0\n", &p), -1);
	assert_int_equal(parse("[limits]\nshm_size = 8M\n", &p), 0);
	assert_int_equal(p.limits.shm_bytes, 8ULL << 20);
	assert_int_equal(parse("[limits]\nmemory = 1G  # comment\ncpus = 0.5\npids = 10\n"
			       "[network]\nmode = loopback\n[seccomp]\nprofile = strict\n"
			       "[filesystem]\nro = /usr /opt/data\n[env]\nset = A=1 B=x=y\n", &p), 0);
	assert_int_equal(p.limits.memory_bytes, 1ULL << 30);
	assert_int_equal(p.limits.cpus_milli, 500);
	assert_int_equal(p.limits.pids, 10);
	assert_int_equal(p.net, SBX_NET_LOOPBACK);
	assert_int_equal(p.seccomp, SBX_SECCOMP_STRICT);
	assert_int_equal(p.n_ro, 2);
	assert_string_equal(p.ro[1], "/opt/data");
	assert_int_equal(p.n_env, 2);
	assert_string_equal(p.env[1], "B=x=y");
	/* unset keys keep the defaults */
	assert_int_equal(p.limits.wall_ms, 30000);
}

static void errors_name_file_and_line(void **state)
{
	struct sbx_policy p;
	(void)state;
	assert_int_equal(parse("[limits]\nmemory = 1G\nmemroy = 2G\n", &p), -1);
	assert_string_equal(err, "t.policy:3: unknown key 'memroy' in [limits]");
	assert_int_equal(parse("[limits]\n\nwall_time = 10 parsecs\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:3: wall_time: '10 parsecs' is not a duration"));
	assert_int_equal(parse("[limits]\nmemory = lots\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:2: memory: 'lots' is not a size"));
	assert_int_equal(parse("[bogus]\nx = 1\n", &p), -1);
	assert_string_equal(err, "t.policy:2: unknown section [bogus]");
	assert_int_equal(parse("[limits]\npids = 5\npids = 500\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:3: key 'pids' given twice"));
	assert_int_equal(parse("[network]\nmode = internet\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:2:"));
	assert_int_equal(parse("[filesystem]\nro = usr\n", &p), -1);
	assert_non_null(strstr(err, "not a normalised absolute path"));
	assert_int_equal(parse("[filesystem]\nro = /usr/../etc\n", &p), -1);
	assert_int_equal(parse("[limits]\nmemory = 0\n", &p), -1);
	assert_int_equal(parse("garbage line\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:1:"));
	assert_int_equal(parse("[limits]\nmax_attempts = 11\n", &p), -1);
	assert_int_equal(parse("[limits]\ncpus = 1s\n", &p), -1);
}

/* A host path the sandbox's own mounts would hide, or that would hide the
 * sandbox's generated files, is refused naming the line (it used to be
 * skipped silently for /tmp: the new root is built there). */
static void sandbox_paths_refused(void **state)
{
	struct sbx_policy p;
	static const char *const inside[] = {"/tmp", "/tmp/data", "/out/x", "/proc/1", "/dev/shm", "/work",
					     "/in/a", "/code", "/sbx/python"};
	static const char *const above[] = {"/", "/etc", "/etc/passwd", "/etc/resolv.conf"};
	char text[128];
	(void)state;
	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
		snprintf(text, sizeof(text), "[filesystem]\nro = /usr\nrw = /var/tmp/x %s\n", inside[i]);
		assert_int_equal(parse(text, &p), -1);
		assert_non_null(strstr(err, "t.policy:3: rw: '"));
		assert_non_null(strstr(err, "is inside the sandbox's own /"));
	}
	for (size_t i = 0; i < sizeof(above) / sizeof(above[0]); i++) {
		snprintf(text, sizeof(text), "[filesystem]\nro = %s\n", above[i]);
		assert_int_equal(parse(text, &p), -1);
		assert_non_null(strstr(err, "t.policy:2: ro: '"));
		assert_non_null(strstr(err, "would hide the sandbox's own /"));
	}
	/* other spellings of the same paths (the review's bypass: "/etc/" and
	 * "//etc" passed the checks above and bound the host's /etc over the
	 * sandbox's generated files) are refused as not normalised */
	static const char *const spelled[] = {"/etc/", "//etc", "/tmp/", "//tmp", "//proc", "/usr//lib",
					      "/etc/.", "/etc/./ssl", "/usr/lib/..", "/usr/../etc", "usr"};
	for (size_t i = 0; i < sizeof(spelled) / sizeof(spelled[0]); i++) {
		snprintf(text, sizeof(text), "[filesystem]\nro = /usr %s\n", spelled[i]);
		assert_int_equal(parse(text, &p), -1);
		assert_non_null(strstr(err, "t.policy:2: ro: '"));
		assert_non_null(strstr(err, "is not a normalised absolute path"));
	}
	/* neighbours by name only are fine, and so are dots inside a name */
	assert_int_equal(parse("[filesystem]\nro = /usr/lib/x.d /opt/.hidden /srv/..data\n", &p), 0);
	assert_int_equal(parse("[filesystem]\nro = /tmpdata /etc/ssl /etc/passwd.d /device /var/tmp\n", &p), 0);
	assert_int_equal(p.n_ro, 5);
}

static void users_alone_restrict(void **state)
{
	struct sbx_policy p;
	(void)state;
	/* naming users without groups must not keep the default group sbx */
	assert_int_equal(parse("[policy]\nusers = alice bob\n", &p), 0);
	assert_string_equal(p.users, "alice bob");
	assert_string_equal(p.groups, "");
	assert_int_equal(parse("[policy]\nusers = alice\ngroups = staff\n", &p), 0);
	assert_string_equal(p.groups, "staff");
	assert_int_equal(parse("[limits]\npids = 3\n", &p), 0);
	assert_string_equal(p.groups, "sbx");
}

static void long_line_rejected(void **state)
{
	struct sbx_policy p;
	char text[3000] = "[policy]\ndescription = ";
	(void)state;
	memset(text + strlen(text), 'a', 1500);
	assert_int_equal(parse(text, &p), -1);
	assert_non_null(strstr(err, "t.policy:2: line longer"));
}

static void names(void **state)
{
	(void)state;
	assert_true(sbx_valid_name("default"));
	assert_true(sbx_valid_name("py-3_data"));
	assert_false(sbx_valid_name(""));
	assert_false(sbx_valid_name("-x"));
	assert_false(sbx_valid_name("../etc"));
	assert_false(sbx_valid_name("Upper"));
	assert_false(sbx_valid_name("a/b"));
	char longname[80];
	memset(longname, 'a', 65);
	longname[65] = '\0';
	assert_false(sbx_valid_name(longname));
	longname[64] = '\0';
	assert_true(sbx_valid_name(longname));
}

static void tighten_only(void **state)
{
	struct sbx_limits eff = {.wall_ms = 30000, .memory_bytes = 512ULL << 20, .pids = 64};
	struct sbx_limits req = {.wall_ms = 2000, .pids = 10};
	(void)state;
	assert_int_equal(sbx_limits_tighten(&eff, &req, "p", err, sizeof(err)), 0);
	assert_int_equal(eff.wall_ms, 2000);
	assert_int_equal(eff.pids, 10);
	assert_int_equal(eff.memory_bytes, 512ULL << 20); /* not asked: unchanged */
	req = (struct sbx_limits){.memory_bytes = 1ULL << 30};
	assert_int_equal(sbx_limits_tighten(&eff, &req, "p", err, sizeof(err)), -1);
	assert_string_equal(err, "--memory 1G exceeds policy p's memory 512M");
	assert_int_equal(eff.memory_bytes, 512ULL << 20);
}

static void input_size(void **state)
{
	struct sbx_policy p;
	struct sbx_limits req = {.input_bytes = 1};
	(void)state;
	assert_int_equal(parse("[limits]\npids = 3\n", &p), 0);
	assert_int_equal(p.limits.input_bytes, 64ULL << 20); /* default */
	assert_int_equal(parse("[limits]\ninput_size = 1K\n", &p), 0);
	assert_int_equal(p.limits.input_bytes, 1024);
	assert_int_equal(parse("[limits]\ninput_size = 16G\n", &p), 0);
	assert_int_equal(parse("[limits]\ninput_size = 17G\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:2: input_size: '17G' is above the most sbx accepts (16G)"));
	assert_int_equal(parse("[limits]\ninput_size = big\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:2: input_size: 'big' is not a size"));
	assert_int_equal(parse("[limits]\ninput_size = 0\n", &p), -1);
	/* tighten-only, like every other limit */
	assert_int_equal(parse("[limits]\ninput_size = 1K\n", &p), 0);
	assert_int_equal(sbx_limits_tighten(&p.limits, &req, "p", err, sizeof(err)), 0);
	assert_int_equal(p.limits.input_bytes, 1);
	req.input_bytes = 2;
	assert_int_equal(sbx_limits_tighten(&p.limits, &req, "p", err, sizeof(err)), -1);
	/* sessions: no unless the policy says yes (old policies stay closed) */
	assert_int_equal(parse("[limits]\npids = 3\n", &p), 0);
	assert_int_equal(p.sessions, 0);
	assert_int_equal(parse("[filesystem]\nsessions = yes\n", &p), 0);
	assert_int_equal(p.sessions, 1);
	assert_int_equal(parse("[filesystem]\nsessions = no\n", &p), 0);
	assert_int_equal(p.sessions, 0);
	assert_int_equal(parse("[filesystem]\nsessions = maybe\n", &p), -1);
	assert_non_null(strstr(err, "t.policy:2: sessions: 'maybe' is not one of yes, no"));
}

/* group membership for allows(): ctx is a space-separated list */
static int member(const char *group, void *ctx)
{
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", (const char *)ctx);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (strcmp(tok, group) == 0)
			return 1;
	return 0;
}

static void allows(void **state)
{
	struct sbx_policy p;
	(void)state;
	assert_int_equal(parse("[limits]\npids = 3\n", &p), 0); /* groups = sbx */
	assert_true(sbx_policy_allows(&p, "alice", member, "sbx"));
	assert_false(sbx_policy_allows(&p, "alice", member, "staff"));
	assert_int_equal(parse("[policy]\nusers = alice bob\n", &p), 0);
	assert_true(sbx_policy_allows(&p, "bob", member, ""));
	assert_false(sbx_policy_allows(&p, "bo", member, "sbx"));   /* whole words only */
	assert_false(sbx_policy_allows(&p, "carol", member, "sbx")); /* no default group back */
	assert_int_equal(parse("[policy]\nusers = alice\ngroups = staff\n", &p), 0);
	assert_true(sbx_policy_allows(&p, "carol", member, "staff"));
	assert_false(sbx_policy_allows(&p, "carol", member, "sbx"));
	assert_int_equal(parse("[policy]\ngroups =\n", &p), 0);
	assert_true(sbx_policy_allows(&p, "anyone", member, ""));
}

static void config(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\ndefault_policy = default\n[language.python]\ncommand = /usr/bin/python3 -I -B\n"
			"extension = .py\n[language.sh]\ncommand = /bin/sh\n";
	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	const struct sbx_language *l = sbx_config_language(&c, "python");
	assert_non_null(l);
	assert_int_equal(l->argc, 3);
	assert_string_equal(l->argv[1], "-I");
	assert_null(sbx_config_language(&c, "ruby"));
	t = "[language.x]\ncommand = python3\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: command: 'python3' must start with an absolute path"));
	t = "[language.x]\nextension = .x\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "has no command"));
}

/* [language.NAME] env and search_path, and the environment composed from
 * them, the policy and the CPU count (common/runenv.h). */
static void language_env(void **state)
{
	static struct sbx_config c;
	static struct sbx_runenv e;
	struct sbx_policy p;
	const char *t = "[language.python]\ncommand = /usr/bin/python3 -B\n"
			"search_path = PYTHONPATH=/sbx/python:/work\nenv = PIP_NO_INDEX=1 A=lang\n"
			"live_driver = /sbx/python/sbx_live.py\n[language.sh]\ncommand = /bin/sh\n";
	size_t i;
	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	const struct sbx_language *l = sbx_config_language(&c, "python");
	assert_string_equal(l->search_path, "PYTHONPATH=/sbx/python:/work");
	assert_int_equal(l->n_env, 2);
	/* a live driver under /sbx, or none (no live sessions) */
	assert_string_equal(l->live_driver, "/sbx/python/sbx_live.py");
	assert_string_equal(sbx_config_language(&c, "sh")->live_driver, "");
	/* the policy's value of the search variable goes after sbx's; its
	 * own A and OMP_NUM_THREADS win over the language's and the CPU count */
	assert_int_equal(parse("[env]\nset = HOME=/tmp PYTHONPATH=/opt/lab A=policy OMP_NUM_THREADS=4\n", &p), 0);
	sbx_runenv_build(&e, &p, l, 2);
	assert_string_equal(e.envp[0], "HOME=/tmp");
	assert_string_equal(e.envp[1], "PYTHONPATH=/sbx/python:/work:/opt/lab");
	assert_string_equal(e.envp[2], "A=policy");
	assert_string_equal(e.envp[3], "OMP_NUM_THREADS=4");
	assert_string_equal(e.envp[4], "PIP_NO_INDEX=1");
	for (i = 0; e.envp[i] != NULL; i++)
		assert_null(strstr(e.envp[i], "OMP_NUM_THREADS=2"));
	assert_int_equal(i, e.n);
	assert_int_equal(e.n, 5 + sbx_n_cpu_vars - 1);
	assert_string_equal(e.envp[5], "OPENBLAS_NUM_THREADS=2");
	/* no policy value: the directories alone; an empty one adds no "" */
	assert_int_equal(parse("[env]\nset = PYTHONPATH=\n", &p), 0);
	sbx_runenv_build(&e, &p, l, 1);
	assert_string_equal(e.envp[0], "PYTHONPATH=/sbx/python:/work");
	assert_int_equal(parse("[env]\nset = HOME=/tmp\n", &p), 0);
	sbx_runenv_build(&e, &p, l, 1);
	assert_string_equal(e.envp[1], "PYTHONPATH=/sbx/python:/work");
	sbx_runenv_build(&e, &p, NULL, 3);
	assert_string_equal(e.envp[1], "OMP_NUM_THREADS=3");
	/* rejects, each naming the key */
	static const char *const bad[] = {
		"search_path = /sbx/python", "search_path = PYTHONPATH=sbx", "search_path = PYTHONPATH=/a::/b",
		"search_path = PYTHONPATH=/a:", "search_path = PYTHONPATH=/a:b", "search_path = 1X=/a",
		"search_path = P=/a/../b", "env = NOEQUALS", "env = =x", "env = A-B=1",
		"env = A=1 B=2 C=3 D=4 E=5 F=6 G=7 H=8 I=9",
		"live_driver = /usr/share/sbx/x.py", "live_driver = /sbx/../etc/x", "live_driver = /sbx/a b",
		"live_driver = sbx/x.py",
	};
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "[language.x]\ncommand = /bin/x\n%s\n", bad[i]);
		assert_int_equal(sbx_config_parse("sbx.conf", text, strlen(text), &c, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "sbx.conf:3: "));
	}
	assert_int_equal(parse("[env]\nset = 9A=1\n", &p), -1);
}

/* The checkpoint triggers: defaults, 0 (off), and the rejects. */
static void config_checkpoints(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\n";

	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.checkpoint_records, 100);
	assert_int_equal(c.checkpoint_seconds, 600);
	t = "[sbx]\ncheckpoint_records = 0\ncheckpoint_seconds = 86400\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.checkpoint_records, 0);
	assert_int_equal(c.checkpoint_seconds, 86400);
	t = "[sbx]\ncheckpoint_records = -1\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: checkpoint_records: '-1' is not a whole number"));
	t = "[sbx]\ncheckpoint_seconds = 10s\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: checkpoint_seconds: '10s'"));
	t = "[sbx]\ncheckpoint_seconds = 99999999999999999999999\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
}

/* The checkpoint witnesses (recorder/ckptwitness.c, sbx.conf(5)). */
static void config_witness(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\n";

	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_string_equal(c.audit_witness_dir, "");
	assert_string_equal(c.audit_witness_command, "");
	t = "[sbx]\naudit_witness_dir = /var/lib/sbx-witness\naudit_witness_command = /usr/local/sbin/ship -t 3\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_string_equal(c.audit_witness_dir, "/var/lib/sbx-witness");
	assert_string_equal(c.audit_witness_command, "/usr/local/sbin/ship -t 3");
	t = "[sbx]\naudit_witness_dir = witness\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: audit_witness_dir: 'witness' is not an absolute path"));
	t = "[sbx]\naudit_witness_dir = /var/../etc\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	t = "[sbx]\naudit_witness_command = ship\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: audit_witness_command: 'ship' must start with an absolute path"));
}

/* The audit-log bounds of one user (helper/quota.c, sbx.conf(5)). */
static void config_audit_quota(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\n";

	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_requests_per_minute, SBX_MAX_REQUESTS_PER_MINUTE);
	assert_int_equal(c.audit_code_per_day, SBX_AUDIT_CODE_PER_DAY);
	t = "[sbx]\nmax_requests_per_minute = 5\naudit_code_per_day = 64K\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_requests_per_minute, 5);
	assert_int_equal(c.audit_code_per_day, 65536);
	t = "[sbx]\nmax_requests_per_minute = 0\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: max_requests_per_minute: '0' is not a whole number from 1"));
	t = "[sbx]\n\naudit_code_per_day = lots\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:3: audit_code_per_day: 'lots' is not a size"));
	t = "[sbx]\naudit_code_per_day = 0\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
}

/* max_runs_per_user: default, range, rejects (sbx.conf(5)). */
static void config_runs_per_user(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\n";

	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_runs_per_user, SBX_MAX_RUNS_PER_USER);
	t = "[sbx]\nmax_runs_per_user = 1\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_runs_per_user, 1);
	t = "[sbx]\nmax_runs_per_user = 4096\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_runs_per_user, 4096);
	t = "[sbx]\nmax_runs_per_user = 0\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: max_runs_per_user: '0' is not a whole number from 1 to 4096"));
	t = "[sbx]\nmax_runs_per_user = 4097\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	t = "[sbx]\nmax_runs_per_user = many\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "max_runs_per_user: 'many' is not a whole number"));
}

static void config_cgroup_nest(void **state)
{
	struct sbx_config c;
	const char *t = "[sbx]\n";

	(void)state;
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_string_equal(c.cgroup_nest, "/slurm /slurm_*");
	/* Slurm's two v1 layouts, at and below the job's level */
	assert_true(sbx_cgroup_nest_matches(c.cgroup_nest, "/slurm/uid_1001/job_7/step_0/task_0"));
	assert_true(sbx_cgroup_nest_matches(c.cgroup_nest, "/slurm_vm/uid_1001/job_7/step_0"));
	assert_true(sbx_cgroup_nest_matches(c.cgroup_nest, "/slurm"));
	/* a component boundary, never a string prefix */
	assert_false(sbx_cgroup_nest_matches(c.cgroup_nest, "/slurmfoo/x"));
	assert_false(sbx_cgroup_nest_matches(c.cgroup_nest, "/user.slice/slurm/x"));
	assert_false(sbx_cgroup_nest_matches(c.cgroup_nest, "/"));
	/* '*' does not cross a '/' (FNM_PATHNAME) */
	assert_false(sbx_cgroup_nest_matches("/a*", "/b/a"));
	assert_true(sbx_cgroup_nest_matches("/batch/*/job_*", "/batch/n1/job_3/t"));
	assert_false(sbx_cgroup_nest_matches("/batch/*/job_*", "/batch/n1"));
	t = "[sbx]\ncgroup_nest = none\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_string_equal(c.cgroup_nest, "");
	assert_false(sbx_cgroup_nest_matches(c.cgroup_nest, "/slurm/uid_1"));
	t = "[sbx]\ncgroup_nest = /batch  /site_*\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), 0);
	assert_true(sbx_cgroup_nest_matches(c.cgroup_nest, "/site_a/j"));
	t = "[sbx]\ncgroup_nest = slurm\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sbx.conf:2: cgroup_nest: 'slurm' is not an absolute cgroup path"));
	t = "[sbx]\ncgroup_nest = /a/../b\n";
	assert_int_equal(sbx_config_parse("sbx.conf", t, strlen(t), &c, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes), cmocka_unit_test(durations), cmocka_unit_test(default_policy_file),
		cmocka_unit_test(values), cmocka_unit_test(errors_name_file_and_line),
		cmocka_unit_test(long_line_rejected), cmocka_unit_test(sandbox_paths_refused),
		cmocka_unit_test(users_alone_restrict), cmocka_unit_test(names), cmocka_unit_test(tighten_only),
		cmocka_unit_test(config), cmocka_unit_test(input_size), cmocka_unit_test(allows),
		cmocka_unit_test(config_checkpoints),
		cmocka_unit_test(config_witness), cmocka_unit_test(config_audit_quota), cmocka_unit_test(config_runs_per_user), cmocka_unit_test(config_cgroup_nest), cmocka_unit_test(language_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
