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

#define MAGIC "sbx-signer state 1\n"

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

int sign_state_load(const char *path, struct sign_state *st, char *err, size_t errlen)
{
	char buf[8192], *e;
	const char *p, *end;
	unsigned char fr[SBX_FRONTIER_MAX];
	size_t n = 0, bin;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	memset(st, 0, sizeof(*st));
	sbx_mtree_init(&st->tree);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	p = buf;
	end = buf + n;
	if (n < sizeof(MAGIC) - 1 || memcmp(buf, MAGIC, sizeof(MAGIC) - 1) != 0)
		goto bad;
	p += sizeof(MAGIC) - 1;
	if (strncmp(p, "head ", 5) != 0)
		goto bad;
	st->head = strtoull(p + 5, &e, 10);
	if (*e != '\n')
		goto bad;
	p = e + 1;
	if (line_hex(&p, end, "chain", st->head_chain, 32, &bin) < 0 || bin != 32 ||
	    line_hex(&p, end, "tree", fr, sizeof(fr), &bin) < 0 ||
	    sbx_mtree_load(&st->tree, fr, bin) < 0 || st->tree.size != st->head)
		goto bad;
	if (strncmp(p, "checkpoint ", 11) != 0)
		goto bad;
	st->ckpt = strtoull(p + 11, &e, 10);
	if (*e != '\n' || st->ckpt > st->head)
		goto bad;
	p = e + 1;
	if (line_hex(&p, end, "checkpoint-root", st->ckpt_root, 32, &bin) < 0 || bin != 32)
		goto bad;
	if (p < end) {
		if (line_hex(&p, end, "prev-chain", st->prev_chain, 32, &bin) < 0 || bin != 32 ||
		    line_hex(&p, end, "prev-tree", fr, sizeof(fr), &bin) < 0 ||
		    sbx_mtree_load(&st->prev_tree, fr, bin) < 0 || st->prev_tree.size + 1 != st->head)
			goto bad;
		st->have_prev = 1;
	}
	st->have = 1;
	return 1;
bad:
	snprintf(err, errlen, "%s: damaged state file (the signer refuses to sign until an "
		 "administrator restores it)", path);
	return -1;
}

static char *hex_of(char *out, const unsigned char *p, size_t n)
{
	return sodium_bin2hex(out, 2 * n + 1, p, n);
}

int sign_state_save(const char *path, const struct sign_state *st, char *err, size_t errlen)
{
	char tmp[4200], text[8192], h1[65], h2[65], fh[2 * SBX_FRONTIER_MAX + 1];
	unsigned char fr[SBX_FRONTIER_MAX];
	size_t n;
	int len, fd;

	n = sbx_mtree_save(&st->tree, fr);
	len = snprintf(text, sizeof(text), MAGIC "head %" PRIu64 "\nchain %s\ntree %s\ncheckpoint %"
		       PRIu64 "\ncheckpoint-root %s\n", st->head, hex_of(h1, st->head_chain, 32),
		       hex_of(fh, fr, n), st->ckpt, hex_of(h2, st->ckpt_root, 32));
	if (st->have_prev && len > 0 && (size_t)len < sizeof(text)) {
		n = sbx_mtree_save(&st->prev_tree, fr);
		len += snprintf(text + len, sizeof(text) - (size_t)len, "prev-chain %s\nprev-tree %s\n",
				hex_of(h1, st->prev_chain, 32), hex_of(fh, fr, n));
	}
	if (len < 0 || (size_t)len >= sizeof(text) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: state too large", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, (size_t)len) != len || fsync(fd) < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
