/*
 * sbx-audit verify: the tamper-evidence check, needing only the public
 * key. Prints "OK: N records" or one line per finding; the library does
 * the work (sbx_audit_verify) so the unit tests check the same code.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"

static void help(void)
{
	printf("usage: " PROG " verify [--json]\n"
	       "\n"
	       "Walk the log in seq order and check every record: the blob against\n"
	       "its leaf hash, the hash chain, the Ed25519 signature with the public\n"
	       "key, the SQL columns against the decoded blob, seq continuity, and\n"
	       "the stored code texts against their sha256.\n"
	       "\n"
	       "Clean: prints \"OK: N records\", exit 0. Otherwise one line per\n"
	       "finding, \"seq N: KIND: what\", exit 1. KIND is one of\n"
	       "record-modified, columns-mismatch, chain-broken, seq-gap,\n"
	       "bad-signature, undecodable, code-modified. Exit 3 when the log or\n"
	       "the key cannot be read.\n"
	       "\n"
	       "Without a saved checkpoint, records removed from the end of the log\n"
	       "cannot be detected; compare the last seq and chain with the syslog\n"
	       "lines (seq=, chain=) the helper writes for every run.\n"
	       "\n"
	       "  --json   {\"ok\": bool, \"records\": N, \"findings\": [{seq, kind, what}]}\n"
	       "  --db PATH, --pubkey PATH   as for every command\n");
}

/* Signatures made with another key all fail; say why up front. */
static void check_meta_key(struct sbx_audit *a, const char *path, const unsigned char *pk)
{
	char have[2 * crypto_sign_PUBLICKEYBYTES + 1], want[sizeof(have)];

	if (sbx_audit_meta_get(a, "pubkey", have, sizeof(have), NULL, 0) != 0)
		return;
	sodium_bin2hex(want, sizeof(want), pk, crypto_sign_PUBLICKEYBYTES);
	if (strcmp(have, want) != 0) {
		char *e = out_esc(have, strnlen(have, 16), 0);
		cli_err("warning: %s is not the key this log was written with (the log says %s...)",
			path, e);
		free(e);
	}
}

static int report(const struct sbx_verify_report *rep, int json)
{
	size_t i;

	if (json) {
		json_t *o = out_need(json_object()), *arr = out_need(json_array());
		for (i = 0; i < rep->n_findings; i++) {
			const struct sbx_finding *f = &rep->findings[i];
			json_array_append_new(arr, out_need(json_pack("{s:I,s:s,s:s}",
				"seq", (json_int_t)f->seq, "kind", sbx_finding_kind_name(f->kind),
				"what", f->what)));
		}
		json_object_set_new(o, "ok", json_boolean(rep->n_findings == 0));
		json_object_set_new(o, "records", json_integer((json_int_t)rep->n_records));
		json_object_set_new(o, "findings", arr);
		if (out_json(o) < 0)
			return EXIT_FAIL;
	} else if (rep->n_findings == 0) {
		printf("OK: %" PRIu64 " records\n", rep->n_records);
	} else {
		for (i = 0; i < rep->n_findings; i++)
			printf("seq %" PRId64 ": %s: %s\n", rep->findings[i].seq,
			       sbx_finding_kind_name(rep->findings[i].kind), rep->findings[i].what);
		fflush(stdout);
		cli_err("verify: %zu finding%s in %" PRIu64 " records", rep->n_findings,
			rep->n_findings == 1 ? "" : "s", rep->n_records);
	}
	return rep->n_findings == 0 ? EXIT_OK : EXIT_FAIL;
}

int cmd_verify(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	struct sbx_verify_report rep;
	struct sbx_audit *a;
	char err[SBX_ERR_LEN];
	int json = 0, opt, rc;

	while ((opt = getopt_long(argc, argv, ":hj", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'j':
			json = 1;
			break;
		default:
			rc = cli_common_opt(c, "verify", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("verify", argc, argv)) != EXIT_OK)
		return rc;
	if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	check_meta_key(a, c->pubkey, pk);
	if (sbx_audit_verify(a, pk, &rep, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		sbx_audit_close(a);
		return EXIT_UNREADABLE;
	}
	rc = report(&rep, json);
	sbx_verify_report_free(&rep);
	sbx_audit_close(a);
	return rc;
}
