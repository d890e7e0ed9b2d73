/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit import: a central store takes one host's records export
 * (shipfile.h, written by `sbx-audit export --format records` on the
 * host) into that host's archive (hosts.h), after checking every record
 * against the host's key from the keyring: the signature over the chain
 * that extends what the archive holds, the canonical encoding, the digests
 * of the code and policy texts, and every checkpoint's signature and root.
 * A host whose log no longer extends what the store saw before (rolled
 * back, forked, or a checkpoint over other records) is reported as
 * inconsistent, with an RFC 9162 consistency proof between the newest
 * checkpoint seen before and the new one as the final check. All of it is
 * one SQLite transaction on the archive: a refused export leaves the
 * archive as it was. With a witness key the store then cosigns the new
 * checkpoint (cosign.h, c2sp.org/tlog-cosignature).
 */
#include "cli.h"
#include "cosign.h"
#include "hosts.h"
#include "keyring.h"
#include "shipfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auditdb.h"
#include "checkpoint.h"
#include "merkle.h"

#define EXIT_INCONSISTENT 5

struct imp {
	const char *origin, *dir;
	const unsigned char *pk;
	struct sbx_audit *a;
	sqlite3 *db;
	uint64_t last;                /* the archive's newest seq */
	unsigned char chain[32];      /* and its chain value */
	struct sbx_mtree tree;        /* over its leaves */
	uint64_t seen;                /* newest checkpoint archived before (0: none) */
	unsigned char seen_root[32];
	char msg[SBX_ERR_LEN + 256];  /* why it was refused */
};

static int refuse(struct imp *im, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(struct imp *im, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(im->msg, sizeof(im->msg), fmt, ap);
	va_end(ap);
	return status;
}

static int dberr(struct imp *im, const char *what)
{
	return refuse(im, EXIT_UNREADABLE, "%s: %s: %s", sbx_audit_path(im->a), what,
		      sqlite3_errmsg(im->db));
}

static void hex8(char *out, const unsigned char *h)
{
	sodium_bin2hex(out, 17, h, 8);
}

/* Leaves 1..n of the archive, in order (malloc'd), or NULL. */
static unsigned char (*leaves(struct imp *im, uint64_t n))[32]
{
	unsigned char (*l)[32];
	uint64_t got;

	return sbx_audit_leaves(im->db, n, &l, &got) == 0 ? l : NULL;
}

/* What the archive holds: head, tree, newest checkpoint. */
static int load(struct imp *im)
{
	unsigned char r[32];
	sqlite3_stmt *st;
	struct sbx_checkpoint cp;
	int ok = 1;

	sbx_mtree_init(&im->tree);
	memset(im->chain, 0, 32);
	im->last = im->seen = 0;
	if (sqlite3_prepare_v2(im->db, "SELECT seq, chain FROM records ORDER BY seq DESC LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return dberr(im, "read the archive");
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 1) == 32) {
		im->last = (uint64_t)sqlite3_column_int64(st, 0);
		memcpy(im->chain, sqlite3_column_blob(st, 1), 32);
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(im->db, "SELECT size, note, frontier FROM checkpoints ORDER BY size DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return dberr(im, "read the archive's checkpoints");
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *note = (const char *)sqlite3_column_text(st, 1);
		im->seen = (uint64_t)sqlite3_column_int64(st, 0);
		ok = note != NULL && sbx_checkpoint_parse(note, strlen(note), &cp, NULL, 0) == 0 &&
		     cp.size == im->seen && im->seen == im->last &&
		     sbx_mtree_load(&im->tree, sqlite3_column_blob(st, 2),
				    (size_t)sqlite3_column_bytes(st, 2)) == 0 &&
		     im->tree.size == im->last;
		if (ok)
			memcpy(im->seen_root, cp.root, 32);
	}
	sqlite3_finalize(st);
	if (!ok || (im->seen == 0 && im->last != 0))
		return refuse(im, EXIT_UNREADABLE, "%s: the archive does not end at a checkpoint it "
			      "verified (not written by sbx-audit import?): run sbx-audit verify on it",
			      sbx_audit_path(im->a));
	sbx_mtree_root(&im->tree, r);
	if (im->seen && sodium_memcmp(r, im->seen_root, 32) != 0)
		return refuse(im, EXIT_UNREADABLE, "%s: the archive's stored tree does not match its "
			      "newest checkpoint: run sbx-audit verify on it", sbx_audit_path(im->a));
	return 0;
}

/* The archive's record seq: leaf and chain; 0, or -1 when absent. */
static int archived(struct imp *im, uint64_t seq, unsigned char leaf[32], unsigned char chain[32])
{
	sqlite3_stmt *st;
	int rc = -1;

	if (seq == 0) {
		memset(chain, 0, 32);
		return 0;
	}
	if (sqlite3_prepare_v2(im->db, "SELECT leaf, chain FROM records WHERE seq = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)seq);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) == 32 &&
	    sqlite3_column_bytes(st, 1) == 32) {
		if (leaf)
			memcpy(leaf, sqlite3_column_blob(st, 0), 32);
		memcpy(chain, sqlite3_column_blob(st, 1), 32);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* A shipped record at or below the archive's head: the same one again
 * (an export delivered twice) or a different one the host signed (its
 * log no longer extends the archive). */
static int overlap(struct imp *im, const struct ship_rec *r)
{
	unsigned char leaf[32], have[32], prev[32], chain[32];

	sbx_audit_leaf(r->blob, r->len, leaf);
	if (archived(im, r->seq, have, chain) < 0 || archived(im, r->seq - 1, NULL, prev) < 0)
		return dberr(im, "read the archive");
	if (sodium_memcmp(leaf, have, 32) == 0)
		return 0;
	sbx_audit_chain(prev, leaf, chain);
	if (!sbx_audit_sig_ok(im->pk, im->origin, strlen(im->origin), r->seq, chain, r->sig))
		return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 " is not the archived one and its "
			      "signature does not verify with the host's key: forged record refused",
			      r->line, r->seq);
	return refuse(im, EXIT_INCONSISTENT, "line %zu: record %" PRIu64 " differs from the archived "
		      "record %" PRIu64 " and the host signed it: the host's log was rolled back or forked "
		      "(the store saw a checkpoint of %" PRIu64 " records; this log does not extend it)",
		      r->line, r->seq, r->seq, im->seen);
}

struct vckpt {
	struct sbx_checkpoint cp;
	const struct ship_ckpt *sc;
	unsigned char frontier[SBX_FRONTIER_MAX];
	size_t flen;
};

static int check_root_at(struct imp *im, const struct vckpt *v, const unsigned char root[32])
{
	char a[17], b[17];

	if (sodium_memcmp(root, v->cp.root, 32) == 0)
		return 0;
	hex8(a, v->cp.root);
	hex8(b, root);
	return refuse(im, EXIT_INCONSISTENT, "line %zu: the host's checkpoint of %" PRIu64 " records "
		      "(root %s...) is not consistent with the records (root %s...): the host signed a "
		      "tree of other records", v->sc->line, v->cp.size, a, b);
}

/* A checkpoint within what the archive held before: its root must be
 * the archive's at that size. */
static int old_ckpt(struct imp *im, const struct vckpt *v)
{
	unsigned char (*l)[32], root[32];
	char a[17], b[17];

	l = leaves(im, v->cp.size);
	if (l == NULL)
		return dberr(im, "read leaves");
	sbx_merkle_root((const unsigned char (*)[32])l, v->cp.size, root);
	free(l);
	if (sodium_memcmp(root, v->cp.root, 32) == 0)
		return 0;
	hex8(a, v->cp.root);
	hex8(b, root);
	return refuse(im, EXIT_INCONSISTENT, "line %zu: the host's checkpoint of %" PRIu64 " records "
		      "(root %s...) is inconsistent with the archive's tree at that size (root %s...), "
		      "which the store verified before: the host's log was rolled back or forked",
		      v->sc->line, v->cp.size, a, b);
}

/* RFC 9162 consistency between the newest checkpoint seen before and
 * the new one, from the archive's leaves (now including the new ones). */
static int prove(struct imp *im, const struct vckpt *newest)
{
	unsigned char (*l)[32], proof[SBX_MERKLE_MAX_PATH][32];
	int k;

	if (im->seen == 0 || newest->cp.size <= im->seen)
		return 0;
	l = leaves(im, newest->cp.size);
	if (l == NULL)
		return dberr(im, "read leaves");
	k = sbx_merkle_consistency_proof((const unsigned char (*)[32])l, newest->cp.size, im->seen, proof);
	free(l);
	if (k < 0 || !sbx_merkle_consistency_ok(im->seen, newest->cp.size, im->seen_root, newest->cp.root,
						(const unsigned char (*)[32])proof, (size_t)k))
		return refuse(im, EXIT_INCONSISTENT, "the checkpoint of %" PRIu64 " records is not "
			      "consistent with the checkpoint of %" PRIu64 " seen before (RFC 9162 "
			      "consistency proof fails)", newest->cp.size, im->seen);
	return 0;
}

static int insert_ckpt(struct imp *im, const struct vckpt *v)
{
	struct timespec ts;
	sqlite3_stmt *st;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (sqlite3_prepare_v2(im->db, "INSERT OR IGNORE INTO checkpoints(size, note, frontier, time_ns, kept)"
			       " VALUES(?1, ?2, ?3, ?4, ?5)", -1, &st, NULL) != SQLITE_OK)
		return dberr(im, "insert checkpoint");
	sqlite3_bind_int64(st, 1, (int64_t)v->cp.size);
	sqlite3_bind_text(st, 2, v->sc->note, (int)v->sc->len, SQLITE_STATIC);
	if (v->flen)
		sqlite3_bind_blob(st, 3, v->frontier, (int)v->flen, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	sqlite3_bind_int(st, 5, v->sc->kept);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : dberr(im, "insert checkpoint");
}

/* Every checkpoint: signed by the host, of its origin, sizes increasing. */
static int open_ckpts(struct imp *im, const struct ship *s, struct vckpt *v)
{
	char why[SBX_ERR_LEN];
	size_t i;

	for (i = 0; i < s->nc; i++) {
		v[i].sc = &s->c[i];
		v[i].flen = 0;
		if (sbx_checkpoint_open(s->c[i].note, s->c[i].len, im->pk, &v[i].cp, why, sizeof(why)) < 0)
			return refuse(im, EXIT_FAIL, "line %zu: checkpoint refused: %s", s->c[i].line, why);
		if (strcmp(v[i].cp.origin, im->origin) != 0)
			return refuse(im, EXIT_FAIL, "line %zu: a checkpoint of another origin", s->c[i].line);
		if (i > 0 && v[i].cp.size <= v[i - 1].cp.size)
			return refuse(im, EXIT_FAIL, "line %zu: checkpoints out of order", s->c[i].line);
	}
	return 0;
}

static int add_records(struct imp *im, const struct ship *s, struct vckpt *v, uint64_t *added)
{
	unsigned char leaf[32], chain[32], root[32], prev[32];
	char why[SBX_ERR_LEN];
	size_t i, ci = 0;
	uint64_t next = im->last + 1;
	int rc;

	memcpy(prev, im->chain, 32);
	*added = 0;
	while (ci < s->nc && v[ci].cp.size <= im->last)
		if ((rc = old_ckpt(im, &v[ci++])) != 0)
			return rc;
	for (i = 0; i < s->nr; i++) {
		const struct ship_rec *r = &s->r[i];
		struct sbx_record rec;

		if (r->seq <= im->last) {
			if ((rc = overlap(im, r)) != 0)
				return rc;
			continue;
		}
		if (r->seq != next)
			return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 " does not extend the "
				      "archive, which ends at record %" PRIu64 " (records in between are "
				      "missing: an earlier export not imported, or rotated away on the host)",
				      r->line, r->seq, im->last);
		if (sbx_record_decode(r->blob, r->len, &rec, why, sizeof(why)) < 0)
			return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 " refused: %s", r->line,
				      r->seq, why);
		if (rec.seq != r->seq) {
			sbx_record_free(&rec);
			return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 " holds seq %" PRIu64,
				      r->line, r->seq, rec.seq);
		}
		sbx_audit_leaf(r->blob, r->len, leaf);
		sbx_audit_chain(prev, leaf, chain);
		if (!sbx_audit_sig_ok(im->pk, im->origin, strlen(im->origin), r->seq, chain, r->sig)) {
			sbx_record_free(&rec);
			return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 ": the signature does not "
				      "verify with the host's key over the chain that extends the archive: "
				      "a forged record, or a host log that no longer extends the archive "
				      "(rolled back or forked: an export from --since-seq 0 tells which); refused", r->line, r->seq);
		}
		rec.code = r->code;
		rec.code_len = r->code_len;
		rec.policy_text = r->policy;
		rec.policy_len = r->policy_len;
		rc = sbx_audit_insert_signed(im->a, &rec, r->blob, r->len, leaf, chain, r->sig, im->origin,
					     im->pk, why, sizeof(why));
		rec.code = rec.policy_text = NULL;
		sbx_record_free(&rec);
		if (rc < 0)
			return refuse(im, EXIT_FAIL, "line %zu: record %" PRIu64 " refused: %s", r->line,
				      r->seq, why);
		memcpy(prev, chain, 32);
		sbx_mtree_push(&im->tree, leaf);
		next++;
		(*added)++;
		for (; ci < s->nc && v[ci].cp.size == im->tree.size; ci++) {
			sbx_mtree_root(&im->tree, root);
			if ((rc = check_root_at(im, &v[ci], root)) != 0)
				return rc;
			v[ci].flen = sbx_mtree_save(&im->tree, v[ci].frontier);
		}
	}
	if (ci < s->nc)
		return refuse(im, EXIT_FAIL, "line %zu: a checkpoint of %" PRIu64 " records, but the export "
			      "holds records up to %" PRIu64 " only", v[ci].sc->line, v[ci].cp.size, next - 1);
	if (*added > 0 && (s->nc == 0 || v[s->nc - 1].cp.size != next - 1))
		return refuse(im, EXIT_FAIL, "records after the newest checkpoint: the archive would not end "
			      "at a checkpoint the host signed (export --format records ships up to one)");
	return 0;
}

static int cosign_store(struct imp *im, const struct vckpt *newest, const char *wname,
			const unsigned char *wsk, char **cosigned)
{
	struct timespec ts;
	sqlite3_stmt *st;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	*cosigned = cosign_note(newest->sc->note, newest->sc->len, wname, wsk, (uint64_t)ts.tv_sec);
	if (*cosigned == NULL)
		return refuse(im, EXIT_FAIL, "cosign: the checkpoint note cannot be cosigned");
	if (sqlite3_exec(im->db, "CREATE TABLE IF NOT EXISTS cosigned(size INTEGER NOT NULL, time INTEGER NOT NULL,"
			 " note TEXT NOT NULL, PRIMARY KEY(size, time))", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(im->db, "INSERT OR REPLACE INTO cosigned(size, time, note) VALUES(?1, ?2, ?3)",
			       -1, &st, NULL) != SQLITE_OK)
		return dberr(im, "store the cosignature");
	sqlite3_bind_int64(st, 1, (int64_t)newest->cp.size);
	sqlite3_bind_int64(st, 2, (int64_t)ts.tv_sec);
	sqlite3_bind_text(st, 3, *cosigned, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : dberr(im, "store the cosignature");
}

/* path <- data, by a temporary file, fsync and rename. */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char tmp[4200];
	int fd, ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len && fsync(fd) == 0;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void log_line(const char *hostdir, int status, const char *file, const char *msg)
{
	char path[4200], when[48];
	struct timespec ts;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/import.log", hostdir) >= (int)sizeof(path))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	sbx_iso_time((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, when, sizeof(when));
	f = fopen(path, "ae");
	if (f == NULL)
		return;
	fprintf(f, "%s exit=%d file=", when, status);
	out_str(f, file);
	fputs(" ", f);
	out_str(f, msg);
	fputs("\n", f);
	fclose(f);
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	struct stat sb;
	char *buf;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	*len = 0;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > SHIP_MAX_BYTES) {
		snprintf(err, errlen, "%s: not a regular file of at most %zu bytes", path, SHIP_MAX_BYTES);
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return NULL;
	}
	while (*len < (size_t)sb.st_size && (got = read(fd, buf + *len, (size_t)sb.st_size - *len)) > 0)
		*len += (size_t)got;
	close(fd);
	return buf;
}

static void help(void)
{
	printf("usage: " PROG " import --host ORIGIN --keyring FILE --into DIR\n"
	       "         [--witness-key FILE --witness-name NAME] EXPORTFILE\n"
	       "\n"
	       "Take one host's records export (sbx-audit export --format records on the\n"
	       "host) into its archive DIR/HOST/audit.db, after checking each record's\n"
	       "signature with the host's key from the keyring, that it extends what the\n"
	       "archive holds, and that each checkpoint is signed and consistent with\n"
	       "the records and with the checkpoints seen before (RFC 9162). One\n"
	       "transaction: a refused export imports nothing. An export delivered twice\n"
	       "imports nothing the second time.\n"
	       "\n"
	       "  --host ORIGIN       the host's log origin; the export must name it\n"
	       "  --keyring FILE      one C2SP verifier key a line (sbx-audit key --verifier\n"
	       "                      on each host); '#' comments\n"
	       "  --into DIR          the central store: one directory per host\n"
	       "  --witness-key FILE  cosign the new checkpoint (c2sp.org/tlog-cosignature,\n"
	       "                      Ed25519) with this secret key (sbx-audit keygen);\n"
	       "                      DIR/HOST/checkpoint gets the cosigned note\n"
	       "  --witness-name NAME the cosigner's key name (with --witness-key)\n"
	       "\n"
	       "exit status: 0 imported (or nothing new), 1 refused (malformed export,\n"
	       "forged record, a record that does not extend the archive, host not in the\n"
	       "keyring), 2 usage, 3 export, keyring or archive unreadable, 5 the host's\n"
	       "log is inconsistent with what the store saw before (rolled back or forked)\n");
}

static int run(struct imp *im, const struct ship *s, const char *wname, const unsigned char *wsk,
	       const char *hostdir, char *summary, size_t sumlen)
{
	struct vckpt *v = calloc(s->nc ? s->nc : 1, sizeof(*v));
	char *cosigned = NULL, path[4200];
	uint64_t first, added = 0;
	int rc;

	if (v == NULL)
		return refuse(im, EXIT_FAIL, "out of memory");
	if (sqlite3_exec(im->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		free(v);
		return dberr(im, "begin");
	}
	if ((rc = load(im)) != 0 || (rc = open_ckpts(im, s, v)) != 0)
		goto out;
	first = im->last + 1;
	if ((rc = add_records(im, s, v, &added)) != 0)
		goto out;
	if (s->nc > 0 && (rc = prove(im, &v[s->nc - 1])) != 0)
		goto out;
	for (size_t i = 0; i < s->nc && rc == 0; i++)
		if (v[i].cp.size > im->last)
			rc = insert_ckpt(im, &v[i]);
	if (rc == 0 && wsk != NULL && s->nc > 0 && v[s->nc - 1].cp.size >= im->seen)
		rc = cosign_store(im, &v[s->nc - 1], wname, wsk, &cosigned);
	if (rc != 0)
		goto out;
	if (sqlite3_exec(im->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = dberr(im, "commit");
		goto out;
	}
	if (added > 0)
		snprintf(summary, sumlen, "%s: imported records %" PRIu64 "-%" PRIu64 " (%" PRIu64
			 "), the archive holds %" PRIu64 " records, newest checkpoint %" PRIu64 "%s%s",
			 im->origin, first, first + added - 1, added, im->tree.size,
			 v[s->nc - 1].cp.size, cosigned ? ", cosigned by " : "", cosigned ? wname : "");
	else
		snprintf(summary, sumlen, "%s: nothing new, the archive holds %" PRIu64 " records%s%s",
			 im->origin, im->tree.size, cosigned ? ", cosigned again by " : "",
			 cosigned ? wname : "");
	if (cosigned != NULL &&
	    (snprintf(path, sizeof(path), "%s/checkpoint", hostdir) >= (int)sizeof(path) ||
	     write_atomic(path, cosigned, strlen(cosigned)) < 0))
		cli_err("import: %s/checkpoint: cannot write it: %s (the cosigned note is in the archive, "
			"table cosigned)", hostdir, strerror(errno));
	free(cosigned);
	free(v);
	return 0;
out:
	sqlite3_exec(im->db, "ROLLBACK", NULL, NULL, NULL);
	free(cosigned);
	free(v);
	return rc;
}

int cmd_import(struct cli *c, int argc, char **argv)
{
	enum { O_HOST = OPT_FIRST_CMD, O_KEYRING, O_INTO, O_WKEY, O_WNAME };
	static const struct option opts[] = {
		{"host", required_argument, NULL, O_HOST},
		{"keyring", required_argument, NULL, O_KEYRING},
		{"into", required_argument, NULL, O_INTO},
		{"witness-key", required_argument, NULL, O_WKEY},
		{"witness-name", required_argument, NULL, O_WNAME},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *host = NULL, *ring = NULL, *into = NULL, *wkey = NULL, *wname = NULL, *file;
	unsigned char wsk[crypto_sign_SECRETKEYBYTES];
	char err[SBX_ERR_LEN + 300], hostdir[4200], dbpath[4300], dname[HOST_DIR_MAX], summary[1024];
	const struct keyring_entry *ke;
	struct keyring kr;
	struct ship s;
	struct imp im;
	size_t len;
	char *buf;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_HOST:
			host = optarg;
			break;
		case O_KEYRING:
			ring = optarg;
			break;
		case O_INTO:
			into = optarg;
			break;
		case O_WKEY:
			wkey = optarg;
			break;
		case O_WNAME:
			wname = optarg;
			break;
		default:
			rc = cli_common_opt(c, "import", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if (host == NULL || ring == NULL || into == NULL || optind + 1 != argc) {
		cli_err("import: --host ORIGIN, --keyring FILE, --into DIR and one EXPORTFILE are required");
		return EXIT_USAGE;
	}
	if ((wkey == NULL) != (wname == NULL)) {
		cli_err("import: --witness-key and --witness-name go together");
		return EXIT_USAGE;
	}
	if (wname != NULL && !sbx_note_name_ok(wname)) {
		cli_err("import: --witness-name: not a C2SP key name");
		return EXIT_USAGE;
	}
	if (!sbx_note_name_ok(host)) {
		cli_err("import: --host: not a C2SP key name (a log origin, as HOST/sbx)");
		return EXIT_USAGE;
	}
	file = argv[optind];
	if (keyring_load(ring, &kr, err, sizeof(err)) < 0) {
		cli_err("import: --keyring %s", err);
		return EXIT_UNREADABLE;
	}
	ke = keyring_find(&kr, host);
	if (ke == NULL) {
		cli_err("import: %s: no key for this origin in the keyring %s", host, ring);
		keyring_free(&kr);
		return EXIT_FAIL;
	}
	if (wkey != NULL && sbx_key_load_secret(wkey, wsk, err, sizeof(err)) < 0) {
		cli_err("import: --witness-key %s", err);
		keyring_free(&kr);
		return EXIT_UNREADABLE;
	}
	host_dirname(host, dname);
	if (strlen(into) > 3000 ||
	    snprintf(hostdir, sizeof(hostdir), "%s/%s", into, dname) >= (int)sizeof(hostdir) ||
	    snprintf(dbpath, sizeof(dbpath), "%s/audit.db", hostdir) >= (int)sizeof(dbpath)) {
		cli_err("import: --into: path too long");
		rc = EXIT_USAGE;
		goto done_ring;
	}
	if ((mkdir(into, 0750) < 0 && errno != EEXIST) || (mkdir(hostdir, 0750) < 0 && errno != EEXIST)) {
		cli_err("import: %s: %s", hostdir, strerror(errno));
		rc = EXIT_UNREADABLE;
		goto done_ring;
	}
	buf = slurp(file, &len, err, sizeof(err));
	if (buf == NULL) {
		cli_err("import: %s", err);
		rc = EXIT_UNREADABLE;
		goto done_ring;
	}
	rc = ship_parse(buf, len, &s, err, sizeof(err));
	free(buf);
	if (rc < 0) {
		char *e = out_esc(err, strlen(err), 0);
		cli_err("import: %s: %s: refused, nothing imported", file, e);
		free(e);
		log_line(hostdir, EXIT_FAIL, file, err);
		rc = EXIT_FAIL;
		goto done_ring;
	}
	if (strcmp(s.origin, host) != 0) {
		char *e = out_esc(s.origin, strlen(s.origin), 0);
		cli_err("import: %s: the export is of origin %s, not --host %s: refused", file, e, host);
		free(e);
		log_line(hostdir, EXIT_FAIL, file, "the export is of another origin: refused");
		rc = EXIT_FAIL;
		goto done_ship;
	}
	memset(&im, 0, sizeof(im));
	im.origin = host;
	im.dir = hostdir;
	im.pk = ke->pk;
	if (sbx_audit_open(dbpath, 0, &im.a, err, sizeof(err)) < 0) {
		cli_err("import: %s", err);
		rc = EXIT_UNREADABLE;
		goto done_ship;
	}
	im.db = sbx_audit_db(im.a);
	if (sbx_ckpt_table_create(im.db, "main") < 0) {
		cli_err("import: %s: cannot create the checkpoints table", dbpath);
		rc = EXIT_UNREADABLE;
	} else {
		rc = run(&im, &s, wname, wkey ? wsk : NULL, hostdir, summary, sizeof(summary));
		if (rc == 0) {
			char *e = out_esc(summary, strlen(summary), 0);
			printf("import: %s\n", e);
			free(e);
			log_line(hostdir, 0, file, summary);
		} else {
			char *e = out_esc(im.msg, strlen(im.msg), 0);
			cli_err("import: %s: %s: %s", host, file, e);
			free(e);
			log_line(hostdir, rc, file, im.msg);
		}
	}
	sbx_audit_close(im.a);
done_ship:
	ship_free(&s);
done_ring:
	sodium_memzero(wsk, sizeof(wsk));
	keyring_free(&kr);
	return rc;
}
