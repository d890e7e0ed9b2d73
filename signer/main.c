/* SPDX-License-Identifier: ISC */
/*
 * sbx-signer: the only process that holds the audit log's signing key.
 * Exec'd per run by the supervisor as the system user _sbxsign (no
 * capabilities, no_new_privs), with one SOCK_STREAM socket to the
 * recorder at fd 3 (signwire.h); sbx-audit (root) execs it the same way
 * for rotate and checkpoint --write. It answers requests until EOF, each
 * under an exclusive lock of its directory (concurrent runs each have a
 * signer), by the rules of state.h.
 *
 *   sbx-signer [--dir DIR]     default DIR: LOCALSTATEDIR/lib/sbx-signer,
 *                              mode 0700 of _sbxsign: audit.key (0400),
 *                              state, lock
 *
 * Exit status: 0 at EOF, 1 when the key cannot be read, 2 on a malformed
 * request (the writer is told why first) or a failed socket. A request
 * the rules refuse is answered REFUSED (and logged, authpriv).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <syslog.h>
#include <unistd.h>

#include "paths.h"
#include "record.h"
#include "signwire.h"
#include "signdir.h"

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int refuse(int fd, const char *why)
{
	syslog(LOG_WARNING, "refused: %s", why);
	return sbx_sign_send(fd, SBX_SIGN_REFUSED, why, strlen(why));
}

/* One request (signdir.h takes the lock). 0 to go on, 2 on a malformed
 * request, -1 when the socket failed. */
static int handle(int fd, struct signdir *d, unsigned type, const unsigned char *b, size_t n)
{
	char why[400] = "", note[SBX_NOTE_MAX], origin[SBX_ORIGIN_MAX + 1];
	unsigned char out[32 + crypto_sign_BYTES];
	struct sbx_checkpoint cp = {0};
	enum sign_verdict v = SIGN_REFUSE;
	size_t olen;
	int len = 0;

	if ((type == SBX_SIGN_RECORD || type == SBX_SIGN_CHECKPOINT) && n >= 41 &&
	    (olen = b[40]) > 0 && 41 + olen <= n &&
	    (type == SBX_SIGN_RECORD || n == 41 + olen)) {
		memcpy(origin, b + 41, olen);
		origin[olen] = '\0';
		if (!sbx_note_name_ok(origin)) {
			snprintf(why, sizeof(why), "origin is not a valid key name");
		} else if (type == SBX_SIGN_RECORD) {
			v = signdir_record(d, get_u64(b), b + 8, origin, b + 41 + olen, n - 41 - olen,
					   out, out + 32, why, sizeof(why));
		} else {
			snprintf(cp.origin, sizeof(cp.origin), "%s", origin);
			cp.size = get_u64(b);
			memcpy(cp.root, b + 8, 32);
			v = signdir_checkpoint(d, &cp, note, &len, why, sizeof(why));
		}
	} else if (type == SBX_SIGN_INIT && n >= 40) {
		v = signdir_init(d, get_u64(b), b + 8, b + 40, n - 40, why, sizeof(why));
	} else {
		snprintf(why, sizeof(why), "malformed request (type %u, %zu bytes)", type, n);
		refuse(fd, why);
		return 2;
	}
	if (v == SIGN_NEED_INIT)
		return sbx_sign_send(fd, SBX_SIGN_NEED_INIT, NULL, 0) < 0 ? -1 : 0;
	if (v != SIGN_DO)
		return refuse(fd, why[0] ? why : "refused") < 0 ? -1 : 0;
	if (type == SBX_SIGN_RECORD)
		return sbx_sign_send(fd, SBX_SIGN_OK, out, sizeof(out)) < 0 ? -1 : 0;
	if (type == SBX_SIGN_CHECKPOINT)
		return sbx_sign_send(fd, SBX_SIGN_OK, note, (size_t)len) < 0 ? -1 : 0;
	return sbx_sign_send(fd, SBX_SIGN_OK, NULL, 0) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *dir = SBX_SIGNER_DIR;
	struct signdir d;
	char err[512];
	int rc = 0;

	/* a scheduler's cancel signals every process: the run's END still
	 * needs signing; the signer ends at its socket's EOF */
	signal(SIGTERM, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "--dir") == 0) {
		dir = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: sbx-signer [--dir DIR] (fd %d: the socket to the writer)\n",
			SBX_SIGNER_FD);
		return 2;
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	openlog("sbx-signer", LOG_PID, LOG_AUTHPRIV);
	if (sodium_init() < 0)
		return 1;
	if (signdir_open(&d, dir, err, sizeof(err)) < 0) {
		syslog(LOG_ERR, "%s", err);
		fprintf(stderr, "sbx-signer: %s\n", err);
		return 1;
	}
	for (;;) {
		unsigned char *b;
		unsigned type;
		size_t n;
		int r = sbx_sign_recv(SBX_SIGNER_FD, &type, &b, &n);
		if (r <= 0) {
			rc = r < 0 ? 2 : 0;
			break;
		}
		r = handle(SBX_SIGNER_FD, &d, type, b, n);
		free(b);
		if (r != 0) {
			rc = 2;
			break;
		}
	}
	signdir_close(&d);
	return rc;
}
