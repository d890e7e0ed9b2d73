/* SPDX-License-Identifier: ISC */
/*
 * Loading the audit signing key and its public half. The secret key is
 * read by the helper's recorder (as _sbx), so the loader refuses anything
 * that suggests the key is not private: a symlink, a non-regular file,
 * group or other permission bits.
 */
#include "auditdb.h"
#include "record.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEYFILE_MAX 4096 /* bytes; key files are tiny */

/* Read the whole file into buf. Returns the byte count or -1. */
static ssize_t read_small(const char *path, int flags, int private_key,
			  unsigned char *buf, size_t cap, char *err, size_t errlen)
{
	struct stat st;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);

	if (fd < 0) {
		sbx_audit_seterr(err, errlen, "%s: %s", path,
		       errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sbx_audit_seterr(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (private_key && (st.st_mode & 077) != 0) {
		sbx_audit_seterr(err, errlen, "%s: mode %04o: the secret key must not be accessible "
		       "by group or others", path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			sbx_audit_seterr(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			sbx_audit_seterr(err, errlen, "%s: too large for a key file", path);
			close(fd);
			return -1;
		}
	}
	close(fd);
	return (ssize_t)n;
}

/* Accept exactly `want` raw bytes, or 2*want hex digits with surrounding
 * whitespace (a trailing newline). */
static int parse_key(const unsigned char *buf, size_t n, unsigned char *out, size_t want)
{
	size_t start = 0, end = n, binlen = 0;

	if (n == want) {
		memcpy(out, buf, want);
		return 0;
	}
	while (start < end && isspace(buf[start]))
		start++;
	while (end > start && isspace(buf[end - 1]))
		end--;
	if (end - start != 2 * want)
		return -1;
	if (sodium_hex2bin(out, want, (const char *)buf + start, end - start,
			   NULL, &binlen, NULL) != 0 || binlen != want)
		return -1;
	return 0;
}

int sbx_key_load_secret(const char *path, unsigned char *sk, char *err, size_t errlen)
{
	unsigned char buf[KEYFILE_MAX];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk2[crypto_sign_SECRETKEYBYTES];
	unsigned char seed[crypto_sign_SEEDBYTES];
	ssize_t n;
	int ret = -1;

	if (sodium_init() < 0) {
		sbx_audit_seterr(err, errlen, "libsodium: initialisation failed");
		return -1;
	}
	n = read_small(path, O_NOFOLLOW, 1, buf, sizeof(buf), err, errlen);
	if (n < 0)
		goto out;
	if (parse_key(buf, (size_t)n, sk, crypto_sign_SECRETKEYBYTES) < 0) {
		sbx_audit_seterr(err, errlen, "%s: not an Ed25519 secret key (%d bytes or %d hex digits)",
		       path, crypto_sign_SECRETKEYBYTES, 2 * crypto_sign_SECRETKEYBYTES);
		goto out;
	}
	/* libsodium's secret key is seed || public key; a damaged file would
	 * otherwise sign records that can never verify. */
	crypto_sign_ed25519_sk_to_seed(seed, sk);
	crypto_sign_seed_keypair(pk, sk2, seed);
	if (sodium_memcmp(sk2, sk, crypto_sign_SECRETKEYBYTES) != 0) {
		sbx_audit_seterr(err, errlen, "%s: damaged secret key (public half does not match)", path);
		goto out;
	}
	ret = 0;
out:
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(sk2, sizeof(sk2));
	if (ret < 0)
		sodium_memzero(sk, crypto_sign_SECRETKEYBYTES);
	return ret;
}

int sbx_key_load_public(const char *path, unsigned char *pk, char *err, size_t errlen)
{
	unsigned char buf[KEYFILE_MAX];
	ssize_t n;

	if (sodium_init() < 0) {
		sbx_audit_seterr(err, errlen, "libsodium: initialisation failed");
		return -1;
	}
	n = read_small(path, 0, 0, buf, sizeof(buf), err, errlen);
	if (n < 0)
		return -1;
	if (parse_key(buf, (size_t)n, pk, crypto_sign_PUBLICKEYBYTES) < 0) {
		sbx_audit_seterr(err, errlen, "%s: not an Ed25519 public key (%d hex digits)",
		       path, 2 * crypto_sign_PUBLICKEYBYTES);
		return -1;
	}
	return 0;
}
