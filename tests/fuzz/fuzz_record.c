/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the audit record decoder (auditlog/record.c and the
 * extension fields of auditlog/recfield.c), which sbx-audit runs on blobs
 * read back from a database anyone with write access to the file may have
 * edited. The input is one blob. What the decoder accepts must keep what
 * record.h promises: strings NUL-terminated within their arrays, counts in
 * range, one encoding per record (re-encoding gives the same bytes; a
 * version 1 blob differs only in its version byte), extension fields that
 * iterate, render as JSON and project into columns.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "auditdb.h"
#include "record.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static void terminated(const char *s, size_t size)
{
	REQUIRE(memchr(s, '\0', size) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_record r;
	struct sbx_cols c;
	const struct sbx_field_def *f;
	const unsigned char *p;
	unsigned char *b;
	size_t len, off = 0, n, i;
	unsigned tag, last = 0;
	json_t *j;
	char *dump;

	if (sbx_record_decode(data, size, &r, NULL, 0) < 0)
		return 0;
	terminated(r.run_id, sizeof(r.run_id));
	terminated(r.user, sizeof(r.user));
	terminated(r.stderr_excerpt, sizeof(r.stderr_excerpt));
	REQUIRE(r.argv_len <= sizeof(r.argv));
	REQUIRE(r.n_artifacts <= SBX_REC_MAX_ARTIFACTS);
	for (i = 0; i < r.n_artifacts; i++)
		terminated(r.artifacts[i].name, sizeof(r.artifacts[i].name));
	REQUIRE(sbx_record_kind_name(r.kind) != NULL);

	REQUIRE(sbx_record_encode(&r, &b, &len, NULL, 0) == 0);
	REQUIRE(len == size);
	REQUIRE(memcmp(b, data, 4) == 0 && memcmp(b + 5, data + 5, size - 5) == 0);
	REQUIRE(data[4] == 1 || data[4] == 2);
	free(b);

	while (sbx_rec_next(&r, &off, &tag, &f, &p, &n)) {
		REQUIRE(tag > last);
		last = tag;
		if (f != NULL && (f->type == SBX_FT_LIST || f->type == SBX_FT_OBJ))
			REQUIRE(sbx_rec_items(f, p, n, NULL, NULL) >= 0);
	}
	REQUIRE(off == r.ext.len);
	j = json_object();
	REQUIRE(j != NULL && sbx_rext_json(&r, j) == 0);
	dump = json_dumps(j, JSON_COMPACT);
	REQUIRE(dump != NULL);
	free(dump);
	json_decref(j);
	REQUIRE(sbx_record_columns(&r, &c, NULL, 0) == 0);
	sbx_cols_free(&c);
	sbx_record_free(&r);
	return 0;
}
