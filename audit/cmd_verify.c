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
	       "  --state FILE  what the last verify saw, kept by the auditor: the\n"
	       "                newest record (seq, chain value, signature) and the\n"
	       "                newest checkpoint. The log must still hold both,\n"
	       "                else truncated, rolled-back, forked, checkpoint-\n"
	       "                missing or log-replaced; a log that is missing,\n"
	       "                empty or unreadable is truncated too. Absent:\n"
	       "                created. Updated when no tampering is found.\n"
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
	       "Text: \"OK: N records (checkpoint at M)\" when clean (and \"; K runs in\n"
	       "progress\" for STARTs whose END may still come), else one line per\n"
	       "finding, \"seq N: KIND: what (expected E, actual A)\". Kinds: see\n"
	       "sbx-audit(1) VERIFY FINDINGS.\n"
	       "\n"
	       "exit status: 0 clean, 1 tampering found, 2 usage error, 3 the log, key\n"
	       "or state file cannot be read (without a state), 4 warnings only.\n");
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
	json_object_set_new(o, "in_progress", json_integer((json_int_t)rep->n_in_progress));
	json_object_set_new(o, "findings", arr);
	out_json(o);
}

static int report(const struct sbx_verify_report *rep, int json)
{
	size_t i, bad = n_tamper(rep);

	if (json) {
		print_json(rep);
	} else if (rep->n_findings == 0) {
		printf("OK: %" PRIu64 " records", rep->n_records);
		if (rep->latest_size > 0)
			printf(" (checkpoint at %" PRIu64, rep->latest_size);
		if (rep->n_in_progress > 0)
			printf("%s%" PRIu64 " run%s in progress", rep->latest_size ? "; " : " (",
			       rep->n_in_progress, rep->n_in_progress == 1 ? "" : "s");
		printf("%s\n", rep->latest_size || rep->n_in_progress ? ")" : "");
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

/* Move what the auditor trusts forward, only over a log found intact: the
 * newest record walked, and the newest checkpoint (or the one the state
 * had, when the log has no newer). */
static void save_state(const char *path, const struct sbx_verify_report *rep,
		       const struct state *old, int json)
{
	char err[SBX_ERR_LEN], *note = NULL;

	if (n_tamper(rep) > 0 || !rep->have_head)
		return;
	if (rep->latest_note != NULL)
		note = out_need(strdup(rep->latest_note));
	else if (old != NULL && old->note != NULL)
		note = out_need(strndup(old->note, old->note_len));
	if (state_write(path, rep->head_seq, rep->head_chain, rep->head_sig, note, err,
			sizeof(err)) < 0) {
		cli_err("state: %s", err);
		free(note);
		return;
	}
	free(note);
	if (!json)
		cli_err("state: %s now holds record %" PRIu64 " and the checkpoint of %" PRIu64
			" records", path, rep->head_seq, rep->latest_size);
}

/*
 * A log that cannot be opened, when a state says what it held: that is
 * the log removed, emptied or replaced by something else, so a finding
 * (truncated at seq 1: nothing of what was seen is left), not "cannot read".
 */
static int log_gone(const char *db, const char *why, const struct state *st, int json)
{
	struct sbx_verify_report rep = {0};
	char what[512], e[80];

	snprintf(what, sizeof(what), "the log %s cannot be read (%s) but the state has seen %"
		 PRIu64 " records", db, why, st->have_head ? st->head_seq : 0);
	add_finding(&rep, 1, SBX_FIND_TRUNCATED, "", what);
	snprintf(e, sizeof(e), "%" PRIu64 " records", st->have_head ? st->head_seq : 0);
	snprintf(rep.findings[0].expected, sizeof(rep.findings[0].expected), "%s", e);
	snprintf(rep.findings[0].actual, sizeof(rep.findings[0].actual), "no log");
	report(&rep, json);
	sbx_verify_report_free(&rep);
	return EXIT_FAIL;
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
	static char state[STATE_MAX];
	char err[SBX_ERR_LEN];
	struct sbx_verify_opts vo = {0};
	struct sbx_checkpoint old;
	struct state st = {0};
	const char *state_path = NULL, *archive = NULL;
	int json = 0, opt, rc, have_old = 0, have_state = 0;

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
		int n = state_read(state_path, state, sizeof(state), &st, err, sizeof(err));
		if (n < 0) {
			cli_err("%s", err);
			return EXIT_UNREADABLE;
		}
		have_state = n > 0;
		if (st.note != NULL) {
			vo.state_note = st.note;
			vo.state_len = st.note_len;
			have_old = sbx_checkpoint_open(st.note, st.note_len, pk, &old, NULL, 0) == 0;
		}
		if (st.have_head) {
			vo.have_head = 1;
			vo.head_seq = st.head_seq;
			memcpy(vo.head_chain, st.head_chain, 32);
			memcpy(vo.head_sig, st.head_sig, crypto_sign_BYTES);
		}
	}
	if (have_state) {
		if (sbx_audit_open(c->db, 1, &a, err, sizeof(err)) < 0)
			return log_gone(c->db, err, &st, json);
	} else if (cli_open_log(c, &a) < 0) {
		return EXIT_UNREADABLE;
	}
	check_meta_key(a, c->pubkey, pk);
	if (sbx_audit_verify_opts(a, pk, &vo, &rep, err, sizeof(err)) < 0) {
		sbx_audit_close(a);
		if (have_state)
			return log_gone(c->db, err, &st, json);
		cli_err("%s", err);
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
		save_state(state_path, &rep, have_state ? &st : NULL, json);
	sbx_verify_report_free(&rep);
	sbx_audit_close(a);
	return rc;
}
