/* SPDX-License-Identifier: ISC */
/* The --state file: read whole, replaced atomically so that a crash never
 * leaves the auditor without a trusted checkpoint. */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "sbx-audit verify state 2\n"
#define SIG_HEX ((size_t)2 * crypto_sign_BYTES)

static int unhex(const char *s, size_t n, unsigned char *out, size_t want)
{
	size_t bin = 0;

	return n == 2 * want && sodium_hex2bin(out, want, s, n, NULL, &bin, NULL) == 0 && bin == want
	       ? 0 : -1;
}

/* "head SEQ CHAIN SIG\n" */
static int parse_head(const char *p, const char *end, struct state *st)
{
	const char *chain, *sig, *nl = memchr(p, '\n', (size_t)(end - p));
	char *e;

	if (nl == NULL || strncmp(p, "head ", 5) != 0)
		return -1;
	errno = 0;
	st->head_seq = strtoull(p + 5, &e, 10);
	if (errno != 0 || e == p + 5 || *e != ' ' || st->head_seq == 0)
		return -1;
	chain = e + 1;
	/* the length first: nothing is read past the line */
	if ((size_t)(nl - chain) != 64 + 1 + SIG_HEX || chain[64] != ' ')
		return -1;
	sig = chain + 65;
	if (unhex(chain, 64, st->head_chain, 32) < 0 ||
	    unhex(sig, SIG_HEX, st->head_sig, crypto_sign_BYTES) < 0)
		return -1;
	st->have_head = 1;
	return (int)(nl + 1 - p);
}

static int parse(char *buf, size_t n, struct state *st)
{
	const char *p = buf, *end = buf + n;
	int used;

	memset(st, 0, sizeof(*st));
	if (n >= sizeof(MAGIC) - 1 && memcmp(buf, MAGIC, sizeof(MAGIC) - 1) == 0) {
		p += sizeof(MAGIC) - 1;
		used = parse_head(p, end, st);
		if (used < 0)
			return -1;
		p += used;
	}
	if (p < end) {
		st->note = p;
		st->note_len = (size_t)(end - p);
	}
	return 0;
}

int state_read(const char *path, char *buf, size_t buflen, struct state *st,
	       char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (n + 1 < buflen && (r = read(fd, buf + n, buflen - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (n + 1 >= buflen) {
		snprintf(err, errlen, "%s: too large for a state file", path);
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: empty (delete it to trust the log's current checkpoint)", path);
		return -1;
	}
	if (parse(buf, n, st) < 0) {
		snprintf(err, errlen, "%s: line 2: not \"head SEQ CHAIN SIG\" (a damaged state file)",
			 path);
		return -1;
	}
	return 1;
}

int state_write(const char *path, uint64_t head_seq, const unsigned char chain[32],
		const unsigned char sig[crypto_sign_BYTES], const char *note,
		char *err, size_t errlen)
{
	char tmp[4200], ch[65], sg[2 * crypto_sign_BYTES + 1], *text;
	size_t len;
	int fd;

	sodium_bin2hex(ch, sizeof(ch), chain, 32);
	sodium_bin2hex(sg, sizeof(sg), sig, crypto_sign_BYTES);
	len = (size_t)snprintf(NULL, 0, MAGIC "head %" PRIu64 " %s %s\n%s", head_seq, ch, sg,
			       note ? note : "");
	text = malloc(len + 1);
	if (text == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	snprintf(text, len + 1, MAGIC "head %" PRIu64 " %s %s\n%s", head_seq, ch, sg, note ? note : "");

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		free(text);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0) {
		snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		free(text);
		return -1;
	}
	free(text);
	close(fd);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
