/* SPDX-License-Identifier: ISC */
/*
 * Witnesses of the recorder's checkpoints (sbx.conf(5) audit_witness_dir,
 * audit_witness_command; issue 14 item 4): copies of every checkpoint
 * note outside the log, which sbx-audit verify --witness checks a log
 * against (a directory of notes, a file of them, a syslog file).
 */
#ifndef SBX_RECORDER_CKPTWITNESS_H
#define SBX_RECORDER_CKPTWITNESS_H
#include <stddef.h>

#include "policy.h" /* SBX_WITNESS_CMD_LEN */

/* Write note into dir as SIZE-DIGEST16.note (mode 0640, O_EXCL, fsync'd;
 * an existing file of that name is this note already). 0, or -1 with err. */
int witness_write_dir(const char *dir, const char *note, char *err, size_t errlen);
/* Run command (a root-owned executable and its arguments, split at
 * blanks, no shell) with note on standard input, an empty environment but
 * PATH, stdout and stderr /dev/null; killed after 5 s. 0 when it exits 0,
 * else -1 with err. */
int witness_run_command(const char *command, const char *note, char *err, size_t errlen);
/* Both, when configured ("" = not); failures go to syslog (LOG_WARNING). */
void witness_deliver(const char *dir, const char *command, const char *run_id, const char *note);

#endif
