/* SPDX-License-Identifier: ISC */
/*
 * What START records about a run beyond the fixed fields of version 1
 * (record fields, auditlog/recfield.h): the inputs the payload sees under
 * /in (name, size, SHA-256), the size of the code, and the environment it
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

#include "environment.h"
#include "helper.h"
#include "record.h"
#include "startfacts.h"

/* Sealed memfds (the supervisor checked the seals): pread cannot block,
 * and what is hashed is what the sandbox will read. */
static int hash_sealed(int fd, uint64_t size, const char *what, unsigned char out[32], char *err, size_t errlen)
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

static int hash_input(struct run_input *in, char *err, size_t errlen)
{
	char what[80];

	snprintf(what, sizeof(what), "input %s", in->name);
	if (hash_sealed(in->fd, in->size, what, in->sha256, err, errlen) < 0)
		return -1;
	in->hashed = true;
	return 0;
}

int start_fields(struct sbx_record *rec, struct run *r, struct run_env *env, char *err, size_t errlen)
{
	/* The interpreter as the sandbox runs it, resolved in the tree its /usr
	 * comes from (the policy's image or the host), and that environment */
	run_environment(r->policy.image, r->image_digest, r->argv[0], env);
	if (sbx_rec_put_str(rec, SBX_F_SBX_VERSION, env->sbx_version, err, errlen) < 0 ||
	    sbx_rec_put_u64(rec, SBX_F_CODE_BYTES, r->code_len, err, errlen) < 0)
		return -1;
	if (env->kernel[0] && sbx_rec_put_str(rec, SBX_F_KERNEL, env->kernel, err, errlen) < 0)
		return -1;
	if (r->argv[0] != NULL && sbx_rec_put_str(rec, SBX_F_INTERP_PATH, env->interpreter, err, errlen) < 0)
		return -1;
	if (run_env_fields(rec, env, err, errlen) < 0)
		return -1;
	/* A refused run never reads its inputs (their seals are unchecked). */
	if (r->error[0] != '\0')
		return 0;
	for (size_t i = 0; i < r->n_inputs; i++) {
		struct run_input *in = &r->inputs[i];
		struct sbx_fval v[3] = {
			{.type = SBX_FT_STR, .p = (const unsigned char *)in->name, .n = strlen(in->name)},
			{.type = SBX_FT_U64, .u = in->size},
			{.type = SBX_FT_DIGEST, .p = in->sha256, .n = 32},
		};
		if (hash_input(in, err, errlen) < 0 ||
		    sbx_rec_add_item(rec, SBX_F_INPUTS, v, 3, err, errlen) < 0)
			return -1;
	}
	/* the standard input the client passed (sbx(1)) */
	if (r->stdin_fd >= 0) {
		struct sbx_fval v[2] = {
			{.type = SBX_FT_U64, .u = r->stdin_size},
			{.type = SBX_FT_DIGEST, .p = r->stdin_sha256, .n = 32},
		};
		if (hash_sealed(r->stdin_fd, r->stdin_size, "stdin", r->stdin_sha256, err, errlen) < 0 ||
		    sbx_rec_add_item(rec, SBX_F_STDIN, v, 2, err, errlen) < 0)
			return -1;
		r->stdin_hashed = true;
	}
	return 0;
}
