/* SPDX-License-Identifier: ISC */
/*
 * sbx-audit export: finished runs (START joined with END) for a SIEM, one
 * JSON object or CSV row per run, in END order. Resumable: the cursor is
 * the END seq of the last run exported. Appends take the write lock and
 * number records in commit order, so every run with a smaller END seq is
 * already visible when a larger one is: nothing is skipped. Delivery is
 * at least once: the cursor is saved only after the output was flushed.
 */
#include "cli.h"
#include "exportrec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditdb.h"
#include "runs.h"
#include "units.h"

static void help(void)
{
	printf("usage: " PROG " export --format jsonl|csv|records [--since-seq N | --resume FILE]\n"
	       "\n"
	       "Every finished run whose END record has a seq greater than N, oldest\n"
	       "first: one JSON object a line (jsonl) or a CSV header and one row a run.\n"
	       "Columns (JSON keys): id start_seq end_seq time end_time uid user host policy\n"
	       "language code_sha256 session attempt parent_id outcome exit_code signal\n"
	       "limit_fired wall_ms cpu_ms memory_peak_bytes stdout_bytes stderr_bytes\n"
	       "artifacts fields (see sbx-audit(1)); fields is an object of the record\n"
	       "fields of format version 2 (inputs, environment, ...), by their JSON key.\n"
	       "\n"
	       "records (a central store's sbx-audit import reads it): the signed\n"
	       "records with a seq greater than N up to the newest checkpoint, the\n"
	       "checkpoints among them and the code and policy texts of the STARTs;\n"
	       "N and the cursor are record seqs, not END seqs (docs/fleet.md).\n"
	       "\n"
	       "  --format FMT     jsonl, csv or records (required)\n"
	       "  --since-seq N    runs whose END seq is greater than N (default 0: all)\n"
	       "  --resume FILE    N is read from FILE (absent: 0); after a complete export\n"
	       "                   the last END seq written replaces it (atomic rename)\n"
	       "  --db PATH, --pubkey PATH   as for every command\n"
	       "\n"
	       "exit status: 0 ok (also when there was nothing new), 1 FILE unusable or\n"
	       "output failed, 2 usage, 3 log unreadable\n");
}

/* FILE holds a decimal seq and an optional newline. */
static int read_cursor(const char *path, uint64_t *seq)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	*seq = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		cli_err("export: --resume %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		cli_err("export: --resume %s: %s", path, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (sbx_parse_uint(buf, INT64_MAX, seq) < 0) {
		cli_err("export: --resume %s: does not hold a seq (a decimal number)", path);
		return -1;
	}
	return 0;
}

/* Write to a temporary file beside FILE, fsync, rename over FILE, fsync
 * the directory: FILE holds the old or the new seq, never a torn one. */
static int write_cursor(const char *path, int64_t seq)
{
	char tmp[4096], line[32], *dcopy;
	int fd, len, ok;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		cli_err("export: --resume %s: path too long", path);
		return -1;
	}
	len = snprintf(line, sizeof(line), "%" PRId64 "\n", seq);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_err("export: --resume %s: %s", tmp, strerror(errno));
		return -1;
	}
	ok = write(fd, line, (size_t)len) == len && fsync(fd) == 0;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
		cli_err("export: --resume %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	dcopy = out_need(strdup(path));
	fd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dcopy);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

enum { O_FORMAT = OPT_FIRST_CMD, O_SINCE_SEQ, O_RESUME };

int cmd_export(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, O_FORMAT},
		{"since-seq", required_argument, NULL, O_SINCE_SEQ},
		{"resume", required_argument, NULL, O_RESUME},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct run_filter f = {.after_end_seq = 0, .with_fields = 1};
	enum run_format fmt = FMT_TABLE;
	const char *resume = NULL;
	int have_fmt = 0, have_since = 0, recs = 0, opt, rc;
	uint64_t v, n;
	int64_t last;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return EXIT_OK;
		case O_FORMAT:
			recs = strcmp(optarg, "records") == 0;
			if (!recs && (runs_parse_format(optarg, &fmt) < 0 || (fmt != FMT_JSONL && fmt != FMT_CSV))) {
				char *e = out_esc(optarg, strlen(optarg), 0);
				cli_err("export: --format '%s': not jsonl, csv or records", e);
				free(e);
				return EXIT_USAGE;
			}
			have_fmt = 1;
			break;
		case O_SINCE_SEQ:
			if (sbx_parse_uint(optarg, INT64_MAX, &v) < 0) {
				char *e = out_esc(optarg, strlen(optarg), 0);
				cli_err("export: --since-seq '%s': not a number", e);
				free(e);
				return EXIT_USAGE;
			}
			f.after_end_seq = (int64_t)v;
			have_since = 1;
			break;
		case O_RESUME:
			resume = optarg;
			break;
		default:
			rc = cli_common_opt(c, "export", opt, argv);
			if (rc >= 0)
				return rc;
		}
	}
	if ((rc = cli_extra_args("export", argc, argv)) != EXIT_OK)
		return rc;
	if (!have_fmt) {
		cli_err("export: --format jsonl, csv or records is required");
		return EXIT_USAGE;
	}
	if (have_since && resume) {
		cli_err("export: --since-seq and --resume exclude each other");
		return EXIT_USAGE;
	}
	if (resume) {
		if (read_cursor(resume, &v) < 0)
			return EXIT_FAIL;
		f.after_end_seq = (int64_t)v;
	}
	if (recs) {
		if (export_records(c, f.after_end_seq, &last) < 0)
			return EXIT_UNREADABLE;
		n = last > f.after_end_seq;
	} else if (runs_print(c, &f, fmt, &n, &last) < 0) {
		return EXIT_UNREADABLE;
	}
	/* The cursor moves only once the rows are out of our hands. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("export: standard output: write failed; --resume file not updated");
		return EXIT_FAIL;
	}
	fsync(STDOUT_FILENO); /* a file or pipe: best effort */
	if (resume && n > 0 && write_cursor(resume, last) < 0)
		return EXIT_FAIL;
	return EXIT_OK;
}
