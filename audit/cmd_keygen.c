/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit keygen: create the log's Ed25519 key pair. Run by the package
 * post-install step on every install, so it is idempotent: an existing key
 * is kept (only a missing or stale public key file is rewritten from it),
 * and replacing it takes --force.
 */
#include "cli.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyfile.h"
#include "paths.h"

#define DEFAULT_KEY SBX_LOCALSTATEDIR "/lib/sbx-signer/audit.key"
#define DEFAULT_USER "_sbxsign"
#define DEFAULT_PUB SBX_SYSCONFDIR "/sbx/audit.pub"

struct keygen {
	const char *key, *pub, *user;
	uid_t uid;
	gid_t gid;
	int force, key_given, user_given;
};

static void help(void)
{
	printf("usage: " PROG " keygen [--force] [--key PATH] [--user NAME] [--pubkey PATH]\n"
	       "\n"
	       "Create the Ed25519 key pair that signs the audit log: the secret key\n"
	       "(64 raw bytes, owner NAME, mode 0400) and the public key (hex, one\n"
	       "line, mode 0644). Must run as root. If the secret key exists it is\n"
	       "kept: prints \"key exists\", rewrites the public key file only if it\n"
	       "is missing or does not match, and exits 0.\n"
	       "\n"
	       "  --force       replace an existing key (records signed with the old\n"
	       "                key no longer verify; move the old log aside)\n"
	       "  --key PATH    secret key (default " DEFAULT_KEY ")\n"
	       "  --user NAME   owner of the secret key (default " DEFAULT_USER ")\n"
	       "  --pubkey PATH public key (default " DEFAULT_PUB ")\n"
	       "\n"
	       "Without root, both --key and --pubkey must be given (tests); the files\n"
	       "then belong to the invoker.\n");
}

static int write_pub(const struct keygen *k, const unsigned char *pk)
{
	char line[2 * crypto_sign_PUBLICKEYBYTES + 2], err[SBX_ERR_LEN];

	sodium_bin2hex(line, sizeof(line), pk, crypto_sign_PUBLICKEYBYTES);
	strlcat(line, "\n", sizeof(line));
	/* Derived from the secret key, so replacing it is always safe. */
	if (keyfile_write(k->pub, line, strlen(line), 0644, (uid_t)-1, (gid_t)-1, 1,
			  err, sizeof(err)) < 0) {
		cli_err("keygen: %s", err);
		return -1;
	}
	return 0;
}

static int existing(const struct keygen *k)
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES], have[crypto_sign_PUBLICKEYBYTES];
	const unsigned char *pk = sk + crypto_sign_SECRETKEYBYTES - crypto_sign_PUBLICKEYBYTES;
	char err[SBX_ERR_LEN];
	int same;

	if (sbx_key_load_secret(k->key, sk, err, sizeof(err)) < 0) {
		cli_err("keygen: %s; use --force to replace it", err);
		return EXIT_FAIL;
	}
	same = sbx_key_load_public(k->pub, have, err, sizeof(err)) == 0 &&
	       sodium_memcmp(have, pk, sizeof(have)) == 0;
	if (same) {
		puts("key exists");
	} else if (write_pub(k, pk) == 0) {
		printf("key exists; wrote public key %s\n", k->pub);
	} else {
		sodium_memzero(sk, sizeof(sk));
		return EXIT_FAIL;
	}
	sodium_memzero(sk, sizeof(sk));
	return EXIT_OK;
}

static int generate(const struct keygen *k, int had_key)
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	char err[SBX_ERR_LEN], hex[2 * crypto_sign_PUBLICKEYBYTES + 1];
	int rc;

	crypto_sign_keypair(pk, sk);
	rc = keyfile_write(k->key, sk, sizeof(sk), 0400, k->uid, k->gid, k->force, err, sizeof(err));
	sodium_memzero(sk, sizeof(sk));
	if (rc < 0) {
		if (errno == EEXIST)
			cli_err("keygen: %s: created by someone else meanwhile; run keygen again", k->key);
		else
			cli_err("keygen: %s", err);
		return EXIT_FAIL;
	}
	if (write_pub(k, pk) < 0)
		return EXIT_FAIL;
	sodium_bin2hex(hex, sizeof(hex), pk, sizeof(pk));
	printf("wrote secret key %s and public key %s\npublic key: %s\n", k->key, k->pub, hex);
	if (had_key)
		printf("note: the log's records signed with the old key no longer verify, and "
		       "appends are refused until the log is moved aside\n");
	return EXIT_OK;
}

static int check_identity(struct keygen *k)
{
	struct passwd *pw;

	k->uid = (uid_t)-1;
	k->gid = (gid_t)-1;
	if (geteuid() != 0) {
		if (k->user_given) {
			cli_err("keygen: --user: only root can give the key to another user");
			return EXIT_FAIL;
		}
		/* Non-root use is for tests: it never touches the installed files. */
		if (!k->key_given || strcmp(k->pub, DEFAULT_PUB) == 0) {
			cli_err("keygen: must run as root (or give both --key and --pubkey)");
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	errno = 0;
	pw = getpwnam(k->user);
	if (pw == NULL) {
		cli_err("keygen: user %s: %s", k->user,
			errno ? strerror(errno) : "no such user (create it, or give --user)");
		return EXIT_FAIL;
	}
	k->uid = pw->pw_uid;
	k->gid = pw->pw_gid;
	return EXIT_OK;
}

int cmd_keygen(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"force", no_argument, NULL, 'f'},
		{"key", required_argument, NULL, 'k'},
		{"user", required_argument, NULL, 'u'},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct keygen k = {.key = DEFAULT_KEY, .user = DEFAULT_USER};
	struct stat st;
	int opt, rc, had_key;

	while ((opt = getopt_long(argc, argv, ":hfk:u:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case 'f':
			k.force = 1;
			break;
		case 'k':
			k.key = optarg;
			k.key_given = 1;
			break;
		case 'u':
			k.user = optarg;
			k.user_given = 1;
			break;
		default:
			rc = cli_common_opt(c, "keygen", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("keygen", argc, argv)) != EXIT_OK)
		return rc;
	k.pub = c->pubkey;
	if ((rc = check_identity(&k)) != EXIT_OK)
		return rc;
	if (sodium_init() < 0) {
		cli_err("keygen: libsodium: initialisation failed");
		return EXIT_FAIL;
	}
	had_key = lstat(k.key, &st) == 0;
	if (!had_key && errno != ENOENT) {
		cli_err("keygen: %s: %s", k.key, strerror(errno));
		return EXIT_FAIL;
	}
	if (had_key && !k.force)
		return existing(&k);
	return generate(&k, had_key);
}
