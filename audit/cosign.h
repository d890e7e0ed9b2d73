/* SPDX-License-Identifier: ISC */
/*
 * C2SP tlog-cosignature, Ed25519 "cosignature/v1" (c2sp.org/tlog-cosignature):
 * the central store's witness statement that, as of a time, the checkpoint
 * it cosigns is the largest consistent tree head it has seen for the
 * host's log. Key id = SHA-256(NAME || "\n" || 0x04 || public key)[:4];
 * the signature line is "\u2014 NAME base64(key id || u64 BE timestamp ||
 * Ed25519 signature)"; the signed message is "cosignature/v1\n", "time
 * T\n" (POSIX seconds, decimal) and the checkpoint's body with its final
 * newline, without signature lines.
 */
#ifndef SBX_AUDIT_COSIGN_H
#define SBX_AUDIT_COSIGN_H
#include <stddef.h>
#include <stdint.h>

#include "vkey.h"

void cosign_key_id(const char *name, const unsigned char pk[32], unsigned char id[4]);
/* The witness's verifier key, NAME+HASH+base64(0x04 || pk), into out
 * (VKEY_MAX bytes). Returns 0, -1 when name is not a key name. */
int cosign_vkey(const char *name, const unsigned char pk[32], char *out);

/*
 * The note (len bytes, a signed checkpoint already verified) with one
 * more signature line: name's cosignature at time t with sk (64 bytes).
 * Returns a malloc'd NUL-terminated note, or NULL (malformed note, bad
 * name, out of memory).
 */
char *cosign_note(const char *note, size_t len, const char *name, const unsigned char *sk,
		  uint64_t t);

/* 1 if the note carries a valid cosignature by (name, pk); *t gets its
 * time. 0 otherwise. */
int cosign_ok(const char *note, size_t len, const char *name, const unsigned char pk[32],
	      uint64_t *t);

#endif
