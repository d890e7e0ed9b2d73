/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: what sbx-audit reads as C2SP text from elsewhere: a
 * signed note (auditlog/checkpoint.c sbx_checkpoint_open and _parse), a
 * --witness file (audit/witness.c: syslog lines and notes, mixed) and a
 * verifier key (audit/vkey.c). The input is any of them. Whatever is
 * accepted must keep its promise: an origin that is a valid key name, a
 * note's parse agreeing with its open, a verifier key that formats back
 * to one that parses to the same name and key.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "vkey.h"
#include "witness.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char pk[crypto_sign_PUBLICKEYBYTES] = {1, 2, 3};
	struct sbx_checkpoint cp, cp2;
	struct witness w = {0};
	char name[SBX_ORIGIN_MAX + 1], vk[VKEY_MAX], name2[SBX_ORIGIN_MAX + 1];
	unsigned char key[crypto_sign_PUBLICKEYBYTES], key2[crypto_sign_PUBLICKEYBYTES];
	char err[256];
	size_t i;

	if (sbx_checkpoint_open((const char *)data, size, pk, &cp, err, sizeof(err)) == 0) {
		REQUIRE(sbx_note_name_ok(cp.origin));
		REQUIRE(sbx_checkpoint_parse((const char *)data, size, &cp2, NULL, 0) == 0);
		REQUIRE(cp2.size == cp.size && memcmp(cp2.root, cp.root, 32) == 0);
	}
	if (sbx_checkpoint_parse((const char *)data, size, &cp, NULL, 0) == 0)
		REQUIRE(memchr(cp.origin, '\0', sizeof(cp.origin)) != NULL);
	if (witness_parse(&w, (const char *)data, size, pk, NULL) == 0) {
		for (i = 0; i < w.n; i++)
			REQUIRE(sbx_note_name_ok(w.cps[i].origin));
	}
	witness_free(&w);
	if (vkey_parse((const char *)data, size, name, key, err, sizeof(err)) == 0) {
		REQUIRE(sbx_note_name_ok(name));
		REQUIRE(vkey_format(name, key, vk) == 0);
		REQUIRE(vkey_parse(vk, strlen(vk), name2, key2, err, sizeof(err)) == 0);
		REQUIRE(strcmp(name, name2) == 0 && memcmp(key, key2, sizeof(key)) == 0);
	}
	return 0;
}
