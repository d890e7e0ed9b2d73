/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit rotate: retention. Moves whole runs older than a cut into an
 * archive log and leaves the live log verifiable from a signed base
 * checkpoint (audit/auditrotate.c: design and crash safety).
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auditdb.h"
#include "paths.h"
#include "rotate.h"
#include "signdir.h"
#include "units.h"

#define DEFAULT_KEY SBX_LOCALSTATEDIR "/lib/sbx-signer/audit.key"
/* The default itself (compared by address): without --key the signer's
 * directory signs, under its rules; with --key that key, alone. */
static const char default_key[] = DEFAULT_KEY;

static void help(void)
{
	printf("usage: " PROG " rotate --older-than AGE --archive FILE [--key PATH]\n"
	       "         [--origin NAME]\n"
	       "\n"
	       "Move the records older than AGE into the archive FILE (an audit log\n"
	       "with the same schema; created if absent, else appended to: it must end\n"
	       "where the log starts). Only a prefix of the log moves, and never a\n"
	       "START without its END. A checkpoint over the moved records is signed\n"
	       "and kept in both logs; the log keeps its chain value and Merkle\n"
	       "frontier, so `" PROG " verify` checks it alone and `" PROG " verify\n"
	       "--archive FILE` checks both. The archive is committed and fsync'd\n"
	       "before anything is deleted from the log; after a crash, run rotate\n"
	       "again with the same archive to finish. The archive gets the log's\n"
	       "group. Needs the secret key (root). Deleting from the log holds its\n"
	       "write lock (runs wait up to 10 s): rotate often, in small steps.\n"
	       "\n"
	       "  --older-than AGE  N followed by s, m, h, d or w (\"90d\")\n"
	       "  --archive FILE    the archive log\n"
	       "  --key PATH        sign with this secret key alone (default: through\n"
	       "                    sbx-signer's directory, with " DEFAULT_KEY ")\n"
	       "  --origin NAME     checkpoint origin (default: the origin of the\n"
	       "                    first record)\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       "Prints \"rotated seq A..B to FILE\" or \"nothing older than AGE\".\n"
	       "exit status: 0 ok, 1 rotation failed (log unchanged), 2 usage, 3 log\n"
	       "or key unreadable\n");
}

static void first_origin(struct sbx_audit *a, char *buf, size_t len)
{
	sqlite3_stmt *st;

	snprintf(buf, len, "localhost");
	if (sqlite3_prepare_v2(sbx_audit_db(a), "SELECT origin FROM records ORDER BY seq LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

/* The archive is read by the same auditors as the log: its group. */
static void share_group(const char *archive, gid_t gid)
{
	static const char *const sfx[] = {"", "-wal", "-shm"};
	char path[4096];
	size_t i;

	if (geteuid() != 0)
		return;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", archive, sfx[i]);
		if (lchown(path, (uid_t)-1, gid) < 0 && errno != ENOENT)
			cli_err("warning: %s: chgrp: %s", path, strerror(errno));
	}
}

static int run(struct cli *c, const char *keypath, const char *origin_opt, int64_t age,
	       const char *archive, const char *age_text)
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	char err[SBX_ERR_LEN], origin[SBX_ORIGIN_MAX + 1];
	struct sbx_rotate_result *res = out_need(malloc(sizeof(*res)));
	static struct signdir d;
	struct sbx_signer sg;
	int use_dir = keypath == default_key;
	struct sbx_audit *a;
	struct timespec ts;
	struct stat st;
	int rc = EXIT_OK;

	/* Opening for writing would create a missing log: refuse a typo. */
	errno = 0;
	if (lstat(c->db, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_err("%s: %s", c->db, errno ? strerror(errno) : "not a regular file");
		free(res);
		return EXIT_UNREADABLE;
	}
	/* the default key is sbx-signer's: sign through its directory, so that
	 * its history (and the next run) goes on from the ROTATE record */
	if (use_dir ? signdir_open(&d, SBX_SIGNER_DIR, err, sizeof(err)) < 0
		    : sbx_key_load_secret(keypath, sk, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		free(res);
		return EXIT_UNREADABLE;
	}
	if (use_dir) {
		memcpy(sk, d.sk, sizeof(sk));
		signdir_signer(&sg, &d);
	}
	if (sbx_audit_open(c->db, 0, &a, err, sizeof(err)) < 0) {
		sodium_memzero(sk, sizeof(sk));
		if (use_dir)
			signdir_close(&d);
		cli_err("%s", err);
		free(res);
		return EXIT_UNREADABLE;
	}
	if (origin_opt != NULL)
		snprintf(origin, sizeof(origin), "%s", origin_opt);
	else
		first_origin(a, origin, sizeof(origin));
	clock_gettime(CLOCK_REALTIME, &ts);
	if (sbx_audit_rotate(a, archive, ((int64_t)ts.tv_sec - age) * 1000000000 + ts.tv_nsec,
			     sk, use_dir ? &sg : NULL, origin, res, err, sizeof(err)) < 0) {
		cli_err("%s", err);
		rc = EXIT_FAIL;
	} else if (res->last == 0) {
		printf("nothing older than %s\n", age_text);
	} else {
		share_group(archive, st.st_gid);
		printf("rotated seq %" PRIu64 "..%" PRIu64 " to ", res->first, res->last);
		out_str(stdout, archive);
		putchar('\n');
	}
	sodium_memzero(sk, sizeof(sk));
	if (use_dir)
		signdir_close(&d);
	sbx_audit_close(a);
	free(res);
	return rc;
}

int cmd_rotate(struct cli *c, int argc, char **argv)
{
	enum { O_OLDER = OPT_FIRST_CMD, O_ARCHIVE, O_KEY, O_ORIGIN };
	static const struct option opts[] = {
		{"older-than", required_argument, NULL, O_OLDER},
		{"archive", required_argument, NULL, O_ARCHIVE},
		{"key", required_argument, NULL, O_KEY},
		{"origin", required_argument, NULL, O_ORIGIN},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *archive = NULL, *key = default_key, *origin = NULL, *age_text = NULL;
	int64_t age = -1;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_OLDER:
			if (sbx_parse_age(optarg, &age) < 0) {
				char *e = out_esc(optarg, strlen(optarg), 0);
				cli_err("rotate: --older-than: '%s' is not an age (N followed by s, m, "
					"h, d or w, e.g. 90d)", e);
				free(e);
				return EXIT_USAGE;
			}
			age_text = optarg;
			break;
		case O_ARCHIVE:
			archive = optarg;
			break;
		case O_KEY:
			key = optarg;
			break;
		case O_ORIGIN:
			origin = optarg;
			break;
		default:
			rc = cli_common_opt(c, "rotate", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("rotate", argc, argv)) != EXIT_OK)
		return rc;
	if (age < 0 || archive == NULL) {
		cli_err("rotate: --older-than and --archive are required (see " PROG " rotate --help)");
		return EXIT_USAGE;
	}
	if (strcmp(archive, c->db) == 0) {
		cli_err("rotate: --archive must not be the log itself");
		return EXIT_USAGE;
	}
	return run(c, key, origin, age, archive, age_text);
}
