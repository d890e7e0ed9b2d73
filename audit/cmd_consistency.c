/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit consistency OLD NEW: is the log of checkpoint NEW an
 * extension of the log of checkpoint OLD? RFC 9162 section 2.1.4
 * consistency proofs: produced from a log's (or a central archive's)
 * leaves, or checked offline with --proof, needing then only the two
 * signed checkpoints and the key. The proof is one base64 hash a line, as
 * c2sp.org/tlog-witness carries consistency proofs; Go's
 * golang.org/x/mod/sumdb/tlog ProveTree and CheckTree produce and check
 * the same hashes (tests/integration/111-fleet-consistency.t).
 */
#include "cli.h"
#include "keyring.h"
#include "vkey.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"

#define EXIT_INCONSISTENT 5

static void help(void)
{
	printf("usage: " PROG " consistency [--db PATH] [--key VKEY | --keyring FILE | --pubkey PATH]\n"
	       "         [--proof FILE] OLD NEW\n"
	       "\n"
	       "OLD and NEW are signed checkpoints (files; cosignatures may follow) of one\n"
	       "log. Both must verify with the key. Without --proof, read the leaves of\n"
	       "the log (--db: a host's log or a central archive, DIR/HOST/audit.db),\n"
	       "check that both checkpoints are its tree at their sizes, and print the\n"
	       "RFC 9162 consistency proof from OLD to NEW, one base64 hash a line. With\n"
	       "--proof FILE, check that proof instead (no log needed).\n"
	       "\n"
	       "  --key VKEY      the log's C2SP verifier key (sbx-audit key --verifier)\n"
	       "  --keyring FILE  a central store's keyring: the key of the checkpoints' origin\n"
	       "  --proof FILE    the proof to check\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       "exit status: 0 consistent (the proof printed or checked), 1 a checkpoint does\n"
	       "not verify, the log lacks leaves, or the proof is malformed, 2 usage,\n"
	       "3 log, key or file unreadable, 5 inconsistent: NEW does not extend OLD\n");
}

static char *read_small(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;

	*len = 0;
	if (f == NULL)
		return NULL;
	buf = malloc(max + 1);
	if (buf != NULL) {
		*len = fread(buf, 1, max + 1, f);
		if (ferror(f) || *len > max) {
			free(buf);
			buf = NULL;
			errno = ferror(f) ? EIO : EFBIG;
		} else {
			buf[*len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static int open_note(const char *path, const unsigned char *pk, struct sbx_checkpoint *cp)
{
	char err[SBX_ERR_LEN], *e;
	size_t len;
	char *note = read_small(path, SBX_NOTE_READ_MAX, &len);
	int rc;

	if (note == NULL) {
		cli_err("consistency: %s: %s", path, strerror(errno));
		return EXIT_UNREADABLE;
	}
	rc = sbx_checkpoint_open(note, len, pk, cp, err, sizeof(err));
	free(note);
	if (rc < 0) {
		e = out_esc(err, strlen(err), 0);
		cli_err("consistency: %s: %s", path, e);
		free(e);
		return EXIT_FAIL;
	}
	return 0;
}

/* The origin a note names, unverified, to pick its key from a keyring. */
static int note_origin(const char *path, char *origin)
{
	struct sbx_checkpoint cp;
	size_t len;
	char *note = read_small(path, SBX_NOTE_READ_MAX, &len);
	int rc;

	if (note == NULL)
		return -1;
	rc = sbx_checkpoint_parse(note, len, &cp, NULL, 0);
	free(note);
	if (rc == 0)
		memcpy(origin, cp.origin, sizeof(cp.origin));
	return rc;
}

static int load_proof(const char *path, unsigned char (*proof)[32], size_t *n)
{
	size_t len, i = 0, got;
	char *buf = read_small(path, (size_t)64 * 1024, &len), *p, *nl;

	*n = 0;
	if (buf == NULL) {
		cli_err("consistency: --proof %s: %s", path, strerror(errno));
		return EXIT_UNREADABLE;
	}
	for (p = buf; *p != '\0'; p = nl + 1, i++) {
		const char *end;
		nl = strchr(p, '\n');
		if (nl == NULL || *n == SBX_MERKLE_MAX_PATH ||
		    sodium_base642bin(proof[*n], 32, p, (size_t)(nl - p), NULL, &got, &end,
				      sodium_base64_VARIANT_ORIGINAL) != 0 ||
		    got != 32 || end != nl) {
			cli_err("consistency: --proof %s: line %zu: not the base64 of a 32-byte hash "
				"(at most %d lines, each ending in a newline)", path, i + 1,
				SBX_MERKLE_MAX_PATH);
			free(buf);
			return EXIT_FAIL;
		}
		(*n)++;
	}
	free(buf);
	return 0;
}

/* Leaves 1..n of the log, or NULL after saying why. */
static unsigned char (*log_leaves(struct sbx_audit *a, uint64_t n))[32]
{
	unsigned char (*l)[32];
	uint64_t k;

	if (sbx_audit_leaves(sbx_audit_db(a), n, &l, &k) == 0)
		return l;
	if (k == n)
		cli_err("%s: %s", sbx_audit_path(a), sqlite3_errmsg(sbx_audit_db(a)));
	else
		cli_err("consistency: %s: record %" PRIu64 " is missing (a rotated log lacks its first "
			"records: use the central archive, or the log and its rotation archives together)",
			sbx_audit_path(a), k + 1);
	return NULL;
}

static int produce(const struct cli *c, const struct sbx_checkpoint *o, const struct sbx_checkpoint *nw)
{
	unsigned char (*l)[32], r[32], proof[SBX_MERKLE_MAX_PATH][32];
	char b64[64], h1[17], h2[17];
	struct sbx_audit *a;
	int k, i;

	if (cli_open_log(c, &a) < 0)
		return EXIT_UNREADABLE;
	l = log_leaves(a, nw->size);
	sbx_audit_close(a);
	if (l == NULL)
		return EXIT_FAIL;
	for (i = 0; i < 2; i++) {
		const struct sbx_checkpoint *cp = i ? nw : o;
		sbx_merkle_root((const unsigned char (*)[32])l, cp->size, r);
		if (sodium_memcmp(r, cp->root, 32) != 0) {
			sodium_bin2hex(h1, sizeof(h1), cp->root, 8);
			sodium_bin2hex(h2, sizeof(h2), r, 8);
			cli_err("consistency: inconsistent: the %s checkpoint of %" PRIu64 " records has root "
				"%s..., the log's first %" PRIu64 " records %s...: %s", i ? "NEW" : "OLD",
				cp->size, h1, cp->size, h2,
				i ? "NEW is not this log's" : "this log does not extend OLD (rolled back or "
				"forked, or another log)");
			free(l);
			return EXIT_INCONSISTENT;
		}
	}
	k = sbx_merkle_consistency_proof((const unsigned char (*)[32])l, nw->size, o->size, proof);
	free(l);
	if (k < 0 || !sbx_merkle_consistency_ok(o->size, nw->size, o->root, nw->root,
						(const unsigned char (*)[32])proof, (size_t)k)) {
		cli_err("consistency: the proof does not check (a defect: report it)");
		return EXIT_FAIL;
	}
	for (i = 0; i < k; i++) {
		sodium_bin2base64(b64, sizeof(b64), proof[i], 32, sodium_base64_VARIANT_ORIGINAL);
		printf("%s\n", b64);
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

int cmd_consistency(struct cli *c, int argc, char **argv)
{
	enum { O_KEY = OPT_FIRST_CMD, O_KEYRING, O_PROOF };
	static const struct option opts[] = {
		{"key", required_argument, NULL, O_KEY},
		{"keyring", required_argument, NULL, O_KEYRING},
		{"proof", required_argument, NULL, O_PROOF},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *vkey = NULL, *ring = NULL, *proof_path = NULL;
	unsigned char pk[32], proof[SBX_MERKLE_MAX_PATH][32];
	char err[SBX_ERR_LEN + 300], name[SBX_ORIGIN_MAX + 1];
	struct sbx_checkpoint o, nw;
	size_t np;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_KEY:
			vkey = optarg;
			break;
		case O_KEYRING:
			ring = optarg;
			break;
		case O_PROOF:
			proof_path = optarg;
			break;
		default:
			rc = cli_common_opt(c, "consistency", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if (optind + 2 != argc) {
		cli_err("consistency: two checkpoint files are required: OLD NEW");
		return EXIT_USAGE;
	}
	if (vkey && ring) {
		cli_err("consistency: --key and --keyring exclude each other");
		return EXIT_USAGE;
	}
	if (vkey != NULL) {
		if (vkey_parse(vkey, strlen(vkey), name, pk, err, sizeof(err)) < 0) {
			cli_err("consistency: --key: %s", err);
			return EXIT_USAGE;
		}
	} else if (ring != NULL) {
		struct keyring kr;
		const struct keyring_entry *e;
		if (keyring_load(ring, &kr, err, sizeof(err)) < 0) {
			cli_err("consistency: --keyring %s", err);
			return EXIT_UNREADABLE;
		}
		e = note_origin(argv[optind + 1], name) == 0 ? keyring_find(&kr, name) : NULL;
		if (e == NULL) {
			cli_err("consistency: %s: its origin has no key in the keyring %s", argv[optind + 1], ring);
			keyring_free(&kr);
			return EXIT_FAIL;
		}
		memcpy(pk, e->pk, 32);
		keyring_free(&kr);
	} else if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		cli_err("consistency: %s", err);
		return EXIT_UNREADABLE;
	}
	if ((rc = open_note(argv[optind], pk, &o)) != 0 || (rc = open_note(argv[optind + 1], pk, &nw)) != 0)
		return rc;
	if (strcmp(o.origin, nw.origin) != 0) {
		cli_err("consistency: OLD is of origin %s, NEW of %s: two logs", o.origin, nw.origin);
		return EXIT_FAIL;
	}
	if (o.size > nw.size) {
		cli_err("consistency: inconsistent: OLD covers %" PRIu64 " records, NEW only %" PRIu64
			" (the log was cut back)", o.size, nw.size);
		return EXIT_INCONSISTENT;
	}
	if (proof_path == NULL)
		return produce(c, &o, &nw);
	if ((rc = load_proof(proof_path, proof, &np)) != 0)
		return rc;
	if (!sbx_merkle_consistency_ok(o.size, nw.size, o.root, nw.root, (const unsigned char (*)[32])proof,
				       np)) {
		cli_err("consistency: inconsistent: the proof does not show that the tree of %" PRIu64
			" records extends the tree of %" PRIu64 " (RFC 9162 2.1.4.2)", nw.size, o.size);
		return EXIT_INCONSISTENT;
	}
	printf("consistent: %s %" PRIu64 " -> %" PRIu64 " records (%zu hashes)\n", o.origin, o.size, nw.size,
	       np);
	return EXIT_OK;
}
