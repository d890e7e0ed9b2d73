/* SPDX-License-Identifier: ISC */
#ifndef SBX_AUDIT_SHA256_OSSL_H
#define SBX_AUDIT_SHA256_OSSL_H

/* Make every audit-log hash of this process use libcrypto's SHA-256
 * (sha256_ossl.c says why). Call before any thread starts. */
void audit_sha256_fast(void);

#endif
