/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit verify-proof FILE: check offline, with only the public key,
 * a proof written by `sbx-audit prove`: the checkpoint's signature, each
 * record's leaf recomputed from its blob (RFC 6962 leaf hash), and its
 * audit path up to the checkpoint's root. The proof file is untrusted
 * input; nothing in it is believed until it verifies.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "merkle.h"

static void help(void)
{
	printf("usage: " PROG " verify-proof [--pubkey PATH] FILE\n"
	       "\n"
	       "Check a proof from " PROG " prove (FILE, or - for standard input):\n"
	       "the checkpoint note must be signed by the public key, and each\n"
	       "record blob must hash to a leaf whose audit path leads to the\n"
	       "checkpoint's root. Prints one line per record; exit 0 if all hold,\n"
	       "1 if any does not, 3 if the file or key cannot be read.\n");
}

static int unb64(const char *s, unsigned char *out, size_t cap, size_t *len)
{
	return s != NULL && sodium_base642bin(out, cap, s, strlen(s), NULL, len, NULL,
					       sodium_base64_VARIANT_ORIGINAL) == 0 ? 0 : -1;
}

static int check_one(json_t *p, const struct sbx_checkpoint *cp, size_t idx)
{
	unsigned char path[SBX_MERKLE_MAX_PATH][32], leaf[32], *blob;
	json_t *jp = json_object_get(p, "path");
	json_int_t index = json_integer_value(json_object_get(p, "leaf_index"));
	const char *b = json_string_value(json_object_get(p, "blob"));
	struct sbx_record rec;
	size_t i, n, blen = 0, hl;
	char why[200];
	int ok;

	n = json_array_size(jp);
	if (!json_is_array(jp) || n > SBX_MERKLE_MAX_PATH || index < 0 || b == NULL) {
		printf("proof %zu: FAILED: malformed\n", idx);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (unb64(json_string_value(json_array_get(jp, i)), path[i], 32, &hl) < 0 || hl != 32) {
			printf("proof %zu: FAILED: path hash %zu is not 32 bytes of base64\n", idx, i);
			return 0;
		}
	blob = out_need(malloc(strlen(b) + 1));
	if (unb64(b, blob, strlen(b) + 1, &blen) < 0) {
		free(blob);
		printf("proof %zu: FAILED: blob is not base64\n", idx);
		return 0;
	}
	sbx_audit_leaf(blob, blen, leaf);
	ok = sbx_merkle_inclusion_ok(leaf, (uint64_t)index, cp->size,
				     (const unsigned char (*)[32])path, n, cp->root);
	/* The blob names its own seq: it must be the leaf it claims to be. */
	if (sbx_record_decode(blob, blen, &rec, why, sizeof(why)) < 0) {
		printf("proof %zu: FAILED: %s\n", idx, why);
		ok = 0;
	} else {
		if (rec.seq != (uint64_t)index + 1) {
			printf("proof %zu: FAILED: record seq %" PRIu64 " at leaf index %lld\n", idx,
			       rec.seq, (long long)index);
			ok = 0;
		} else if (ok) {
			printf("OK: seq %" PRIu64 " (%s of run %s, %s) is in the checkpoint of %" PRIu64
			       " records\n", rec.seq, sbx_record_kind_name(rec.kind), rec.run_id,
			       rec.user, cp->size);
		} else {
			printf("proof %zu: FAILED: seq %" PRIu64 ": the audit path does not lead to the "
			       "checkpoint's root\n", idx, rec.seq);
		}
		sbx_record_free(&rec);
	}
	free(blob);
	return ok;
}

int cmd_verify_proof(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	char err[SBX_ERR_LEN];
	struct sbx_checkpoint cp;
	json_error_t je;
	json_t *doc, *proofs;
	const char *note, *file;
	size_t i, good = 0;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (opt == 'h') {
			help();
			return EXIT_OK;
		}
		rc = cli_common_opt(c, "verify-proof", opt, argv);
		if (rc >= 0)
			return rc;
	}
	if (optind + 1 != argc) {
		cli_err("verify-proof: give one proof file (see " PROG " verify-proof --help)");
		return EXIT_USAGE;
	}
	file = argv[optind];
	if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	doc = strcmp(file, "-") == 0 ? json_loadf(stdin, 0, &je) : json_load_file(file, 0, &je);
	if (doc == NULL) {
		cli_err("%s: %s", file, je.text);
		return EXIT_UNREADABLE;
	}
	note = json_string_value(json_object_get(doc, "checkpoint"));
	proofs = json_object_get(doc, "proofs");
	if (note == NULL || !json_is_array(proofs) || json_array_size(proofs) == 0) {
		cli_err("%s: not a proof (no checkpoint or proofs)", file);
		json_decref(doc);
		return EXIT_FAIL;
	}
	if (sbx_checkpoint_open(note, strlen(note), pk, &cp, err, sizeof(err)) < 0) {
		cli_err("%s: %s", file, err);
		json_decref(doc);
		return EXIT_FAIL;
	}
	for (i = 0; i < json_array_size(proofs); i++)
		good += (size_t)check_one(json_array_get(proofs, i), &cp, i);
	rc = good == json_array_size(proofs) ? EXIT_OK : EXIT_FAIL;
	json_decref(doc);
	return rc;
}
