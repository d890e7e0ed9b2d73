/* SPDX-License-Identifier: ISC */
/* Curated images: the policy key, the stamp the helper reads as root, and
 * the tree listing the digest is computed over (docs/image-digest.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <sodium.h>

#include "dpkgdb.h"
#include "image.h"
#include "imgstamp.h"
#include "policy.h"

static char err[SBX_ERR_LEN];

static const char good[] =
	"sbx-image-stamp 1\n"
	"name tiny\n"
	"digest sha256:7e93ffdc381fad25fe232cbe7b11288bd3fefc6d06cf5cdcfda35b63e3411920\n"
	"file-sha256 00a59cfd2ae567d3ac555dccbe8b4d2ba350837e6bdb1c54f8c94dcbfbe28b10\n"
	"ino 11060369\n"
	"size 78045184\n"
	"mtime 1796134310.067926359\n"
	"ctime 1796134329.000000001\n"
	"root-ino 36\n";

static int parse_text(const char *text, struct sbx_image_stamp *s)
{
	err[0] = '\0';
	return sbx_image_stamp_parse(text, strlen(text), s, err, sizeof(err));
}

static void stamp_roundtrip(void **state)
{
	struct sbx_image_stamp s, t;
	char buf[SBX_IMAGE_STAMP_MAX];

	(void)state;
	assert_int_equal(parse_text(good, &s), 0);
	assert_string_equal(s.name, "tiny");
	assert_int_equal(s.ino, 11060369);
	assert_int_equal(s.size, 78045184);
	assert_int_equal(s.mtime_sec, 1796134310);
	assert_int_equal(s.mtime_nsec, 67926359);
	assert_int_equal(s.ctime_nsec, 1);
	assert_int_equal(s.root_ino, 36);
	/* what sbx-image writes is exactly what the helper reads */
	assert_int_equal(sbx_image_stamp_format(&s, buf, sizeof(buf)), (int)strlen(good));
	assert_string_equal(buf, good);
	assert_int_equal(parse_text(buf, &t), 0);
	assert_memory_equal(&s, &t, sizeof(s));
	assert_int_equal(sbx_image_stamp_format(&s, buf, 20), -1);
}

/* Replace the first occurrence of from with to in good. */
static char *variant(const char *from, const char *to)
{
	static char buf[2048];
	const char *p = strstr(good, from);

	assert_non_null(p);
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - good), good, to, p + strlen(from));
	return buf;
}

static void stamp_refusals(void **state)
{
	static const struct { const char *from, *to, *why; } cases[] = {
		{"sbx-image-stamp 1", "sbx-image-stamp 2", "line 1: not 'sbx-image-stamp 1'"},
		{"name tiny", "name Tiny", "line 2: bad value for 'name'"},
		{"name tiny", "name ../x", "line 2: bad value for 'name'"},
		{"name tiny\n", "", "line 2: expected key 'name'"},
		{"digest sha256:7e", "digest sha256:7E", "line 3: bad value for 'digest'"},
		{"digest sha256:", "digest sha1:", "line 3: bad value for 'digest'"},
		{"920\n", "92\n", "line 3: bad value for 'digest'"},
		{"file-sha256 00a5", "file-sha256 0xa5", "line 4: bad value for 'file-sha256'"},
		{"ino 1106", "ino -1106", "line 5: bad value for 'ino'"},
		{"ino 1106", "ino 01106", "line 5: bad value for 'ino'"},
		{"size 78045184", "size 99999999999999999999", "line 6: bad value for 'size'"},
		{"mtime 1796134310.067926359", "mtime 1796134310.67926359", "line 7: bad value for 'mtime'"},
		{"mtime 1796134310.067926359", "mtime 1796134310", "line 7: bad value for 'mtime'"},
		{"ctime 1796134329.000000001", "ctime 1796134329.00000000x", "line 8: bad value for 'ctime'"},
		{"root-ino 36\n", "root-ino 36", "line 9: missing, unterminated or too long"},
		{"root-ino 36\n", "root-ino 36\nextra 1\n", "line 10: unexpected text after the last key"},
		{"size 78045184\nmtime", "mtime", "line 6: expected key 'size'"},
		{"ino 11060369", "ino  11060369", "line 5: bad value for 'ino'"},
	};
	struct sbx_image_stamp s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_text(variant(cases[i].from, cases[i].to), &s), -1);
		if (strcmp(err, cases[i].why) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err, cases[i].why);
	}
	/* a NUL inside, and a stamp too large */
	char nul[sizeof(good)];
	memcpy(nul, good, sizeof(good));
	nul[20] = '\0';
	assert_int_equal(sbx_image_stamp_parse(nul, sizeof(good) - 1, &s, err, sizeof(err)), -1);
	assert_int_equal(sbx_image_stamp_parse(good, SBX_IMAGE_STAMP_MAX + 1, &s, err, sizeof(err)), -1);
}

static void stamp_matches(void **state)
{
	struct sbx_image_stamp s;
	struct stat st;
	char why[256];

	(void)state;
	assert_int_equal(parse_text(good, &s), 0);
	memset(&st, 0, sizeof(st));
	st.st_ino = 11060369;
	st.st_size = 78045184;
	st.st_mtim.tv_sec = 1796134310;
	st.st_mtim.tv_nsec = 67926359;
	st.st_ctim.tv_sec = 1796134329;
	st.st_ctim.tv_nsec = 1;
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 1);
	st.st_ctim.tv_nsec = 2; /* one nanosecond is a change */
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "its inode changed at 2026-12-01 "));
	st.st_ctim.tv_nsec = 1;
	st.st_mtim.tv_sec++;
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "written to at "));
	st.st_mtim.tv_sec--;
	st.st_size++;
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 0);
	assert_string_equal(why, "its size is 78045185 bytes, built as 78045184");
	st.st_size--;
	st.st_ino = 5;
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 0);
	assert_string_equal(why, "it is another file (inode 5, built as inode 11060369)");
	/* set_file is the inverse */
	sbx_image_stamp_set_file(&s, &st);
	assert_int_equal(sbx_image_stamp_matches(&s, &st, why, sizeof(why)), 1);
}

static void digests(void **state)
{
	(void)state;
	assert_true(sbx_valid_digest("sha256:7e93ffdc381fad25fe232cbe7b11288bd3fefc6d06cf5cdcfda35b63e3411920"));
	assert_false(sbx_valid_digest("sha256:7e93ffdc381fad25fe232cbe7b11288bd3fefc6d06cf5cdcfda35b63e341192"));
	assert_false(sbx_valid_digest("sha256:7e93ffdc381fad25fe232cbe7b11288bd3fefc6d06cf5cdcfda35b63e34119200"));
	assert_false(sbx_valid_digest("7e93ffdc381fad25fe232cbe7b11288bd3fefc6d06cf5cdcfda35b63e3411920"));
	assert_false(sbx_valid_digest(NULL));
}

static void policy_key(void **state)
{
	struct sbx_policy p;
	const char *t;

	(void)state;
	memset(&p, 0, sizeof(p));
	strcpy(p.name, "t");
	t = "[limits]\npids = 3\n";
	assert_int_equal(sbx_policy_parse("t.policy", t, strlen(t), &p, err, sizeof(err)), 0);
	assert_string_equal(p.image, ""); /* no key: the host's /usr */
	t = "[filesystem]\nimage = analysis-2\n";
	assert_int_equal(sbx_policy_parse("t.policy", t, strlen(t), &p, err, sizeof(err)), 0);
	assert_string_equal(p.image, "analysis-2");
	static const char *const bad[] = {"../etc", "Analysis", "-x", "a b", "a/b", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];
		snprintf(text, sizeof(text), "[filesystem]\nimage = %s\n", bad[i]);
		assert_int_equal(sbx_policy_parse("t.policy", text, strlen(text), &p, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "t.policy:2: image: '"));
		assert_non_null(strstr(err, "is not an image name"));
	}
	t = "[filesystem]\nimage = a\nimage = b\n";
	assert_int_equal(sbx_policy_parse("t.policy", t, strlen(t), &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.policy:3: key 'image' given twice"));
}

static void escaping(void **state)
{
	char out[128];

	(void)state;
	img_escape("/usr/lib/x86_64-linux-gnu/libc.so.6", out, sizeof(out));
	assert_string_equal(out, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	img_escape("/a b%c\n\xc3\xa9~+,:=@_", out, sizeof(out));
	assert_string_equal(out, "/a%20b%25c%0A%C3%A9~+,:=@_");
	img_escape("/[x]*?'\"", out, sizeof(out));
	assert_string_equal(out, "/%5Bx%5D%2A%3F%27%22");
	/* never past the buffer: whole escapes only */
	img_escape("/    ", out, 8);
	assert_string_equal(out, "/%20%20");
}

static void packages(void **state)
{
	static const char *const ok[] = {"python3-numpy", "libc6", "g++", "python3.11-minimal",
					 "python3-numpy=1:1.24.2-1", "x2=1.0~rc1+dfsg-2"};
	static const char *const bad[] = {"Python3", "a", "-x", "py;rm", "py thon", "p=", "p=1 2",
					  "p=$(id)", ""};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(img_valid_package(ok[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (img_valid_package(bad[i]))
			fail_msg("'%s' accepted", bad[i]);
}

/* A small tree with every kind of object the listing describes. */
static void listing(void **state)
{
	char dir[] = "/tmp/sbx-test-tree.XXXXXX", path[256], digest[SBX_DIGEST_LEN + 1];
	char *text = NULL;
	size_t len = 0;
	uint64_t n = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/b", dir);
	assert_int_equal(mkdir(path, 0750), 0);
	chmod(path, 0750);
	snprintf(path, sizeof(path), "%s/b/file one", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("abc", f);
	fclose(f);
	chmod(path, 04755);
	snprintf(path, sizeof(path), "%s/a.link", dir);
	assert_int_equal(symlink("b/file one", path), 0);
	snprintf(path, sizeof(path), "%s/b-fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	chmod(path, 0600);

	f = open_memstream(&text, &len);
	assert_int_equal(img_tree_listing(dir, f, digest, &n, err, sizeof(err)), 0);
	fclose(f);
	char want[1024];
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	/* sorted by raw path bytes: "/b-fifo" ('-' 0x2d) before "/b" "/" ('/' 0x2f) children */
	snprintf(want, sizeof(want),
		 "sbx-image-tree 1\n"
		 "d 0755 %u %u /\n"
		 "l 0777 %u %u /a.link b/file%%20one\n"
		 "d 0750 %u %u /b\n"
		 "p 0600 %u %u /b-fifo\n"
		 "f 4755 %u %u /b/file%%20one 3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n",
		 uid, gid, uid, gid, uid, gid, uid, gid, uid, gid);
	assert_string_equal(text, want);
	assert_int_equal(n, 5);
	/* the digest is the SHA-256 of exactly that text */
	unsigned char md[32];
	char hex[65];
	crypto_hash_sha256(md, (const unsigned char *)text, strlen(text));
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	assert_string_equal(digest + 7, hex);
	assert_memory_equal(digest, "sha256:", 7);
	free(text);

	/* an unreadable file is an error naming it, not a silent skip */
	snprintf(path, sizeof(path), "%s/b/file one", dir);
	if (getuid() != 0) {
		chmod(path, 0);
		assert_int_equal(img_tree_listing(dir, NULL, digest, &n, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "/b/file one: Permission denied"));
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/a.link", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b-fifo", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b", dir);
	rmdir(path);
	rmdir(dir);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A dpkg database: an installed package, a multi-arch one, one removed
 * with its configuration left; a merged-/usr tree (/bin -> usr/bin). */
static void dpkg_database(void **state)
{
	char root[] = "/tmp/sbx-test-dpkg.XXXXXX", path[512], digest[72], pkg[64], ver[64];
	char *text = NULL;
	size_t len = 0;
	uint64_t count = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/usr", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/usr/bin", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bin", root);
	assert_int_equal(symlink("usr/bin", path), 0);
	snprintf(path, sizeof(path), "%s/db", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/db/info", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/db", root);
	put(path, "arch", "amd64\n");
	put(path, "status",
	    "Package: dash\nStatus: install ok installed\nArchitecture: amd64\nVersion: 0.5.12-2\n"
	    "Description: shell\n with a continuation line\n Version: 9 (in the description)\n\n"
	    "Package: gone\nStatus: deinstall ok config-files\nArchitecture: all\nVersion: 1\n\n"
	    "Package: libc6\nStatus: install ok installed\nMulti-Arch: same\nArchitecture: amd64\nVersion: 2.36-9\n");
	snprintf(path, sizeof(path), "%s/db/info", root);
	put(path, "dash.list", "/.\n/bin\n/bin/dash\n/bin/sh\n/usr/share/man/man1/dash.1.gz\n");
	put(path, "format", "1\n"); /* the multi-arch layout of info/ (libc6:amd64.list) */
	put(path, "libc6:amd64.list", "/usr/bin/ldd\n/usr/lib/x86_64-linux-gnu/libc.so.6\n");
	put(path, "gone.list", "/usr/bin/gone\n");

	snprintf(path, sizeof(path), "%s/db", root);
	assert_int_equal(sbx_dpkg_set_digest(path, digest, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	/* SHA-256 of "dash\t0.5.12-2\tamd64\nlibc6\t2.36-9\tamd64\n" */
	static const char lines[] = "dash\t0.5.12-2\tamd64\nlibc6\t2.36-9\tamd64\n";
	unsigned char md[32];
	char want[72] = "sha256:";
	crypto_hash_sha256(md, (const unsigned char *)lines, strlen(lines));
	for (int i = 0; i < 32; i++)
		snprintf(want + 7 + 2 * i, 3, "%02x", md[i]);
	assert_string_equal(digest, want);

	f = open_memstream(&text, &len);
	assert_int_equal(sbx_dpkg_bin_index(root, path, f, err, sizeof(err)), 3);
	fclose(f);
	/* /bin/dash is listed, /usr/bin/dash is where it resolves; a removed
	 * package's programs and other directories are not indexed */
	assert_string_equal(text, "/usr/bin/dash\tdash\t0.5.12-2\n/usr/bin/ldd\tlibc6\t2.36-9\n"
				  "/usr/bin/sh\tdash\t0.5.12-2\n");
	snprintf(path, sizeof(path), "%s/db/programs", root);
	put(root, "db/programs", text);
	assert_int_equal(sbx_bin_index_lookup(path, "/usr/bin/sh", pkg, sizeof(pkg), ver, sizeof(ver)), 1);
	assert_string_equal(pkg, "dash");
	assert_string_equal(ver, "0.5.12-2");
	assert_int_equal(sbx_bin_index_lookup(path, "/usr/bin/s", pkg, sizeof(pkg), ver, sizeof(ver)), 0);
	assert_int_equal(sbx_bin_index_lookup(path, "/usr/bin/gone", pkg, sizeof(pkg), ver, sizeof(ver)), 0);
	free(text);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stamp_roundtrip), cmocka_unit_test(stamp_refusals), cmocka_unit_test(stamp_matches),
		cmocka_unit_test(digests), cmocka_unit_test(policy_key), cmocka_unit_test(escaping),
		cmocka_unit_test(packages), cmocka_unit_test(listing), cmocka_unit_test(dpkg_database),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
