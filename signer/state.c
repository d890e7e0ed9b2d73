/* SPDX-License-Identifier: ISC */
/* sbx-signer's rules and its state file (state.h). */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "record.h"

static void hex8(char *out, size_t n, const unsigned char *h)
{
	char b[17];

	sodium_bin2hex(b, sizeof(b), h, 8);
	snprintf(out, n, "%s...", b);
}

/* The blob is a canonical record of this seq and origin. */
static int canonical(uint64_t seq, const char *origin, const unsigned char *blob, size_t len,
		     char *why, size_t whylen)
{
	struct sbx_record r;
	struct sbx_fval v;
	unsigned char *again = NULL;
	size_t alen = 0;
	char err[200];
	int ok;

	if (sbx_record_decode(blob, len, &r, err, sizeof(err)) < 0) {
		snprintf(why, whylen, "record %" PRIu64 " does not decode: %s", seq, err);
		return 0;
	}
	ok = r.seq == seq;
	if (!ok)
		snprintf(why, whylen, "the record says seq %" PRIu64 ", the request %" PRIu64, r.seq, seq);
	if (ok && sbx_rec_get(&r, SBX_F_ORIGIN, &v) == 1 &&
	    (v.n != strlen(origin) || memcmp(v.p, origin, v.n) != 0)) {
		snprintf(why, whylen, "record %" PRIu64 " names another origin", seq);
		ok = 0;
	}
	if (ok && (sbx_record_encode(&r, &again, &alen, err, sizeof(err)) < 0 || alen != len ||
		   memcmp(again, blob, len) != 0)) {
		snprintf(why, whylen, "record %" PRIu64 " is not in canonical form", seq);
		ok = 0;
	}
	free(again);
	sbx_record_free(&r);
	return ok;
}

enum sign_verdict sign_record(struct sign_state *st, uint64_t seq, const unsigned char prev[32],
			      const char *origin, const unsigned char *blob, size_t len,
			      unsigned char chain[32], char *why, size_t whylen)
{
	unsigned char leaf[32];
	char e[32], g[32];

	if (!canonical(seq, origin, blob, len, why, whylen))
		return SIGN_REFUSE;
	if (!st->have)
		return SIGN_NEED_INIT;
	if (seq <= st->ckpt) {
		snprintf(why, whylen, "record %" PRIu64 " is at or below the checkpoint of %" PRIu64
			 " records already signed (the log was rolled back)", seq, st->ckpt);
		return SIGN_REFUSE;
	}
	sbx_audit_leaf(blob, len, leaf);
	sbx_audit_chain(prev, leaf, chain);
	if (seq == st->head + 1 && memcmp(prev, st->head_chain, 32) == 0) {
		st->have_prev = 1;
		memcpy(st->prev_chain, st->head_chain, 32);
		st->prev_tree = st->tree;
	} else if (seq == st->head && st->have_prev && memcmp(prev, st->prev_chain, 32) == 0) {
		st->tree = st->prev_tree; /* the head never reached the log: replaced */
	} else {
		hex8(e, sizeof(e), st->head_chain);
		hex8(g, sizeof(g), prev);
		snprintf(why, whylen, "record %" PRIu64 " after chain %s does not extend the signed "
			 "head, record %" PRIu64 " with chain %s", seq, g, st->head, e);
		return SIGN_REFUSE;
	}
	st->head = seq;
	memcpy(st->head_chain, chain, 32);
	sbx_mtree_push(&st->tree, leaf);
	return SIGN_DO;
}

enum sign_verdict sign_checkpoint(struct sign_state *st, const struct sbx_checkpoint *cp,
				  char *why, size_t whylen)
{
	unsigned char root[32];

	if (!st->have) {
		snprintf(why, whylen, "no record signed yet");
		return SIGN_REFUSE;
	}
	sbx_mtree_root(&st->tree, root);
	if (cp->size != st->tree.size || sodium_memcmp(root, cp->root, 32) != 0) {
		snprintf(why, whylen, "a checkpoint of %" PRIu64 " records that is not the tree of the "
			 "%" PRIu64 " records signed (inconsistent with the checkpoints signed before)",
			 cp->size, st->tree.size);
		return SIGN_REFUSE;
	}
	st->ckpt = cp->size;
	memcpy(st->ckpt_root, root, 32);
	st->have_prev = 0; /* checkpointed: the head can no longer be replaced */
	return SIGN_DO;
}

enum sign_verdict sign_init(struct sign_state *st, uint64_t size, const unsigned char chain[32],
			    const unsigned char *frontier, size_t flen, char *why, size_t whylen)
{
	struct sbx_mtree t;

	if (st->have) {
		snprintf(why, whylen, "already initialised at record %" PRIu64, st->head);
		return SIGN_REFUSE;
	}
	if (sbx_mtree_load(&t, frontier, flen) < 0 || t.size != size) {
		snprintf(why, whylen, "INIT: not the tree of %" PRIu64 " records", size);
		return SIGN_REFUSE;
	}
	memset(st, 0, sizeof(*st));
	st->have = 1;
	st->head = size;
	memcpy(st->head_chain, chain, 32);
	st->tree = t;
	/* what the log held when the signer came is as good as checkpointed */
	st->ckpt = size;
	sbx_mtree_root(&t, st->ckpt_root);
	return SIGN_DO;
}

/* ---- the file ---- */

/*
 * Two slots of SLOT bytes, written in turn: a save is one pwrite(2) of
 * the slot the older generation is in and one fdatasync(2), and a load
 * takes the newest slot whose checksum holds. A save torn by a crash
 * damages only the slot it was writing, so the signer comes back with the
 * state of the save before, which is the state of the last answer it gave
 * (it answers after the save). This replaces write, fsync and rename(2),
 * whose rename was not durable without an fsync of the directory too
 * (rename(2), fsync(2): "calling fsync() on the file does not ensure that
 * the entry in the directory ... has also reached disk").
 *
 * A slot: "sbx-signer state 2\n", "length N sum H\n" (H: BLAKE2b-256 of
 * the N bytes that follow, crypto_generichash), then "generation G\n" and
 * the lines of version 1. A version-1 file (one text, replaced by rename)
 * is read as generation 0 in slot 0, so the first save after an upgrade
 * goes to slot 1 and leaves it whole.
 */
#define MAGIC1 "sbx-signer state 1\n"
#define MAGIC2 "sbx-signer state 2\n"
#define SLOT 16384
_Static_assert(SLOT > 2 * (2 * SBX_FRONTIER_MAX + 32) + 1024, "a slot holds two frontiers in hex");

static int line_hex(const char **p, const char *end, const char *key, unsigned char *out,
		    size_t max, size_t *n)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t k = strlen(key), bin = 0;

	if (nl == NULL || (size_t)(nl - *p) < k + 1 || memcmp(*p, key, k) != 0 || (*p)[k] != ' ' ||
	    sodium_hex2bin(out, max, *p + k + 1, (size_t)(nl - *p) - k - 1, NULL, &bin, NULL) != 0)
		return -1;
	*n = bin;
	*p = nl + 1;
	return 0;
}

/* "key N\n" at *p, N decimal and nothing else on the line */
static int line_u64(const char **p, const char *end, const char *key, uint64_t *v)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t k = strlen(key);
	char num[24], *e;

	if (nl == NULL || (size_t)(nl - *p) <= k + 1 || (size_t)(nl - *p) - k - 1 >= sizeof(num) ||
	    memcmp(*p, key, k) != 0 || (*p)[k] != ' ' || (*p)[k + 1] < '0' || (*p)[k + 1] > '9')
		return -1;
	memcpy(num, *p + k + 1, (size_t)(nl - *p) - k - 1);
	num[(size_t)(nl - *p) - k - 1] = '\0';
	errno = 0;
	*v = strtoull(num, &e, 10);
	if (*e != '\0' || errno != 0)
		return -1;
	*p = nl + 1;
	return 0;
}

/* The lines both versions share, from p to exactly end. */
static int parse_body(const char *p, const char *end, struct sign_state *st)
{
	unsigned char fr[SBX_FRONTIER_MAX];
	size_t bin;

	memset(st, 0, sizeof(*st));
	sbx_mtree_init(&st->tree);
	if (line_u64(&p, end, "head", &st->head) < 0 ||
	    line_hex(&p, end, "chain", st->head_chain, 32, &bin) < 0 || bin != 32 ||
	    line_hex(&p, end, "tree", fr, sizeof(fr), &bin) < 0 ||
	    sbx_mtree_load(&st->tree, fr, bin) < 0 || st->tree.size != st->head ||
	    line_u64(&p, end, "checkpoint", &st->ckpt) < 0 || st->ckpt > st->head ||
	    line_hex(&p, end, "checkpoint-root", st->ckpt_root, 32, &bin) < 0 || bin != 32)
		return -1;
	if (p < end) {
		if (line_hex(&p, end, "prev-chain", st->prev_chain, 32, &bin) < 0 || bin != 32 ||
		    line_hex(&p, end, "prev-tree", fr, sizeof(fr), &bin) < 0 ||
		    sbx_mtree_load(&st->prev_tree, fr, bin) < 0 || st->prev_tree.size + 1 != st->head ||
		    p != end)
			return -1;
		st->have_prev = 1;
	}
	st->have = 1;
	return 0;
}

/* One slot of n bytes: 0 and *st when it is whole, -1 when it is not. */
static int parse_slot(const char *buf, size_t n, struct sign_state *st)
{
	const char *p = buf, *end = buf + n, *nl;
	unsigned char want[32], got[32];
	uint64_t len, gen;
	size_t bin;

	if (n >= sizeof(MAGIC1) - 1 && memcmp(buf, MAGIC1, sizeof(MAGIC1) - 1) == 0) {
		nl = memchr(buf, '\0', n); /* version 1 is the whole file */
		if (parse_body(buf + sizeof(MAGIC1) - 1, nl != NULL ? nl : end, st) < 0)
			return -1;
		st->gen = 0;
		return 0;
	}
	if (n < sizeof(MAGIC2) - 1 || memcmp(buf, MAGIC2, sizeof(MAGIC2) - 1) != 0)
		return -1;
	p += sizeof(MAGIC2) - 1;
	/* "length N sum H": parsed from a NUL-terminated copy, since the
	 * file's bytes end where a torn write left them (fuzz_signer_state) */
	nl = memchr(p, '\n', (size_t)(end - p));
	{
		char line[128], *e;
		size_t ll = nl != NULL ? (size_t)(nl - p) : sizeof(line);
		if (ll >= sizeof(line))
			return -1;
		memcpy(line, p, ll);
		line[ll] = '\0';
		if (strncmp(line, "length ", 7) != 0 || line[7] < '0' || line[7] > '9')
			return -1;
		errno = 0;
		len = strtoull(line + 7, &e, 10);
		if (errno != 0 || strncmp(e, " sum ", 5) != 0 ||
		    sodium_hex2bin(want, sizeof(want), e + 5, strlen(e + 5), NULL, &bin, NULL) != 0 ||
		    bin != 32)
			return -1;
		p = nl + 1;
	}
	if (len > (uint64_t)(end - p))
		return -1;
	crypto_generichash(got, sizeof(got), (const unsigned char *)p, len, NULL, 0);
	if (sodium_memcmp(got, want, 32) != 0)
		return -1;
	end = p + len;
	if (line_u64(&p, end, "generation", &gen) < 0 || gen == 0 || parse_body(p, end, st) < 0)
		return -1;
	st->gen = gen;
	return 0;
}

int sign_state_load(const char *path, struct sign_state *st, char *err, size_t errlen)
{
	static char buf[2 * SLOT];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t r;

	memset(st, 0, sizeof(*st));
	sbx_mtree_init(&st->tree);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	r = sbx_read_full(fd, buf, sizeof(buf));
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (sign_state_parse(buf, (size_t)r, st) < 0) {
		snprintf(err, errlen, "%s: damaged state file (the signer refuses to sign until an "
			 "administrator restores it)", path);
		return -1;
	}
	return 1;
}

int sign_state_parse(const char *buf, size_t n, struct sign_state *st)
{
	struct sign_state s[2];
	int ok[2];

	ok[0] = parse_slot(buf, n < SLOT ? n : SLOT, &s[0]) == 0;
	ok[1] = n > SLOT && parse_slot(buf + SLOT, n - SLOT > SLOT ? SLOT : n - SLOT, &s[1]) == 0;
	/* each generation has one slot: one found in the other is damage */
	ok[0] = ok[0] && s[0].gen % 2 == 0;
	ok[1] = ok[1] && s[1].gen % 2 == 1;
	if (!ok[0] && !ok[1])
		return -1;
	*st = s[ok[1] && (!ok[0] || s[1].gen > s[0].gen)];
	return 0;
}

static char *hex_of(char *out, const unsigned char *p, size_t n)
{
	return sodium_bin2hex(out, 2 * n + 1, p, n);
}

/* The directory entry of a file just created reaches the disk only with
 * an fsync of the directory (fsync(2)); done once, on the first save.
 * EINVAL and EBADF mean the file system cannot sync a directory (fsync(2):
 * "does not support synchronization"; CIFS, some FUSE file systems): the
 * file's own fdatasync stands, as in coreutils and Dovecot. */
static int sync_parent(const char *path)
{
	char dir[4200];
	const char *slash = strrchr(path, '/');
	int fd, rc;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= sizeof(dir))
		return -1;
	fd = open(dir[0] != '\0' ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd) < 0 && errno != EINVAL && errno != EBADF ? -1 : 0;
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

int sign_state_save(const char *path, const struct sign_state *st, char *err, size_t errlen)
{
	static char text[SLOT], body[SLOT], fh[2 * SBX_FRONTIER_MAX + 1];
	char h1[65], h2[65];
	unsigned char fr[SBX_FRONTIER_MAX], sum[32];
	const uint64_t gen = st->gen + 1;
	size_t n;
	int len, hlen, fd, created = 0;

	n = sbx_mtree_save(&st->tree, fr);
	len = snprintf(body, sizeof(body), "generation %" PRIu64 "\nhead %" PRIu64 "\nchain %s\ntree %s\n"
		       "checkpoint %" PRIu64 "\ncheckpoint-root %s\n", gen, st->head,
		       hex_of(h1, st->head_chain, 32), hex_of(fh, fr, n), st->ckpt,
		       hex_of(h2, st->ckpt_root, 32));
	if (st->have_prev && len > 0 && (size_t)len < sizeof(body)) {
		n = sbx_mtree_save(&st->prev_tree, fr);
		len += snprintf(body + len, sizeof(body) - (size_t)len, "prev-chain %s\nprev-tree %s\n",
				hex_of(h1, st->prev_chain, 32), hex_of(fh, fr, n));
	}
	if (len < 0 || (size_t)len >= sizeof(body)) {
		snprintf(err, errlen, "%s: state too large", path);
		return -1;
	}
	crypto_generichash(sum, sizeof(sum), (const unsigned char *)body, (unsigned long long)len, NULL, 0);
	hlen = snprintf(text, sizeof(text), MAGIC2 "length %d sum %s\n", len, hex_of(h1, sum, 32));
	if (hlen < 0 || (size_t)hlen + (size_t)len > sizeof(text)) {
		snprintf(err, errlen, "%s: state too large", path);
		return -1;
	}
	memcpy(text + hlen, body, (size_t)len);
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		created = fd >= 0;
	}
	/* the bytes after the text are the slot's old ones: the length ends it */
	const size_t total = (size_t)hlen + (size_t)len;
	if (fd < 0 || pwrite(fd, text, total, (off_t)(gen % 2) * SLOT) != (ssize_t)total ||
	    fdatasync(fd) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (created && sync_parent(path) < 0) {
		snprintf(err, errlen, "%s: fsync of its directory: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
