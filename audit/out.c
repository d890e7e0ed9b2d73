/* SPDX-License-Identifier: ISC */
/*
 * Output of untrusted text. Record strings come from the caller of the
 * helper and from the payload (stderr excerpts, artifact names), and the
 * log itself may have been edited: printed raw, an escape sequence in them
 * could rewrite what an auditor sees on the terminal.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "auditdb.h"

void *out_need(void *p)
{
	if (p == NULL) {
		cli_err("out of memory");
		exit(EXIT_FAIL);
	}
	return p;
}

static uint32_t decode_cp(const unsigned char *s, size_t k)
{
	static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = s[0] & lead_mask[k];
	size_t i;

	for (i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Code points that reorder or hide text without being controls in C0/C1. */
static int invisible(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *out_esc(const char *s, size_t n, int multiline)
{
	const unsigned char *p = (const unsigned char *)s;
	char *buf = NULL;
	size_t len = 0, i = 0;
	FILE *m = out_need(open_memstream(&buf, &len));

	while (i < n) {
		unsigned char c = p[i];
		size_t k = sbx_utf8_seq(p + i, n - i);

		if (k == 0) {
			fprintf(m, "\\x%02x", c);
			i++;
		} else if (k == 1) {
			/* Multi-line output keeps these as is, like printable
			 * characters (the last branch). */
			if (multiline && (c == '\n' || c == '\t' || c == '\\'))
				fputc(c, m); // NOLINT(bugprone-branch-clone)
			else if (c == '\\')
				fputs("\\\\", m);
			else if (c == '\n')
				fputs("\\n", m);
			else if (c == '\t')
				fputs("\\t", m);
			else if (c < 0x20 || c == 0x7f)
				fprintf(m, "\\x%02x", c);
			else
				fputc(c, m);
			i++;
		} else {
			uint32_t cp = decode_cp(p + i, k);
			if (invisible(cp))
				fprintf(m, "\\u{%04x}", (unsigned)cp);
			else
				fwrite(p + i, 1, k, m);
			i += k;
		}
	}
	if (fclose(m) != 0)
		out_need(NULL);
	return out_need(buf);
}

void out_str(FILE *f, const char *s)
{
	char *e = out_esc(s, strlen(s), 0);

	fputs(e, f);
	free(e);
}

json_t *out_json_str(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	char *clean;

	if (j != NULL)
		return j;
	clean = out_need(sbx_utf8_sanitize(s, n));
	j = json_string(clean);
	free(clean);
	return out_need(j);
}

json_t *out_json_hex(const unsigned char *p, size_t n)
{
	char *hex = out_need(malloc(2 * n + 1));
	json_t *j;

	sodium_bin2hex(hex, 2 * n + 1, p, n);
	j = out_need(json_string(hex));
	free(hex);
	return j;
}

int out_json(json_t *j)
{
	int rc = json_dumpf(j, stdout, JSON_INDENT(2));

	json_decref(j);
	if (rc < 0)
		return -1;
	fputc('\n', stdout);
	return 0;
}
