/* SPDX-License-Identifier: ISC */
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "proto.h"
#include "textutil.h"

bool cli_json_errors;
bool cli_jsonl_errors;

void cli_print_json_error(const char *msg)
{
	char *clean = sbx_utf8_sanitize(msg, strlen(msg));
	json_t *o = json_pack("{s:s,s:{s:s,s:s,s:n,s:n}}", "outcome", "sandbox_error", "error", "type",
			      "sandbox_error", "message", clean ? clean : "out of memory", "line", "traceback");
	char *text;

	if (cli_jsonl_errors && o != NULL)
		o = json_pack("{s:s,s:o}", "event", "result", "result", o);
	text = o ? json_dumps(o, cli_jsonl_errors ? JSON_COMPACT : JSON_INDENT(2)) : NULL;

	/* Even without memory, stdout must still hold an object. */
	fputs(text ? text
		   : "{\"outcome\": \"sandbox_error\", \"error\": {\"type\": \"sandbox_error\", "
		     "\"message\": \"out of memory\", \"line\": null, \"traceback\": null}}",
	      stdout);
	fputc('\n', stdout);
	fflush(stdout);
	free(text);
	json_decref(o);
	free(clean);
}

static void vreport(const char *what, const char *fmt, va_list ap, char *line, size_t size)
{
	int n = snprintf(line, size, "sbx: %s: ", what);

	if (n < 0 || (size_t)n >= size)
		n = 0;
	vsnprintf(line + n, size - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void cli_die(const char *what, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vreport(what, fmt, ap, line, sizeof(line));
	va_end(ap);
	if (cli_json_errors)
		cli_print_json_error(line);
	exit(SBX_EXIT_FAILURE);
}

void cli_warn(const char *what, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vreport(what, fmt, ap, line, sizeof(line));
	va_end(ap);
}
