/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit key --verifier: the public key as a C2SP verifier key
 * (vkey.h), for verify --key and for other C2SP tools (Go's
 * golang.org/x/mod/sumdb/note reads it with NewVerifier).
 */
#include "cli.h"
#include "cosign.h"

#include <string.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "vkey.h"

static void help(void)
{
	printf("usage: " PROG " key --verifier|--cosigner [--origin NAME]\n"
	       "\n"
	       "Print the public key (--pubkey) as a C2SP verifier key,\n"
	       "NAME+HASH+BASE64: the key name is the log's origin, HASH the key id\n"
	       "(8 hex digits) and BASE64 the signature type 0x01 and the key.\n"
	       "\n"
	       "  --verifier     the verifier key of a log (signature type 0x01)\n"
	       "  --cosigner     the verifier key of a witness (a central store's\n"
	       "                 import --witness-key): type 0x04, the Ed25519\n"
	       "                 cosignature/v1 of c2sp.org/tlog-cosignature; --origin\n"
	       "                 is then the --witness-name and must be given\n"
	       "  --origin NAME  the key name; default: the origin of the log's newest\n"
	       "                 checkpoint, else HOST/sbx\n"
	       "\n"
	       "exit status: 0, 2 usage error (or a NAME that cannot be a key name),\n"
	       "3 the key cannot be read.\n");
}

/* The origin of the newest stored checkpoint, as its note says it. */
static int log_origin(const struct cli *c, char *out, size_t outlen)
{
	struct sbx_checkpoint cp;
	struct sbx_audit *a;
	char err[SBX_ERR_LEN], **notes;
	size_t n;
	int rc = -1;

	if (sbx_audit_open(c->db, 1, &a, err, sizeof(err)) < 0)
		return -1;
	if (sbx_audit_checkpoint_notes(a, &notes, &n, err, sizeof(err)) == 0) {
		if (n > 0 && sbx_checkpoint_parse(notes[n - 1], strlen(notes[n - 1]), &cp, NULL, 0) == 0) {
			snprintf(out, outlen, "%s", cp.origin);
			rc = 0;
		}
		sbx_checkpoint_notes_free(notes, n);
	}
	sbx_audit_close(a);
	return rc;
}

int cmd_key(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"verifier", no_argument, NULL, 'v'},
		{"cosigner", no_argument, NULL, 'c'},
		{"origin", required_argument, NULL, 'o'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	char err[SBX_ERR_LEN], name[SBX_ORIGIN_MAX + 1], vk[VKEY_MAX];
	const char *origin = NULL;
	int opt, rc, verifier = 0, cosigner = 0;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'v':
			verifier = 1;
			break;
		case 'c':
			cosigner = 1;
			break;
		case 'o':
			origin = optarg;
			break;
		default:
			rc = cli_common_opt(c, "key", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("key", argc, argv)) != EXIT_OK)
		return rc;
	if (verifier + cosigner != 1) {
		cli_err("key: say which form: --verifier or --cosigner (see " PROG " key --help)");
		return EXIT_USAGE;
	}
	if (cosigner && origin == NULL) {
		cli_err("key: --cosigner needs --origin NAME (the witness's key name)");
		return EXIT_USAGE;
	}
	if (sbx_key_load_public(c->pubkey, pk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		return EXIT_UNREADABLE;
	}
	if (origin != NULL)
		snprintf(name, sizeof(name), "%s", origin);
	else if (log_origin(c, name, sizeof(name)) < 0)
		sbx_default_origin(name, sizeof(name));
	if ((origin != NULL && strlen(origin) >= sizeof(name)) ||
	    (cosigner ? cosign_vkey(name, pk, vk) : vkey_format(name, pk, vk)) < 0) {
		char *e = out_esc(origin ? origin : name, strlen(origin ? origin : name), 0);
		cli_err("key: --origin %s: not a C2SP key name (non-empty UTF-8, at most %d bytes, "
			"no spaces or '+')", e, SBX_ORIGIN_MAX);
		free(e);
		return EXIT_USAGE;
	}
	printf("%s\n", vk);
	return EXIT_OK;
}
