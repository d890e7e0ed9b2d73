/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit verify --state: what the auditor's verify saw last, kept
 * outside the log. Version 2 (written since records could be pinned):
 *
 *   sbx-audit verify state 2
 *   head SEQ CHAIN SIG          newest record verified: seq, chain value
 *                               and signature in lower-case hex
 *   <checkpoint note>           newest valid checkpoint (C2SP signed note),
 *                               if the log had one
 *
 * Version 1 was the checkpoint note alone; it is still read. The note is
 * signed, the head line is not: the file is the auditor's own record and
 * must be kept where the log's writer cannot change it.
 */
#ifndef SBX_AUDIT_STATEFILE_H
#define SBX_AUDIT_STATEFILE_H
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>

#define STATE_MAX 16384 /* bytes of a state file */

struct state {
	int have_head;
	uint64_t head_seq;
	unsigned char head_chain[32], head_sig[crypto_sign_BYTES];
	const char *note;   /* into the buffer read, or NULL */
	size_t note_len;
};

/* Read path into buf (buflen bytes, NUL-terminated) and parse it into st.
 * Returns 1, 0 if the file does not exist (first use), -1 with err
 * (unreadable, empty, too large, a malformed head line). */
int state_read(const char *path, char *buf, size_t buflen, struct state *st,
	       char *err, size_t errlen);

/* Replace path atomically (temporary file beside it, fsync, rename), mode
 * 0644 of the invoker, with version 2 holding the head and the note (may
 * be NULL). Returns 0 or -1 with err. */
int state_write(const char *path, uint64_t head_seq, const unsigned char chain[32],
		const unsigned char sig[crypto_sign_BYTES], const char *note,
		char *err, size_t errlen);

#endif
