/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: what a central store reads from hosts and from its
 * administrators (issue 21): a records export (audit/shipfile.c), a
 * keyring (audit/keyring.c), a cosigned note (audit/cosign.c) and a
 * store directory name (audit/hosts.c). Whatever is accepted must keep its
 * promise: an export's records consecutive and counted, its origin a key
 * name; a keyring's every key formatting back to the same line's name and
 * key, no origin twice; a directory name mapping back to itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cosign.h"
#include "hosts.h"
#include "keyring.h"
#include "shipfile.h"
#include "vkey.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char pk[32] = {1, 2, 3};
	char err[512], vk[VKEY_MAX], name[SBX_ORIGIN_MAX + 1], dir[HOST_DIR_MAX];
	char origin[SBX_ORIGIN_MAX + 1], *s;
	unsigned char key[32];
	struct keyring kr;
	struct ship sh;
	uint64_t t;
	size_t i, j;

	if (ship_parse((const char *)data, size, &sh, err, sizeof(err)) == 0) {
		REQUIRE(sbx_note_name_ok(sh.origin));
		for (i = 1; i < sh.nr; i++)
			REQUIRE(sh.r[i].seq == sh.r[i - 1].seq + 1);
		for (i = 0; i < sh.nc; i++)
			REQUIRE(strlen(sh.c[i].note) == sh.c[i].len);
		ship_free(&sh);
	}
	if (keyring_parse((const char *)data, size, &kr, err, sizeof(err)) == 0) {
		for (i = 0; i < kr.n; i++) {
			REQUIRE(vkey_format(kr.e[i].origin, kr.e[i].pk, vk) == 0);
			REQUIRE(vkey_parse(vk, strlen(vk), name, key, err, sizeof(err)) == 0);
			REQUIRE(strcmp(name, kr.e[i].origin) == 0 && memcmp(key, kr.e[i].pk, 32) == 0);
			for (j = 0; j < i; j++)
				REQUIRE(strcmp(kr.e[j].origin, kr.e[i].origin) != 0);
			REQUIRE(keyring_find(&kr, kr.e[i].origin) == &kr.e[i]);
		}
		keyring_free(&kr);
	}
	(void)cosign_ok((const char *)data, size, "witness.example/w", pk, &t);
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (strlen(s) < HOST_DIR_MAX && host_origin(s, origin) == 0) {
		host_dirname(origin, dir);
		REQUIRE(strcmp(dir, s) == 0);
	}
	free(s);
	return 0;
}
