/* SPDX-License-Identifier: ISC */
/*
 * What START records about a run beyond the fixed fields of version 1
 * (record fields, auditlog/recfield.h): the inputs the payload sees under
 * /in (name, size, SHA-256), its standard input (size, SHA-256), the size
 * of the code, and the environment it
 * ran in (sbx version, kernel release, interpreter). Runs in the recorder
 * as _sbx, before the payload starts, so the record says what ran on what.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>

#include "allocation.h"
#include "proto.h"
#include "record.h"
#include "recorder.h"
#include "startfacts.h"
#include "version.h"

/* Sealed memfds (the supervisor checked the seals) at their fixed numbers
 * (proto.h): pread cannot block, and what is hashed is what the sandbox
 * will read. */
int hash_sealed(int fd, uint64_t size, const char *what, unsigned char out[32], char *err, size_t errlen)
{
	crypto_hash_sha256_state st;
	unsigned char buf[65536];
	uint64_t off = 0;

	crypto_hash_sha256_init(&st);
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s: read at byte %llu: %s", what, (unsigned long long)off,
				 n < 0 ? strerror(errno) : "file shorter than its size");
			return -1;
		}
		crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
		off += (uint64_t)n;
	}
	crypto_hash_sha256_final(&st, out);
	return 0;
}

static int hash_input(const struct sbx_desc_input *in, int fd, unsigned char sha256[32], char *err,
		      size_t errlen)
{
	char what[80];

	snprintf(what, sizeof(what), "input %s", in->name);
	return hash_sealed(fd, in->size, what, sha256, err, errlen);
}

int start_fields(struct sbx_record *rec, struct rec *c, char *err, size_t errlen)
{
	const struct sbx_run_desc *d = c->d;
	const char *interp = d->argv; /* the first of the NUL-separated argv */

	/* The interpreter as the sandbox runs it, resolved in the tree its /usr
	 * comes from (the policy's image or the host), and that environment */
	run_environment(d->image, d->image_digest, interp[0] != '\0' ? interp : NULL, &c->env);
	if (sbx_rec_put_u64(rec, SBX_F_INPUT_LIMIT, d->limits.input_bytes, err, errlen) < 0 ||
	    sbx_rec_put_str(rec, SBX_F_SBX_VERSION, c->env.sbx_version, err, errlen) < 0 ||
	    sbx_rec_put_u64(rec, SBX_F_CODE_BYTES, (d->flags & SBX_DESC_REFUSED) ? d->code_bytes : c->code_len, err,
			    errlen) < 0)
		return -1;
	/* how many of this user's requests past max_requests_per_minute were
	 * left out of the log since boot (helper/quota.c) */
	if (d->unrecorded_refusals > 0 &&
	    sbx_rec_put_u64(rec, SBX_F_UNRECORDED, d->unrecorded_refusals, err, errlen) < 0)
		return -1;
	if (allocation_fields(rec, d, err, errlen) < 0)
		return -1;
	if (c->refused_hashed && sbx_rec_put_digest(rec, SBX_F_REFUSED_CODE, c->refused_sha256, err, errlen) < 0)
		return -1;
	if (c->env.kernel[0] && sbx_rec_put_str(rec, SBX_F_KERNEL, c->env.kernel, err, errlen) < 0)
		return -1;
	if (interp[0] != '\0' && sbx_rec_put_str(rec, SBX_F_INTERP_PATH, c->env.interpreter, err, errlen) < 0)
		return -1;
	if (run_env_fields(rec, &c->env, err, errlen) < 0)
		return -1;
	/* A refused run's inputs are never passed (their seals are unchecked):
	 * the description lists none. */
	for (uint32_t i = 0; i < d->n_inputs; i++) {
		const struct sbx_desc_input *in = &d->inputs[i];
		struct sbx_fval v[3] = {
			{.type = SBX_FT_STR, .p = (const unsigned char *)in->name, .n = strlen(in->name)},
			{.type = SBX_FT_U64, .u = in->size},
			{.type = SBX_FT_DIGEST, .p = c->input_sha256[i], .n = 32},
		};
		if (hash_input(in, SBX_REC_FD_INPUT0 + (int)i, c->input_sha256[i], err, errlen) < 0 ||
		    sbx_rec_add_item(rec, SBX_F_INPUTS, v, 3, err, errlen) < 0)
			return -1;
	}
	/* the session directory mounted at /work: the --session label is the
	 * caller's claim, this is which directory it was (issue 11, finding 6) */
	if (d->flags & SBX_DESC_WORK) {
		struct sbx_fval v[2] = {
			{.type = SBX_FT_U64, .u = d->work_dev},
			{.type = SBX_FT_U64, .u = d->work_ino},
		};
		if (sbx_rec_add_item(rec, SBX_F_WORKDIR, v, 2, err, errlen) < 0)
			return -1;
	}
	/* --workspace: which directory, and its upper layer's cap */
	if (d->flags & SBX_DESC_WORKSPACE) {
		struct sbx_fval v[2] = {
			{.type = SBX_FT_U64, .u = d->ws_dev},
			{.type = SBX_FT_U64, .u = d->ws_ino},
		};
		if (sbx_rec_add_item(rec, SBX_F_WS_DIR, v, 2, err, errlen) < 0 ||
		    sbx_rec_put_u64(rec, SBX_F_WS_LIMIT, d->limits.workspace_bytes, err, errlen) < 0)
			return -1;
	}
	/* a live session: its own limits (its calls are START/END pairs with
	 * a cell, live.c) */
	if ((d->flags & SBX_DESC_LIVE) &&
	    (sbx_rec_put_u64(rec, SBX_F_LIVE_IDLE, d->limits.live_idle_ms, err, errlen) < 0 ||
	     sbx_rec_put_u64(rec, SBX_F_LIVE_LIFETIME, d->limits.live_lifetime_ms, err, errlen) < 0))
		return -1;
	/* the standard input the client passed (sbx(1)) */
	if (d->flags & SBX_DESC_STDIN) {
		struct sbx_fval v[2] = {
			{.type = SBX_FT_U64, .u = d->stdin_bytes},
			{.type = SBX_FT_DIGEST, .p = c->stdin_sha256, .n = 32},
		};
		if (hash_sealed(SBX_REC_FD_STDIN, d->stdin_bytes, "stdin", c->stdin_sha256, err, errlen) < 0 ||
		    sbx_rec_add_item(rec, SBX_F_STDIN, v, 2, err, errlen) < 0)
			return -1;
		c->stdin_hashed = true;
	}
	return 0;
}
