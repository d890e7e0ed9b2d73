/* SPDX-License-Identifier: ISC */
/*
 * --jsonl: one JSON object per line on stdout, written as things happen,
 * for agent frameworks that read a stream:
 *   {"event":"stdout","data":"..."}   output of the program, as it comes
 *   {"event":"stderr","data":"..."}
 *   {"event":"attempt","attempt":N,"result":{...}}   (--fix: each attempt)
 *   {"event":"fix","attempt":N,"status":"ok|failed|timeout|..."}
 *   {"event":"result","result":{...}}   last; also for sbx's own errors
 */
#ifndef SBX_CLIENT_EVENTS_H
#define SBX_CLIENT_EVENTS_H
#include <stddef.h>
#include <jansson.h>

/* A chunk of a stream may end inside a UTF-8 character: up to 3 bytes
 * wait here for the next chunk, so no character is split into two
 * replacement characters. */
struct utf8_carry {
	char b[4];
	size_t n;
};

/* Print {"event":name,"data":...} for buf (invalid UTF-8 replaced). With
 * len 0, flush what the carry holds (end of stream). */
void event_data(const char *name, struct utf8_carry *c, const char *buf, size_t len);

/* Print {"event":name} with the members of object `members` added
 * (consumed; NULL: none). */
void event_emit(const char *name, json_t *members);

/* Bytes at the end of buf[0..len) that start an incomplete UTF-8
 * character (0 to 3). */
size_t utf8_incomplete_tail(const char *buf, size_t len);

#endif
