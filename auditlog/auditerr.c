/* SPDX-License-Identifier: ISC */
/*
 * sbx_audit_seterr (auditdb.h), on its own so that the code that only
 * formats and signs records (auditkey.c, for sbx-signer) does not pull
 * the SQLite writer into a program (make check-linkage).
 */
#include <stdarg.h>
#include <stdio.h>

#include "auditdb.h"

void sbx_audit_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
