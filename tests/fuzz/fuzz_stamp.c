/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the image stamp parser (common/imgstamp.c), which runs
 * as root in the helper before every run with an image. An accepted stamp
 * must be canonical: formatting what was parsed gives back the input byte
 * for byte, and every string field is NUL-terminated and valid.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imgstamp.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_image_stamp s;
	char err[256], out[SBX_IMAGE_STAMP_MAX + 1];
	/* exactly the input's size: ASan sees a read past the end */
	char *text = malloc(size ? size : 1);
	int n;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	err[0] = '\0';
	if (sbx_image_stamp_parse(text, size, &s, err, sizeof(err)) == 0) {
		REQUIRE(sbx_valid_name(s.name));
		REQUIRE(sbx_valid_digest(s.digest));
		REQUIRE(strlen(s.file_sha256) == 64);
		REQUIRE(s.mtime_nsec < 1000000000u && s.ctime_nsec < 1000000000u);
		n = sbx_image_stamp_format(&s, out, sizeof(out));
		REQUIRE(n >= 0 && (size_t)n == size && memcmp(out, text, size) == 0);
	} else {
		REQUIRE(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
	}
	free(text);
	return 0;
}
