/* SPDX-License-Identifier: ISC */
/* sbx-image's messages and its check of package names. */
#include "image.h"

#include <stdarg.h>
#include <string.h>

void img_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx-image: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int img_valid_package(const char *s)
{
	const char *eq = strchr(s, '=');
	size_t n = eq ? (size_t)(eq - s) : strlen(s);

	/* Policy 5.6.1: [a-z0-9][a-z0-9+.-]+ */
	if (n < 2 || n > 128 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || strchr("+.-", s[i])))
			return 0;
	if (eq == NULL)
		return 1;
	/* Policy 5.6.12: [epoch:]upstream[-revision], [A-Za-z0-9.+~:-] */
	if (eq[1] == '\0' || strlen(eq + 1) > 128)
		return 0;
	for (const char *p = eq + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      strchr(".+~:-", *p)))
			return 0;
	return 1;
}
