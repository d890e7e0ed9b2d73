/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit checkpoint: print the newest checkpoint stored in the log
 * (a C2SP signed note an auditor can keep elsewhere), or with --write
 * append one now, signed with the log's secret key (root or _sbx).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "signdir.h"
#include "paths.h"

#define DEFAULT_KEY SBX_LOCALSTATEDIR "/lib/sbx-signer/audit.key"
/* The default itself (compared by address): without --key the signer's
 * directory signs, under its rules; with --key that key, alone. */
static const char default_key[] = DEFAULT_KEY;

static void help(void)
{
	printf("usage: " PROG " checkpoint [--write [--key PATH] [--origin NAME]]\n"
	       "\n"
	       "Print the newest checkpoint of the log: a C2SP signed note (origin,\n"
	       "tree size, base64 RFC 6962 Merkle root, blank line, signature line).\n"
	       "Its signature is checked with --pubkey first; exit 1 if it fails or\n"
	       "there is none.\n"
	       "\n"
	       "  --write        append a checkpoint over all records now (if there are\n"
	       "                 new ones), then print it; needs the secret key\n"
	       "  --key PATH     sign with this secret key alone (default: through\n"
	       "                 sbx-signer's directory, with " DEFAULT_KEY ")\n"
	       "  --origin NAME  origin line (default: the origin of the last record)\n");
}

/* The origin the records are signed with: a checkpoint names the same log. */
static int last_origin(struct sbx_audit *a, char *buf, size_t len)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT origin FROM records ORDER BY seq DESC"
			       " LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
		ok = 1;
	}
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

static int write_one(const struct cli *c, const char *keypath, const char *origin_opt)
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	char err[SBX_ERR_LEN], origin[SBX_ORIGIN_MAX + 1], note[SBX_NOTE_MAX];
	struct sbx_audit *a;
	struct stat sb;
	static struct signdir d;
	struct sbx_signer sg;
	int rc, use_dir = keypath == default_key;

	/* Opening for writing would create a missing log. */
	if (stat(c->db, &sb) < 0) {
		cli_err("%s: no such log", c->db);
		return EXIT_UNREADABLE;
	}
	/* the default key is sbx-signer's: through its directory and rules */
	if (use_dir ? signdir_open(&d, SBX_SIGNER_DIR, err, sizeof(err)) < 0
		    : sbx_key_load_secret(keypath, sk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	if (use_dir)
		signdir_signer(&sg, &d);
	else
		sbx_signer_local(&sg, sk);
	if (sbx_audit_open(c->db, 0, &a, err, sizeof(err)) < 0) {
		sodium_memzero(sk, sizeof(sk));
		if (use_dir)
			signdir_close(&d);
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	if (origin_opt != NULL)
		snprintf(origin, sizeof(origin), "%s", origin_opt);
	else if (last_origin(a, origin, sizeof(origin)) < 0)
		sbx_default_origin(origin, sizeof(origin));
	rc = sbx_audit_checkpoint_with(a, &sg, origin, 0, 0, note, err, sizeof(err));
	sodium_memzero(sk, sizeof(sk));
	if (use_dir)
		signdir_close(&d);
	sbx_audit_close(a);
	if (rc < 0) {
		cli_err("checkpoint: %s", err);
		return EXIT_FAIL;
	}
	if (rc == 0)
		cli_err("checkpoint: no records since the last checkpoint; printing it");
	return EXIT_OK;
}

static int print_latest(const struct cli *c)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	char err[SBX_ERR_LEN], **notes;
	struct sbx_checkpoint cp;
	struct sbx_audit *a;
	size_t n;
	int rc = cli_open_checkpoints(c, pk, &a, &notes, &n);

	if (rc != 0)
		return rc;
	rc = EXIT_FAIL;
	if (n == 0) {
		cli_err("checkpoint: the log has none yet (" PROG " checkpoint --write)");
	} else if (sbx_checkpoint_open(notes[n - 1], strlen(notes[n - 1]), pk, &cp, err,
				       sizeof(err)) < 0) {
		cli_err("%s (run " PROG " verify)", err);
	} else {
		fputs(notes[n - 1], stdout);
		rc = EXIT_OK;
	}
	sbx_checkpoint_notes_free(notes, n);
	sbx_audit_close(a);
	return rc;
}

int cmd_checkpoint(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"write", no_argument, NULL, 'w'},
		{"key", required_argument, NULL, 'k'},
		{"origin", required_argument, NULL, 'o'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *key = default_key, *origin = NULL;
	int opt, rc, wr = 0;

	while ((opt = getopt_long(argc, argv, ":hwk:o:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'w':
			wr = 1;
			break;
		case 'k':
			key = optarg;
			break;
		case 'o':
			origin = optarg;
			break;
		default:
			rc = cli_common_opt(c, "checkpoint", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("checkpoint", argc, argv)) != EXIT_OK)
		return rc;
	if (wr && (rc = write_one(c, key, origin)) != EXIT_OK)
		return rc;
	return print_latest(c);
}
