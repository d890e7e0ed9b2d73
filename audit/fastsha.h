/* sbx-audit: hash the log with OpenSSL's SHA-256 (see fastsha.c). */
#ifndef SBX_AUDIT_FASTSHA_H
#define SBX_AUDIT_FASTSHA_H
void fastsha_init(void);
#endif
