/* SPDX-License-Identifier: ISC */
/*
 * The central store's parsers and cosignatures (audit/shipfile.c,
 * keyring.c, cosign.c, hosts.c): what each accepts and each way it
 * refuses, with the line named; a cosignature verifies under its name and
 * key only, and not after any byte of the note changed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cosign.h"
#include "hosts.h"
#include "keyring.h"
#include "shipfile.h"
#include "vkey.h"

static void test_ship(void **state)
{
	char err[256], ok[512], *b, *s;
	unsigned char blob[5] = "SBXR\2", sig[64] = {7};
	struct ship sh;

	(void)state;
	b = ship_b64(blob, sizeof(blob));
	s = ship_b64(sig, sizeof(sig));
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h.example/sbx\nrecord 3 %s %s - -\nrecord 4 %s %s - -\n"
		 "end 2 0\n", b, s, b, s);
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), 0);
	assert_string_equal(sh.origin, "h.example/sbx");
	assert_int_equal(sh.nr, 2);
	assert_int_equal(sh.r[1].seq, 4);
	assert_memory_equal(sh.r[0].sig, sig, 64);
	assert_null(sh.r[0].code);
	ship_free(&sh);
	/* an empty code text (a START of sbx run -c ''): the empty word, not
	 * "none" (exporting the lead's test log was refused on it) */
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h\nrecord 3 %s %s  -\nend 1 0\n", b, s);
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), 0);
	assert_non_null(sh.r[0].code);
	assert_int_equal(sh.r[0].code_len, 0);
	assert_null(sh.r[0].policy);
	ship_free(&sh);
	/* cut short: no final newline */
	assert_int_equal(ship_parse(ok, strlen(ok) - 1, &sh, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cut short"));
	/* a count that does not match */
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h\nrecord 3 %s %s - -\nend 2 0\n", b, s);
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 3: the end line does not count the 1 records"));
	/* a gap, a short signature, text after the end, another format */
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h\nrecord 3 %s %s - -\nrecord 5 %s %s - -\nend 2 0\n", b, s, b, s);
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 3: record 5 does not follow record 3"));
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h\nrecord 3 %s %s - -\nend 1 0\n", b, b);
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "signature"));
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 h\nend 0 0\nx\n");
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 2 h\nend 0 0\n");
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	snprintf(ok, sizeof(ok), SHIP_MAGIC " 1 a+b\nend 0 0\n");
	assert_int_equal(ship_parse(ok, strlen(ok), &sh, err, sizeof(err)), -1);
	assert_int_equal(ship_parse("", 0, &sh, err, sizeof(err)), -1);
	free(b);
	free(s);
}

static void test_keyring(void **state)
{
	unsigned char pk[32], sk[64];
	char vk[VKEY_MAX], buf[2048], err[512];
	struct keyring kr;

	(void)state;
	crypto_sign_keypair(pk, sk);
	assert_int_equal(vkey_format("a.example/sbx", pk, vk), 0);
	snprintf(buf, sizeof(buf), "# hosts\n\n%s\r\n", vk);
	assert_int_equal(keyring_parse(buf, strlen(buf), &kr, err, sizeof(err)), 0);
	assert_int_equal(kr.n, 1);
	assert_memory_equal(keyring_find(&kr, "a.example/sbx")->pk, pk, 32);
	assert_null(keyring_find(&kr, "b.example/sbx"));
	keyring_free(&kr);
	snprintf(buf, sizeof(buf), "%s\n%s\n", vk, vk);
	assert_int_equal(keyring_parse(buf, strlen(buf), &kr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2: origin a.example/sbx already has a key (line 1)"));
	vk[strlen(vk) - 2] ^= 1; /* the key no longer matches its hash */
	snprintf(buf, sizeof(buf), "%s\n", vk);
	assert_int_equal(keyring_parse(buf, strlen(buf), &kr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1: not a C2SP verifier key"));
}

static const char note_text[] = "h.example/sbx\n5\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";

static void test_cosign(void **state)
{
	unsigned char pk[32], sk[64], hpk[32], hsk[64], opk[32], osk[64];
	struct sbx_checkpoint cp;
	char note[SBX_NOTE_MAX], *c, vk[VKEY_MAX];
	uint64_t t = 0;
	size_t i, len;

	(void)state;
	crypto_sign_keypair(pk, sk);
	crypto_sign_keypair(hpk, hsk);
	crypto_sign_keypair(opk, osk);
	memset(&cp, 0, sizeof(cp));
	snprintf(cp.origin, sizeof(cp.origin), "h.example/sbx");
	cp.size = 5;
	assert_true(sbx_checkpoint_sign(&cp, hsk, note) > 0);
	c = cosign_note(note, strlen(note), "w.example/w", sk, 1679315147);
	assert_non_null(c);
	len = strlen(c);
	assert_int_equal(cosign_ok(c, len, "w.example/w", pk, &t), 1);
	assert_int_equal(t, 1679315147);
	/* the host's signature still verifies with the witness line after it */
	assert_int_equal(sbx_checkpoint_open(c, len, hpk, &cp, NULL, 0), 0);
	assert_int_equal(cosign_ok(c, len, "w.example/w", opk, &t), 0);
	assert_int_equal(cosign_ok(c, len, "w.example/x", pk, &t), 0);
	assert_int_equal(cosign_ok(note, strlen(note), "w.example/w", pk, &t), 0);
	/* any byte of the body or of the cosignature line (not of the host's
	 * signature line, which the cosignature does not cover) */
	for (i = 0; i < len; i++) {
		if (i >= (size_t)(strstr(note, "\n\n") - note) + 1 && i < strlen(note))
			continue;
		c[i] ^= 0x01;
		assert_int_equal(cosign_ok(c, len, "w.example/w", pk, &t), 0);
		c[i] ^= 0x01;
	}
	free(c);
	/* a note without a signature block, a bad name */
	assert_null(cosign_note(note_text, strlen(note_text), "w.example/w", sk, 1));
	assert_null(cosign_note(note, strlen(note), "w w", sk, 1));
	/* the verifier key: type 0x04, its hash the key id */
	assert_int_equal(cosign_vkey("w.example/w", pk, vk), 0);
	{
		unsigned char key[40], id[4];
		size_t got = 0;
		const char *k = strchr(strchr(vk, '+') + 1, '+') + 1;
		char hex[9];
		assert_int_equal(sodium_base642bin(key, sizeof(key), k, strlen(k), NULL, &got, NULL,
						   sodium_base64_VARIANT_ORIGINAL), 0);
		assert_int_equal(got, 33);
		assert_int_equal(key[0], 0x04);
		assert_memory_equal(key + 1, pk, 32);
		cosign_key_id("w.example/w", pk, id);
		snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", id[0], id[1], id[2], id[3]);
		assert_non_null(strstr(vk, hex));
	}
}

static void test_dirnames(void **state)
{
	char d[HOST_DIR_MAX], o[SBX_ORIGIN_MAX + 1];

	(void)state;
	host_dirname("host.example/sbx", d);
	assert_string_equal(d, "host.example%2Fsbx");
	assert_int_equal(host_origin(d, o), 0);
	assert_string_equal(o, "host.example/sbx");
	host_dirname("..", d);
	assert_string_equal(d, "%2E.");
	host_dirname("h\303\251/x", d);
	assert_string_equal(d, "h%C3%A9%2Fx");
	assert_int_equal(host_origin("a%2fb", o), -1); /* not the canonical spelling */
	assert_int_equal(host_origin("a/b", o), -1);
	assert_int_equal(host_origin("a%00", o), -1);
	assert_int_equal(host_origin("", o), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ship),
		cmocka_unit_test(test_keyring),
		cmocka_unit_test(test_cosign),
		cmocka_unit_test(test_dirnames),
	};
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
