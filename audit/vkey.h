/* SPDX-License-Identifier: ISC */
/*
 * C2SP verifier keys (c2sp.org/signed-note, "Verifier keys"):
 * NAME+HASH+KEY where HASH is the key id (SHA-256(NAME || 0x0A || 0x01 ||
 * public key)[:4]) in 8 lower-case hex digits and KEY the base64 of the
 * signature type 0x01 (Ed25519) followed by the 32-byte public key. The
 * form Go's golang.org/x/mod/sumdb/note NewVerifier reads.
 */
#ifndef SBX_AUDIT_VKEY_H
#define SBX_AUDIT_VKEY_H
#include <stddef.h>

#include "record.h"

/* Longest verifier key: name, '+', 8 hex digits, '+', base64 of 33 bytes. */
#define VKEY_MAX (SBX_ORIGIN_MAX + 1 + 8 + 1 + 44 + 1)

/* Write the verifier key of (name, pk) into out (VKEY_MAX bytes). Returns
 * 0, -1 when name cannot be a key name. */
int vkey_format(const char *name, const unsigned char *pk, char *out);

/* Parse a verifier key (len bytes): name (SBX_ORIGIN_MAX + 1 bytes) and
 * pk. Returns 0, or -1 with err saying which part is wrong (the key id
 * must match the name and key). */
int vkey_parse(const char *s, size_t len, char *name, unsigned char *pk, char *err,
	       size_t errlen);

#endif
