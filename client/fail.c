/* SPDX-License-Identifier: ISC */
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "errcode.h"
#include "errobj.h"
#include "proto.h"

bool cli_json_errors;
bool cli_jsonl_errors;

void cli_print_json_error(const char *code, const char *msg)
{
	json_t *o = result_of_failure(code, msg);
	char *text;

	if (cli_jsonl_errors && o != NULL)
		o = json_pack("{s:s,s:o}", "event", "result", "result", o);
	text = o ? json_dumps(o, cli_jsonl_errors ? JSON_COMPACT : JSON_INDENT(2)) : NULL;

	/* Even without memory, stdout must still hold an object. */
	fputs(text ? text
		   : "{\"outcome\": \"sandbox_error\", \"error\": {\"code\": \"setup\", "
		     "\"message\": \"out of memory\", \"type\": \"setup\", \"hint\": null, "
		     "\"line\": null, \"traceback\": null}}",
	      stdout);
	fputc('\n', stdout);
	fflush(stdout);
	free(text);
	json_decref(o);
}

static void vreport(const char *what, const char *fmt, va_list ap, char *line, size_t size)
	__attribute__((format(printf, 2, 0)));
static void vreport(const char *what, const char *fmt, va_list ap, char *line, size_t size)
{
	int n = snprintf(line, size, "sbx: %s: ", what);

	if (n < 0 || (size_t)n >= size)
		n = 0;
	vsnprintf(line + n, size - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

/* The line on stderr and, with --json, the result of the failure. */
static void fail_report(const char *code, const char *what, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void fail_report(const char *code, const char *what, const char *fmt, va_list ap)
{
	char line[1024];

	vreport(what, fmt, ap, line, sizeof(line));
	if (cli_json_errors)
		cli_print_json_error(code, line);
}

/* The code's exit status (common/errcode.h). */
static void fail_exit(const char *code) __attribute__((noreturn));
static void fail_exit(const char *code)
{
	const struct sbx_errcode *e = sbx_errcode_find(code);

	exit(e != NULL && e->exit_status > 0 ? e->exit_status : SBX_EXIT_FAILURE);
}

void cli_die(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_report("setup", what, fmt, ap);
	va_end(ap);
	fail_exit("setup");
}

void cli_die_usage(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_report("usage", what, fmt, ap);
	va_end(ap);
	fail_exit("usage");
}

void cli_die_code(const char *code, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_report(code, what, fmt, ap);
	va_end(ap);
	fail_exit(code);
}

void cli_warn(const char *what, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vreport(what, fmt, ap, line, sizeof(line));
	va_end(ap);
}
