/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit verify --state: what the auditor's verify saw last, kept
 * outside the log. Version 3 (written since verify became incremental):
 *
 *   sbx-audit verify state 3
 *   head SEQ CHAIN SIG          newest record verified: seq, chain value
 *                               and signature in lower-case hex
 *   base SEQ                    the log's rotation base then (0: none)
 *   frontier HEX                the Merkle tree of records 1..SEQ as its
 *                               frontier (merkle.h sbx_mtree_save)
 *   open RUNID SEQ TIME WALLMS  one per START without END then: run id,
 *                               its seq, realtime (ns) and wall-time
 *                               limit (ms)
 *   <checkpoint note>           newest valid checkpoint (C2SP signed note),
 *                               if the log had one
 *
 * base, frontier and open lines let the next verify walk only the newer
 * records (incremental); without them it walks the whole log. Version 2
 * (head and note) and version 1 (the note alone) are still read. The note
 * is signed, the other lines are not: the file is the auditor's own
 * record and must be kept where the log's writer cannot change it.
 */
#ifndef SBX_AUDIT_STATEFILE_H
#define SBX_AUDIT_STATEFILE_H
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>

#include "merkle.h"
#include "record.h"

/* Bytes of a state file: the note, and open lines (about 140 bytes each)
 * for SBX_STATE_MAX_OPEN runs in progress. */
#define STATE_MAX (2 * 1024 * 1024)

struct state {
	int have_head;
	uint64_t head_seq;
	unsigned char head_chain[32], head_sig[crypto_sign_BYTES];
	int have_tree;                /* base and frontier lines */
	uint64_t base_seq;
	unsigned char frontier[SBX_FRONTIER_MAX];
	size_t frontier_len;
	struct sbx_open_run *open;    /* malloc'd (state_free) */
	size_t n_open;
	const char *note;             /* into the buffer read, or NULL */
	size_t note_len;
};

/* Read path into buf (buflen bytes, NUL-terminated) and parse it into st.
 * Returns 1, 0 if the file does not exist (first use), -1 with err
 * (unreadable, empty, too large, a malformed line: its number). */
int state_read(const char *path, char *buf, size_t buflen, struct state *st,
	       char *err, size_t errlen);
void state_free(struct state *st);

/* Replace path atomically (temporary file beside it, fsync, rename), mode
 * 0644 of the invoker, with version 3 holding what st has (have_head is
 * required; have_tree adds base, frontier and open lines; note may be
 * NULL). Returns 0 or -1 with err. */
int state_write(const char *path, const struct state *st, char *err, size_t errlen);

#endif
