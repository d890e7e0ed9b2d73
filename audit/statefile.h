/* SPDX-License-Identifier: ISC */
/* sbx-audit verify --state: the auditor's saved checkpoint, kept outside
 * the log (a signed C2SP note, so it may be stored anywhere). */
#ifndef SBX_AUDIT_STATEFILE_H
#define SBX_AUDIT_STATEFILE_H
#include <stddef.h>

/* Read path into buf (buflen bytes, NUL-terminated). Returns its length,
 * 0 if the file does not exist (first use), -1 with err on error. */
long state_read(const char *path, char *buf, size_t buflen, char *err, size_t errlen);

/* Replace path with note atomically (temporary file beside it, fsync,
 * rename), mode 0644 of the invoker. Returns 0 or -1 with err. */
int state_write(const char *path, const char *note, char *err, size_t errlen);

#endif
