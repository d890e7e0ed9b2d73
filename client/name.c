/* SPDX-License-Identifier: ISC */
#include "name.h"

#include <string.h>

static int allowed(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-';
}

int code_name_valid(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > CODE_NAME_MAX || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!allowed((unsigned char)name[i]))
			return 0;
	return 1;
}

void code_name_from_path(const char *path, char *out)
{
	const char *base = strrchr(path, '/'), *dot;
	char tmp[4096];
	size_t n = 0, len, suffix;

	base = base ? base + 1 : path;
	for (; *base != '\0' && n < sizeof(tmp) - 1; base++) {
		unsigned char c = (unsigned char)*base;
		if (allowed(c))
			tmp[n++] = (char)c;
		else if (n == 0 || tmp[n - 1] != '_')
			tmp[n++] = '_';
	}
	tmp[n] = '\0';
	base = tmp + strspn(tmp, ".");
	len = strlen(base);
	if (len <= CODE_NAME_MAX) {
		memcpy(out, base, len + 1);
		return;
	}
	/* Keep a short suffix: the interpreter does not care, the person
	 * reading a traceback does. */
	dot = strrchr(base, '.');
	suffix = dot && dot != base && strlen(dot) <= 16 ? strlen(dot) : 0;
	memcpy(out, base, CODE_NAME_MAX - suffix);
	memcpy(out + CODE_NAME_MAX - suffix, base + len - suffix, suffix);
	out[CODE_NAME_MAX] = '\0';
}
