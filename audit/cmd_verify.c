/* SPDX-License-Identifier: ISC */
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
#include "checkpoint.h"
#include "statefile.h"

static void help(void)
{
	printf("usage: " PROG " verify [--full] [--state FILE] [--archive FILE] [--json]\n"
	       "\n"
	       "Walk the log in seq order and check every record: the blob against\n"
	       "its leaf hash, the hash chain, the SQL columns against the decoded\n"
	       "blob, seq continuity, the stored code texts against their sha256,\n"
	       "every stored checkpoint (C2SP signed note) against the public key and\n"
	       "the RFC 6962 Merkle root of the records it covers, and the signature\n"
	       "of the last record, which covers every earlier one through the chain.\n"
	       "\n"
	       "  --full        also check every record's signature (two threads)\n"
	       "  --state FILE  the last trusted checkpoint, kept by the auditor: the\n"
	       "                log must still hold its records with its root, else\n"
	       "                truncated, forked or log-replaced. Absent: created.\n"
	       "                Updated to the newest valid checkpoint when no\n"
	       "                tampering is found.\n"
	       "  --archive FILE\n"
	       "                also the archive that " PROG " rotate moved older\n"
	       "                records to: it must verify, and end where the log\n"
	       "                starts, with its chain value and Merkle root; its\n"
	       "                findings say \"archive:\". A --state checkpoint older\n"
	       "                than the log's base is checked (and moved) only\n"
	       "                with --archive\n"
	       "  --json        {\"ok\", \"records\", \"checkpoints\", \"findings\": [{seq,\n"
	       "                kind, severity, what, expected, actual}]}\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       "Text: \"OK: N records\" when clean, else one line per finding,\n"
	       "\"seq N: KIND: what (expected E, actual A)\". Tampering kinds:\n"
	       "record-modified, columns-mismatch, chain-broken, seq-gap,\n"
	       "bad-signature, undecodable, code-modified, checkpoint-bad,\n"
	       "checkpoint-mismatch, truncated, forked, log-replaced. Warnings:\n"
	       "uncheckpointed-tail (records after the last checkpoint; write one\n"
	       "with " PROG " checkpoint --write), time-backwards.\n"
	       "\n"
	       "exit status: 0 clean, 1 tampering found, 2 warnings only (also: usage\n"
	       "error), 3 the log, key or state file cannot be read.\n");
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

static size_t n_tamper(const struct sbx_verify_report *rep)
{
	size_t i, n = 0;

	for (i = 0; i < rep->n_findings; i++)
		n += !sbx_finding_is_warning(rep->findings[i].kind);
	return n;
}

static void print_json(const struct sbx_verify_report *rep)
{
	json_t *o = out_need(json_object()), *arr = out_need(json_array());
	size_t i;

	for (i = 0; i < rep->n_findings; i++) {
		const struct sbx_finding *f = &rep->findings[i];
		json_array_append_new(arr, out_need(json_pack("{s:I,s:s,s:s,s:s,s:s,s:s}",
			"seq", (json_int_t)f->seq, "kind", sbx_finding_kind_name(f->kind),
			"severity", sbx_finding_is_warning(f->kind) ? "warning" : "tampering",
			"what", f->what, "expected", f->expected, "actual", f->actual)));
	}
	json_object_set_new(o, "ok", json_boolean(n_tamper(rep) == 0));
	json_object_set_new(o, "records", json_integer((json_int_t)rep->n_records));
	json_object_set_new(o, "checkpoints", json_integer((json_int_t)rep->n_checkpoints));
	json_object_set_new(o, "checkpoint_size", json_integer((json_int_t)rep->latest_size));
	json_object_set_new(o, "findings", arr);
	out_json(o);
}

static int report(const struct sbx_verify_report *rep, int json)
{
	size_t i, bad = n_tamper(rep);

	if (json) {
		print_json(rep);
	} else if (rep->n_findings == 0) {
		printf("OK: %" PRIu64 " records\n", rep->n_records);
	} else {
		for (i = 0; i < rep->n_findings; i++) {
			const struct sbx_finding *f = &rep->findings[i];
			printf("seq %" PRId64 ": %s: %s", f->seq, sbx_finding_kind_name(f->kind), f->what);
			if (f->expected[0] || f->actual[0])
				printf(" (expected %s, actual %s)", f->expected, f->actual);
			putchar('\n');
		}
		fflush(stdout);
		cli_err("verify: %zu finding%s (%zu tampering, %zu warning%s) in %" PRIu64 " records",
			rep->n_findings, rep->n_findings == 1 ? "" : "s", bad, rep->n_findings - bad,
			rep->n_findings - bad == 1 ? "" : "s", rep->n_records);
	}
	return bad ? EXIT_FAIL : rep->n_findings ? EXIT_WARNINGS : EXIT_OK;
}

static void add_finding(struct sbx_verify_report *rep, int64_t seq, enum sbx_finding_kind kind,
			const char *prefix, const char *what)
{
	struct sbx_finding *f;

	if (rep->n_findings == rep->cap) {
		rep->cap = rep->cap ? rep->cap * 2 : 16;
		rep->findings = out_need(realloc(rep->findings, rep->cap * sizeof(*f)));
	}
	f = &rep->findings[rep->n_findings++];
	memset(f, 0, sizeof(*f));
	f->seq = seq;
	f->kind = kind;
	snprintf(f->what, sizeof(f->what), "%s%s", prefix, what);
}

/*
 * --archive: the archive's findings (named as such) come first, then what
 * joins the two: the archive must end at the live log's base seq, with its
 * chain value, and its leaves must give the base checkpoint's root.
 */
static void join_archive(struct sbx_verify_report *live, const struct sbx_verify_report *arc)
{
	struct sbx_verify_report out = *live;
	size_t i;

	out.findings = NULL;
	out.n_findings = out.cap = 0;
	for (i = 0; i < arc->n_findings; i++) {
		const struct sbx_finding *f = &arc->findings[i];
		add_finding(&out, f->seq, f->kind, "archive: ", f->what);
		snprintf(out.findings[out.n_findings - 1].expected, sizeof(f->expected), "%s", f->expected);
		snprintf(out.findings[out.n_findings - 1].actual, sizeof(f->actual), "%s", f->actual);
	}
	if (arc->last_seq != live->base_seq) {
		char what[200];
		snprintf(what, sizeof(what), "the archive ends at seq %" PRIu64 " but the log starts "
			 "after seq %" PRIu64 " (records missing between them, or another archive)",
			 arc->last_seq, live->base_seq);
		add_finding(&out, (int64_t)arc->last_seq + 1, SBX_FIND_SEQ_GAP, "", what);
	} else if (sodium_memcmp(arc->last_chain, live->base_chain, 32) != 0) {
		add_finding(&out, (int64_t)live->base_seq + 1, SBX_FIND_CHAIN_BROKEN, "",
			    "the log's base chain value is not the archive's last (archive "
			    "records replaced, or another archive)");
	} else if (sodium_memcmp(arc->root, live->base_root, 32) != 0) {
		add_finding(&out, (int64_t)live->base_seq, SBX_FIND_CHECKPOINT_MISMATCH, "",
			    "the archive's records do not give the Merkle root of the rotation "
			    "checkpoint");
	}
	for (i = 0; i < live->n_findings; i++) {
		add_finding(&out, live->findings[i].seq, live->findings[i].kind, "",
			    live->findings[i].what);
		out.findings[out.n_findings - 1] = live->findings[i];
	}
	out.n_records += arc->n_records;
	out.n_checkpoints += arc->n_checkpoints;
	free(live->findings);
	*live = out;
}

/* Verify the archive at path with the same key (and the saved checkpoint
 * when it lies in the archive); joined into rep. */
static int verify_archive(const char *path, const unsigned char *pk,
			  const struct sbx_verify_opts *vo, const struct sbx_checkpoint *old,
			  struct sbx_verify_report *rep)
{
	struct sbx_verify_opts ao = *vo;
	struct sbx_verify_report arc;
	struct sbx_audit *a;
	char err[SBX_ERR_LEN];

	if (old == NULL || old->size > rep->base_seq) {
		ao.state_note = NULL;
		ao.state_len = 0;
	}
	if (sbx_audit_open(path, 1, &a, err, sizeof(err)) < 0) {
		cli_err("--archive: %s", err);
		return -1;
	}
	if (sbx_audit_verify_opts(a, pk, &ao, &arc, err, sizeof(err)) < 0) {
		cli_err("--archive: %s", err);
		sbx_audit_close(a);
		return -1;
	}
	sbx_audit_close(a);
	join_archive(rep, &arc);
	sbx_verify_report_free(&arc);
	return 0;
}

/* Move the trusted checkpoint forward, only over a log found intact. */
static void save_state(const char *path, const struct sbx_verify_report *rep,
		       const struct sbx_checkpoint *old, int json)
{
	char err[SBX_ERR_LEN];

	if (n_tamper(rep) > 0 || rep->latest_note == NULL ||
	    (old != NULL && rep->latest_size <= old->size))
		return;
	if (state_write(path, rep->latest_note, err, sizeof(err)) < 0) {
		cli_err("state: %s", err);
		return;
	}
	if (!json)
		cli_err("state: %s now holds the checkpoint of %" PRIu64 " records", path,
			rep->latest_size);
}

int cmd_verify(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"full", no_argument, NULL, 'f'},
		{"state", required_argument, NULL, 's'},
		{"archive", required_argument, NULL, 'a'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	struct sbx_verify_report rep;
	struct sbx_audit *a;
	char err[SBX_ERR_LEN], state[SBX_NOTE_MAX];
	struct sbx_verify_opts vo = {0};
	struct sbx_checkpoint old;
	const char *state_path = NULL, *archive = NULL;
	int json = 0, opt, rc, have_old = 0;

	while ((opt = getopt_long(argc, argv, ":hjfs:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'j':
			json = 1;
			break;
		case 'f':
			vo.full = 1;
			break;
		case 's':
			state_path = optarg;
			break;
		case 'a':
			archive = optarg;
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
	if (state_path != NULL) {
		long n = state_read(state_path, state, sizeof(state), err, sizeof(err));
		if (n < 0) {
			cli_err("%s", err);
			return EXIT_UNREADABLE;
		}
		if (n > 0) {
			vo.state_note = state;
			vo.state_len = (size_t)n;
			have_old = sbx_checkpoint_open(state, (size_t)n, pk, &old, NULL, 0) == 0;
		}
	}
	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	check_meta_key(a, c->pubkey, pk);
	if (sbx_audit_verify_opts(a, pk, &vo, &rep, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		sbx_audit_close(a);
		return EXIT_UNREADABLE;
	}
	if (archive != NULL &&
	    verify_archive(archive, pk, &vo, have_old ? &old : NULL, &rep) < 0) {
		sbx_verify_report_free(&rep);
		sbx_audit_close(a);
		return EXIT_UNREADABLE;
	}
	rc = report(&rep, json);
	if (state_path != NULL && archive == NULL && have_old && old.size < rep.base_seq)
		/* Its records are archived: only --archive can check it. */
		cli_err("state: %s covers records rotated out of the log; not checked or updated "
			"without --archive", state_path);
	else if (state_path != NULL)
		save_state(state_path, &rep, have_old ? &old : NULL, json);
	sbx_verify_report_free(&rep);
	sbx_audit_close(a);
	return rc;
}
