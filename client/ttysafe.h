/* SPDX-License-Identifier: ISC */
/*
 * Payload output shown on the caller's terminal. The code is untrusted, and
 * a terminal obeys what it prints: escape sequences can retitle the window,
 * remap keys, or make some terminals "answer" with text typed into the
 * caller's shell (answerback and report requests, the tty equivalent of
 * TIOCSTI). So when stdout or stderr is a terminal, sbx shows C0 controls
 * other than tab, newline, carriage return and backspace, DEL, and the C1
 * controls U+0080..U+009F in caret or \u notation instead of sending them
 * (as cat -v and less do). Pipes and files get the bytes unchanged, and so
 * does the result JSON.
 */
#ifndef SBX_CLIENT_TTYSAFE_H
#define SBX_CLIENT_TTYSAFE_H
#include <stdbool.h>
#include <stddef.h>

/* Worst-case growth: one input byte becomes at most 6 output bytes. */
#define TTYSAFE_GROWTH 6

struct ttysafe {
	bool lead_c2; /* the previous chunk ended in 0xC2, a possible C1 lead byte */
};

/*
 * Escape n bytes of in into out (room for n * TTYSAFE_GROWTH + 2 bytes);
 * returns the bytes written. State carries a 0xC2 split across chunks.
 */
size_t ttysafe_escape(struct ttysafe *s, const char *in, size_t n, char *out);

/* End of stream: what a held-back 0xC2 becomes (into out, 1 byte max). */
size_t ttysafe_finish(struct ttysafe *s, char *out);

/*
 * A file name the payload chose, for one line of a listing or a diff
 * label: every C0 control (newline, carriage return and tab too, since
 * each would start or shape a line of its own), DEL and backslash as \xHH
 * (backslash as \\), the rest as it is, so a name cannot forge the lines
 * around it nor command a terminal. malloc'ed; NULL when out of memory.
 */
char *ttysafe_name(const char *name);

#endif
