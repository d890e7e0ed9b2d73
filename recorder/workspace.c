/* SPDX-License-Identifier: ISC */
/*
 * The audit side of --workspace (docs/workspace.md): the changeset
 * manifest the collector sends (its SHA-256 signed into END) and sbx
 * apply's APPLY records (SBX_DESC_APPLY: the code fd is the client's
 * report, checked against the run's END before it is recorded).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <bsd/string.h>
#include <jansson.h>
#include <sodium.h>

#include "clock.h"
#include "version.h"
#include "fdio.h"
#include "log.h"
#include "recorder.h"
#include "workspace.h"

/* The current line is whole: classify it by its first bytes. */
static void scan_line(struct ws_scan *s)
{
	if (s->head_len >= 6 && memcmp(s->head, "entry ", 6) == 0)
		s->entries++;
	else if (s->head_len >= 15 && memcmp(s->head, "end incomplete ", 15) == 0) {
		s->incomplete = true;
		snprintf(s->reason, sizeof(s->reason), "%.*s", (int)(s->head_len - 15), s->head + 15);
	}
	s->head_len = 0;
}

void ws_scan_feed(struct ws_scan *s, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t k = nl != NULL ? (size_t)(nl - buf) : n;
		size_t room = sizeof(s->head) - s->head_len;

		/* a line is classified by its head only, which is carried over
		 * to the next read when the line does not end in this one */
		memcpy(s->head + s->head_len, buf, k < room ? k : room);
		s->head_len += k < room ? k : room;
		if (nl == NULL)
			return;
		scan_line(s);
		buf += k + 1;
		n -= k + 1;
	}
}

void ws_scan_end(struct ws_scan *s)
{
	/* a last line without its newline is a line for sbx apply's loader
	 * (client/workspace.c) too */
	if (s->head_len > 0)
		scan_line(s);
}

void ws_take_manifest(struct rec *c, int fd)
{
	const unsigned int seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	crypto_hash_sha256_state h;
	struct ws_scan scan = {0};
	char buf[65536];
	struct stat st;
	off_t off = 0;
	ssize_t n;

	if (c->cs_have || fstat(fd, &st) < 0 || (uint64_t)st.st_size > SBX_CS_MANIFEST_MAX ||
	    (fcntl(fd, F_GET_SEALS) & (int)seals) != (int)seals) {
		strlcpy(c->cs_missing, "the collector sent a manifest that is not a sealed memfd", sizeof(c->cs_missing));
		close(fd);
		return;
	}
	crypto_hash_sha256_init(&h);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crypto_hash_sha256_update(&h, (const unsigned char *)buf, (unsigned long long)n);
		ws_scan_feed(&scan, buf, (size_t)n);
		off += n;
	}
	close(fd);
	if (n < 0 || off != st.st_size) {
		strlcpy(c->cs_missing, "the manifest could not be read", sizeof(c->cs_missing));
		c->cs_entries = 0;
		return;
	}
	ws_scan_end(&scan);
	c->cs_entries = scan.entries;
	if (scan.incomplete)
		snprintf(c->cs_missing, sizeof(c->cs_missing), "incomplete: %s", scan.reason);
	crypto_hash_sha256_final(&h, c->cs_sha256);
	c->cs_have = true;
}

void ws_note(struct rec *c, const char *msg, size_t n)
{
	snprintf(c->cs_missing, sizeof(c->cs_missing), "%.*s", (int)(n > 200 ? 200 : n), msg);
}

int ws_end_fields(struct rec *c, struct sbx_record *end, char *err, size_t errlen)
{
	if (!(c->d->flags & SBX_DESC_WORKSPACE))
		return 0;
	if (!c->cs_have && c->cs_missing[0] == '\0')
		strlcpy(c->cs_missing, "no changeset: the collector ended before it sent one", sizeof(c->cs_missing));
	if (c->cs_have && (sbx_rec_put_digest(end, SBX_F_WS_CHANGESET, c->cs_sha256, err, errlen) < 0 ||
			   sbx_rec_put_u64(end, SBX_F_WS_ENTRIES, c->cs_entries, err, errlen) < 0))
		return -1;
	if (c->cs_missing[0] && sbx_rec_put_str(end, SBX_F_WS_MISSING, c->cs_missing, err, errlen) < 0)
		return -1;
	return 0;
}

json_t *ws_result_json(const struct rec *c)
{
	char hex[65];

	if (!(c->d->flags & SBX_DESC_WORKSPACE))
		return NULL;
	if (!c->cs_have)
		return json_pack("{s:n, s:I, s:s}", "sha256", "entries", (json_int_t)0, "missing", c->cs_missing);
	sbx_hex(c->cs_sha256, 32, hex);
	return json_pack("{s:s, s:I, s:o}", "sha256", hex, "entries", (json_int_t)c->cs_entries, "missing",
			 c->cs_missing[0] ? json_string(c->cs_missing) : json_null());
}

/* sbx apply's report (docs/workspace.md "The apply report"): key value lines. */
struct report {
	char phase[16], run[SBX_ID_LEN + 1], sha[65], subset[16], result[32], begin[SBX_ID_LEN + 1];
	uint64_t files;
	char paths[16385]; /* "path" lines, '\n'-joined, at most 16384 bytes */
	size_t paths_len;
};

static bool hex_id(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool word(const char *s, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (strcmp(s, *allowed) == 0)
			return true;
	return false;
}

static const char *parse_report(char *text, struct report *r)
{
	static const char *const phases[] = {"begin", "end", NULL};
	static const char *const subsets[] = {"all", "only", NULL};
	static const char *const results[] = {"begun", "applied", "partial", "conflict", NULL};
	char *line, *save = NULL;
	bool first = true;

	memset(r, 0, sizeof(*r));
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, ' ');
		if (first) {
			if (strcmp(line, "sbx-apply 1") != 0)
				return "not an sbx-apply 1 report";
			first = false;
			continue;
		}
		if (v == NULL)
			return "a line without a value";
		*v++ = '\0';
		if (strcmp(line, "phase") == 0 && word(v, phases))
			strlcpy(r->phase, v, sizeof(r->phase));
		else if (strcmp(line, "run") == 0 && hex_id(v, SBX_ID_LEN))
			strlcpy(r->run, v, sizeof(r->run));
		else if (strcmp(line, "begin") == 0 && hex_id(v, SBX_ID_LEN))
			strlcpy(r->begin, v, sizeof(r->begin));
		else if (strcmp(line, "changeset") == 0 && hex_id(v, 64))
			strlcpy(r->sha, v, sizeof(r->sha));
		else if (strcmp(line, "subset") == 0 && word(v, subsets))
			strlcpy(r->subset, v, sizeof(r->subset));
		else if (strcmp(line, "result") == 0 && word(v, results))
			strlcpy(r->result, v, sizeof(r->result));
		else if (strcmp(line, "files") == 0 && v[0] >= '0' && v[0] <= '9')
			r->files = strtoull(v, NULL, 10);
		else if (strcmp(line, "path") == 0) {
			size_t k = strlen(v);
			/* past 16384 bytes the list stops, the count (files) stays whole */
			if (r->paths_len + k + 1 <= 16384) {
				memcpy(r->paths + r->paths_len, v, k);
				r->paths_len += k;
				r->paths[r->paths_len++] = '\n';
			}
		} else
			return "an unknown or malformed line";
	}
	if (first || !r->phase[0] || !r->run[0] || !r->sha[0] || !r->subset[0] || !r->result[0])
		return "a required line is missing (phase, run, changeset, subset, result)";
	if ((strcmp(r->phase, "begin") == 0) != (strcmp(r->result, "begun") == 0))
		return "phase and result do not match";
	if (r->paths_len > 0)
		r->paths[--r->paths_len] = '\0';
	return NULL;
}

_Noreturn void ws_apply_run(struct rec *c, const char *origin)
{
	const struct sbx_run_desc *d = c->d;
	struct sbx_record rec;
	static struct report rp;
	char err[SBX_ERR_LEN], *text;
	const char *bad, *verdict = "malformed report";
	unsigned char sha[32] = {0};
	json_t *res;

	rec_read_end(c);
	bad = parse_report(c->code, &rp);
	if (rec_log_open(&c->log, origin, err, sizeof(err)) < 0) {
		rec_message(c, "audit log unavailable: the apply was not recorded: %s", err);
		outq_flush(&c->q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	if (bad == NULL && rec_log_changeset_check(c->log, rp.run, d->uid, rp.sha, &verdict, err, sizeof(err)) < 0) {
		rec_message(c, "audit log unavailable: %s", err);
		outq_flush(&c->q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	if (bad == NULL && sodium_hex2bin(sha, sizeof(sha), rp.sha, 64, NULL, NULL, NULL) != 0)
		bad = "a changeset digest that is not hex";
	/* a begin the log does not vouch for is refused: nothing is written */
	const char *result = bad != NULL || (strcmp(verdict, "verified") != 0 && strcmp(rp.phase, "begin") == 0)
				     ? "refused"
				     : rp.result;
	rec_fill_common(&rec, c);
	rec.kind = SBX_REC_APPLY;
	rec.policy[0] = rec.language[0] = '\0';
	memset(rec.policy_sha256, 0, 32);
	rec.argv_len = 0;
	if (sbx_rec_put_str(&rec, SBX_F_APPLY_RUN, bad ? "" : rp.run, err, sizeof(err)) < 0 ||
	    sbx_rec_put_digest(&rec, SBX_F_APPLY_CHANGESET, sha, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_APPLY_CHECK, bad ? bad : verdict, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_APPLY_PHASE, bad ? "" : rp.phase, err, sizeof(err)) < 0 ||
	    sbx_rec_put_str(&rec, SBX_F_APPLY_SUBSET, bad ? "" : rp.subset, err, sizeof(err)) < 0 ||
	    (rp.paths_len > 0 && sbx_rec_put_str(&rec, SBX_F_APPLY_PATHS, rp.paths, err, sizeof(err)) < 0) ||
	    sbx_rec_put_str(&rec, SBX_F_APPLY_RESULT, result, err, sizeof(err)) < 0 ||
	    sbx_rec_put_u64(&rec, SBX_F_APPLY_FILES, rp.files, err, sizeof(err)) < 0 ||
	    (rp.begin[0] && sbx_rec_put_str(&rec, SBX_F_APPLY_BEGIN, rp.begin, err, sizeof(err)) < 0) ||
	    sbx_rec_put_str(&rec, SBX_F_SBX_VERSION, SBX_VERSION, err, sizeof(err)) < 0 ||
	    rec_log_append(c->log, &rec, c->chain, err, sizeof(err)) < 0) {
		rec_message(c, "audit log unavailable: the apply was not recorded: %s", err);
		syslog(LOG_ERR, "apply=%s APPLY record not written: %s", d->run_id, err);
		outq_flush(&c->q, sbx_mono_ms() + 1000);
		_exit(1);
	}
	sbx_rext_free(&rec.ext);
	if (rec_log_checkpoint(c->log, d, err, sizeof(err)) < 0)
		syslog(LOG_WARNING, "apply=%s checkpoint not written: %s", d->run_id, err);
	syslog(LOG_INFO, "apply=%s user=%s uid=%u run=%s phase=%s result=%s check=%s seq=%" PRIu64, d->run_id,
	       d->user, (unsigned)d->uid, bad ? "-" : rp.run, bad ? "-" : rp.phase, result, bad ? bad : verdict,
	       rec.seq);
	rec_log_close(c->log);
	res = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:I}, s:{s:I}}", "id", d->run_id, "apply", "run",
			bad ? "" : rp.run, "check", bad ? bad : verdict, "phase", bad ? "" : rp.phase, "result", result,
			"files", (json_int_t)rp.files, "audit", "seq", (json_int_t)rec.seq);
	text = res ? json_dumps(res, JSON_COMPACT) : NULL;
	if (text != NULL)
		outq_frame_take(&c->q, SBX_FRAME_RESULT, text, strlen(text));
	outq_flush(&c->q, sbx_mono_ms() + SBX_FLUSH_MS);
	_exit(0);
}
