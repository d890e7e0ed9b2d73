/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the setuid helper's command line parser (helper/args.c),
 * the only caller input root code parses. The input is the argument vector
 * after "sbx-helper", arguments separated by NUL bytes. On success the run
 * must hold only values the grammar in common/proto.h allows.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "proto.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)
#define MAX_ARGS 64

static int token_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

static void check_run(const struct run *r)
{
	size_t i;

	REQUIRE(r->code_fd >= 3 && r->code_fd <= SBX_ARG_FD_MAX);
	REQUIRE(r->result_fd >= 3 && r->result_fd <= SBX_ARG_FD_MAX);
	REQUIRE(r->code_fd != r->result_fd);
	REQUIRE(sbx_valid_name(r->lang_name));
	REQUIRE(r->policy_name[0] == '\0' || sbx_valid_name(r->policy_name));
	REQUIRE(r->code_name[0] == '\0' || token_ok(r->code_name, 64));
	REQUIRE(r->session[0] == '\0' || token_ok(r->session, 64));
	REQUIRE(r->attempt >= 1 && r->attempt <= SBX_MAX_ATTEMPTS);
	if (r->parent_id[0] != '\0') {
		REQUIRE(strlen(r->parent_id) == SBX_ID_LEN);
		for (i = 0; i < SBX_ID_LEN; i++)
			REQUIRE(isdigit((unsigned char)r->parent_id[i]) ||
				(r->parent_id[i] >= 'a' && r->parent_id[i] <= 'f'));
	}
	REQUIRE(r->request.wall_ms <= SBX_ARG_TIMEOUT_MAX);
	/* inputs: named pairs, every descriptor named once */
	REQUIRE(r->n_inputs <= SBX_MAX_INPUTS);
	for (i = 0; i < r->n_inputs; i++) {
		int fd = r->inputs[i].fd;
		REQUIRE(fd >= 3 && fd <= 1023 && token_ok(r->inputs[i].name, 64));
		REQUIRE(fd != r->code_fd && fd != r->result_fd && fd != r->work_fd);
		for (size_t j = 0; j < i; j++)
			REQUIRE(fd != r->inputs[j].fd && strcmp(r->inputs[i].name, r->inputs[j].name) != 0);
	}
	REQUIRE(r->work_fd == -1 || (r->work_fd >= 3 && r->work_fd <= 1023 && r->work_fd != r->code_fd &&
				     r->work_fd != r->result_fd));
	REQUIRE(r->request.memory_bytes == 0 || r->request.memory_bytes >= (1U << 20));
	REQUIRE(r->request.pids <= (1U << 22));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	char *argv[MAX_ARGS + 1], *buf, *p, *end;
	char err[HELPER_ERR_LEN];
	int argc = 0;

	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = (char *)"sbx-helper";
	/* Each argument in its own allocation of exactly its size, as the
	 * kernel lays them out back to back: ASan sees overreads. */
	for (p = buf, end = buf + size; argc < MAX_ARGS && p <= end; p += strlen(p) + 1) {
		argv[argc] = strdup(p);
		if (argv[argc] == NULL)
			break;
		argc++;
		if (p == end)
			break;
	}
	argv[argc] = NULL;
	memset(&r, 0, sizeof(r));
	err[0] = '\0';
	if (parse_args(argc, argv, &r, err, sizeof(err)) == 0)
		check_run(&r);
	else
		REQUIRE(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
	while (argc > 1)
		free(argv[--argc]);
	free(buf);
	return 0;
}
