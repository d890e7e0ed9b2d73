/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit prove ID: an RFC 6962 inclusion proof that a run's records (or
 * one record, by seq) are in the tree of the newest checkpoint. The proof
 * is a JSON document holding the signed checkpoint note, each record's
 * canonical blob and its audit path, so that `sbx-audit verify-proof`
 * (cmd_verifyproof.c) can check it offline with only the public key.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"

static void help(void)
{
	printf("usage: " PROG " prove ID\n"
	       "\n"
	       "Print (JSON) a proof that the records of run ID (or the record whose\n"
	       "seq is ID) are in the Merkle tree of the newest checkpoint:\n"
	       "{\"checkpoint\": NOTE, \"proofs\": [{seq, kind, run_id, leaf_index,\n"
	       "tree_size, blob (base64), path ([base64 hashes], leaf side first)}]}.\n"
	       "Check it anywhere with " PROG " verify-proof FILE --pubkey KEY.\n"
	       "Exit 1 if the record is not found or not yet covered by a\n"
	       "checkpoint (" PROG " checkpoint --write).\n");
}

static json_t *b64(const unsigned char *p, size_t n)
{
	size_t len = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = out_need(malloc(len));
	json_t *j;

	sodium_bin2base64(s, len, p, n, sodium_base64_VARIANT_ORIGINAL);
	j = out_need(json_string(s));
	free(s);
	return j;
}

/* The first n leaves in seq order; leaf i is the record of seq i + 1. */
static unsigned char (*load_leaves(struct sbx_audit *a, uint64_t n))[32]
{
	unsigned char (*l)[32] = malloc((n ? n : 1) * 32);
	sqlite3_stmt *st;
	uint64_t i = 0;

	if (l == NULL || sqlite3_prepare_v2(sbx_audit_db(a), "SELECT seq, leaf FROM records"
					    " ORDER BY seq LIMIT ?1", -1, &st, NULL) != SQLITE_OK) {
		free(l);
		return NULL;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)n);
	while (sqlite3_step(st) == SQLITE_ROW && i < n) {
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)i + 1 ||
		    sqlite3_column_bytes(st, 1) != 32)
			break;
		memcpy(l[i++], sqlite3_column_blob(st, 1), 32);
	}
	sqlite3_finalize(st);
	if (i != n) {
		free(l);
		return NULL;
	}
	return l;
}

static json_t *one_proof(sqlite3_stmt *st, const unsigned char (*leaves)[32],
			 const struct sbx_checkpoint *cp)
{
	int64_t seq = sqlite3_column_int64(st, 0);
	unsigned char path[SBX_MERKLE_MAX_PATH][32];
	json_t *o, *arr;
	int n, i;

	if (seq < 1 || (uint64_t)seq > cp->size)
		return NULL;
	n = sbx_merkle_inclusion_proof(leaves, cp->size, (uint64_t)seq - 1, path);
	arr = out_need(json_array());
	for (i = 0; i < n; i++)
		json_array_append_new(arr, b64(path[i], 32));
	o = out_need(json_object());
	json_object_set_new(o, "seq", json_integer(seq));
	json_object_set_new(o, "kind", out_json_str((const char *)sqlite3_column_text(st, 1),
						    (size_t)sqlite3_column_bytes(st, 1)));
	json_object_set_new(o, "run_id", out_json_str((const char *)sqlite3_column_text(st, 2),
						      (size_t)sqlite3_column_bytes(st, 2)));
	json_object_set_new(o, "leaf_index", json_integer(seq - 1));
	json_object_set_new(o, "tree_size", json_integer((json_int_t)cp->size));
	json_object_set_new(o, "blob", b64(sqlite3_column_blob(st, 3),
					   (size_t)sqlite3_column_bytes(st, 3)));
	json_object_set_new(o, "path", arr);
	return o;
}

static int prove(struct sbx_audit *a, const char *id, const char *note,
		 const struct sbx_checkpoint *cp)
{
	unsigned char (*leaves)[32], root[32];
	json_t *doc, *proofs;
	sqlite3_stmt *st;
	char *end;
	unsigned long long seq = strtoull(id, &end, 10);
	int by_seq = id[0] != '\0' && *end == '\0' && strlen(id) < 20;
	int rc;

	leaves = load_leaves(a, cp->size);
	if (leaves == NULL) {
		cli_err("prove: the log no longer holds the %" PRIu64 " records of its checkpoint "
			"(run " PROG " verify)", cp->size);
		return EXIT_FAIL;
	}
	sbx_merkle_root((const unsigned char (*)[32])leaves, cp->size, root);
	if (sodium_memcmp(root, cp->root, 32) != 0) {
		free(leaves);
		cli_err("prove: the records no longer match the checkpoint's root (run " PROG " verify)");
		return EXIT_FAIL;
	}
	sqlite3_prepare_v2(sbx_audit_db(a), by_seq
			   ? "SELECT seq, kind, run_id, blob FROM records WHERE seq = ?1"
			   : "SELECT seq, kind, run_id, blob FROM records WHERE run_id = ?1 ORDER BY seq",
			   -1, &st, NULL);
	if (by_seq)
		sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
	else
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	proofs = out_need(json_array());
	rc = EXIT_OK;
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *p = one_proof(st, (const unsigned char (*)[32])leaves, cp);
		if (p == NULL) {
			cli_err("prove: seq %lld is not yet covered by a checkpoint (" PROG
				" checkpoint --write)", (long long)sqlite3_column_int64(st, 0));
			rc = EXIT_FAIL;
			continue;
		}
		json_array_append_new(proofs, p);
	}
	sqlite3_finalize(st);
	free(leaves);
	if (json_array_size(proofs) == 0) {
		json_decref(proofs);
		if (rc == EXIT_OK) {
			char *e = out_esc(id, strlen(id), 0);
			cli_err("prove: %s: no such run or seq", e);
			free(e);
		}
		return EXIT_FAIL;
	}
	doc = out_need(json_object());
	json_object_set_new(doc, "checkpoint", out_need(json_string(note)));
	json_object_set_new(doc, "proofs", proofs);
	return out_json(doc) < 0 ? EXIT_FAIL : rc;
}

int cmd_prove(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	char err[SBX_ERR_LEN], **notes;
	struct sbx_checkpoint cp;
	struct sbx_audit *a;
	size_t n;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (opt == 'h') {
			help();
			return EXIT_OK;
		}
		rc = cli_common_opt(c, "prove", opt, argv);
		if (rc >= 0)
			return rc;
	}
	if (optind + 1 != argc) {
		cli_err("prove: give one run id or seq (see " PROG " prove --help)");
		return EXIT_USAGE;
	}
	rc = cli_open_checkpoints(c, pk, &a, &notes, &n);
	if (rc != 0)
		return rc;
	/* One read transaction: leaves and records from the same snapshot. */
	sqlite3_exec(sbx_audit_db(a), "BEGIN", NULL, NULL, NULL);
	if (n == 0) {
		cli_err("prove: the log has no checkpoint yet (" PROG " checkpoint --write)");
		rc = EXIT_FAIL;
	} else if (sbx_checkpoint_open(notes[n - 1], strlen(notes[n - 1]), pk, &cp, err,
				       sizeof(err)) < 0) {
		cli_err("prove: newest %s (run " PROG " verify)", err);
		rc = EXIT_FAIL;
	} else {
		rc = prove(a, argv[optind], notes[n - 1], &cp);
	}
	sqlite3_exec(sbx_audit_db(a), "COMMIT", NULL, NULL, NULL);
	sbx_checkpoint_notes_free(notes, n);
	sbx_audit_close(a);
	return rc;
}
