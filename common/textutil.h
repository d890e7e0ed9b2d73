/* SPDX-License-Identifier: ISC */
/* Text helpers for data the sandbox produced (untrusted bytes). */
#ifndef SBX_TEXTUTIL_H
#define SBX_TEXTUTIL_H
#include <stddef.h>
#include <stdio.h>

/*
 * Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF; a NUL byte is a sequence of 1), or 0
 * when it is invalid, cut short or n is 0. The one validator of the tree.
 */
size_t sbx_utf8_seq(const unsigned char *s, size_t n);

/*
 * Copy len bytes of possibly invalid UTF-8 into a new NUL-terminated
 * string, replacing every invalid or truncated sequence and every NUL
 * byte with U+FFFD (as WHATWG's "decode" does). Returns malloc'ed memory
 * (caller frees) or NULL when out of memory. Part of audit log format 1
 * (the artifacts column is built with it): never change what it returns.
 */
char *sbx_utf8_sanitize(const char *in, size_t len);

/*
 * Media type of a file from its first bytes (magic numbers: PNG, JPEG,
 * GIF, PDF, SVG, ZIP, gzip, JSON, HTML) and its name's suffix for text
 * formats (.csv, .txt, .json, .md). Defaults to application/octet-stream.
 * Returns a static string.
 */
const char *sbx_media_type(const char *name, const unsigned char *head, size_t n);

/*
 * A path as a changeset manifest writes it (docs/workspace.md): every byte
 * outside '!'..'~', and '%' itself, as %XX (upper-case hex), the rest as
 * it is, so a path is one word of a line whatever its bytes.
 */
void sbx_put_pctpath(FILE *f, const char *p);

#endif
