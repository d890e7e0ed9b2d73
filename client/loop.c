/* SPDX-License-Identifier: ISC */
/*
 * The retry loop. Each attempt is one ordinary run, audited by the helper
 * with the loop's session id, its attempt number and the previous
 * attempt's record id, so an auditor can follow the chain. The loop stops
 * at the first of: success, the attempt cap (the smallest of --max-attempts,
 * the policy's max_attempts and SBX_MAX_ATTEMPTS), the time budget, a fixer
 * that fails, times out or answers no code, code already tried, a signal.
 */
#include "loop.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <jansson.h>
#include <sodium.h>

#include "code.h"
#include "fail.h"
#include "fixdoc.h"
#include "fixer.h"
#include "proto.h"
#include "record.h"
#include "run.h"
#include "signals.h"
#include "clock.h"

struct loop {
	struct run_opts *o;
	char session[24];
	char *code;
	size_t code_len;
	unsigned char tried[SBX_MAX_ATTEMPTS][crypto_hash_sha256_BYTES];
	uint32_t ntried, cap;
	long long start;
	json_t *attempts, *history;
	const char *stop;
	char detail[256];
};


/* Milliseconds of budget left, or INT64_MAX without a budget. */
static long long budget_left(const struct loop *l)
{
	if (l->o->budget_ms == 0)
		return INT64_MAX;
	return (long long)l->o->budget_ms - (sbx_mono_ms() - l->start);
}

static void new_session_id(char *out, size_t len)
{
	unsigned char r[8];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		cli_die("getrandom", "cannot make a session id");
	snprintf(out, len, "fix-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5],
		 r[6], r[7]);
}

static int already_tried(const struct loop *l, const unsigned char *h)
{
	uint32_t i;

	for (i = 0; i < l->ntried; i++)
		if (memcmp(l->tried[i], h, crypto_hash_sha256_BYTES) == 0)
			return 1;
	return 0;
}

static void remember(struct loop *l, const char *code, size_t len)
{
	if (l->ntried < SBX_MAX_ATTEMPTS)
		crypto_hash_sha256(l->tried[l->ntried++], (const unsigned char *)code, len);
}

static json_int_t int_field(json_t *o, const char *k, json_int_t dflt)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* A member or JSON null (borrowed either way, for json_pack "O"). */
static json_t *field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return v != NULL ? v : json_null();
}

static const char *str_field(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* One entry of the final "attempts" list (and of the fixer's history). */
static json_t *summary(json_t *res, uint32_t n, const char *parent)
{
	json_t *tb = json_object_get(res, "traceback");

	return json_pack("{s:I,s:O,s:s?,s:O,s:O,s:O,s:O,s:O,s:O}", "attempt", (json_int_t)n,
			 "id", field(res, "id"), "parent", parent, "outcome", field(res, "outcome"),
			 "exit_code", field(res, "exit_code"), "signal", field(res, "signal"),
			 "wall_ms", field(res, "wall_ms"), "code_sha256", field(res, "code_sha256"),
			 "error_type", field(tb, "type"));
}

static void stop(struct loop *l, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void stop(struct loop *l, const char *reason, const char *fmt, ...)
{
	va_list ap;

	l->stop = reason;
	l->detail[0] = '\0';
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(l->detail, sizeof(l->detail), fmt, ap);
		va_end(ap);
	}
}

static const char *fix_status_name(enum fix_status s)
{
	static const char *const names[] = {"ok", "failed", "timeout", "too_big", "interrupted"};

	return names[s];
}

/*
 * Ask the fixer for attempt n's corrected code. Returns 1 with l->code
 * replaced, or 0 with the stop reason set. Records what the fixer did in
 * the attempt's summary (sum).
 */
static int ask_fixer(struct loop *l, uint32_t n, json_t *res, json_t *sum)
{
	struct fix_ctx c = {
		.attempt = n, .max_attempts = l->cap, .language = l->o->lang,
		.name = l->o->name[0] ? l->o->name : NULL, .session = l->session,
		.code = l->code, .code_len = l->code_len, .history = l->history,
	};
	uint64_t timeout = l->o->fix_timeout_ms ? l->o->fix_timeout_ms : FIX_TIMEOUT_DEFAULT_MS;
	long long left = budget_left(l);
	bool budget_cut = false;
	struct fix_run fr;
	char err[256], why[160];
	unsigned char h[crypto_hash_sha256_BYTES];
	char *doc, *code;
	size_t len = 0;
	int rc = 0;

	if (left <= 0) {
		stop(l, "budget", "the budget of %" PRIu64 " ms is spent", l->o->budget_ms);
		return 0;
	}
	if ((uint64_t)left < timeout) {
		timeout = (uint64_t)left;
		budget_cut = true;
	}
	doc = fix_document(&c, res);
	if (doc == NULL)
		cli_die("fix", "cannot build the fixer's document (out of memory)");
	if (fixer_run(l->o->fix, doc, strlen(doc), timeout, &fr, err, sizeof(err)) < 0)
		cli_die("--fix", "cannot start the fixer: %s", err);
	free(doc);
	json_object_set_new(sum, "fixer", json_pack("{s:s,s:I}", "status", fix_status_name(fr.status),
						     "wall_ms", (json_int_t)fr.wall_ms));
	if (l->o->jsonl)
		event_emit("fix", json_pack("{s:I,s:O}", "attempt", (json_int_t)n, "fixer",
						     json_object_get(sum, "fixer")));
	switch (fr.status) {
	case FIX_OK:
		code = fixer_answer_code(fr.out, fr.out_len, &len, why, sizeof(why));
		if (code == NULL) {
			stop(l, "fixer_failed", "%s", why);
			break;
		}
		crypto_hash_sha256(h, (const unsigned char *)code, len);
		if (already_tried(l, h)) {
			stop(l, "repeated_code", "the fixer answered code already tried");
			free(code);
			break;
		}
		free(l->code);
		l->code = code;
		l->code_len = len;
		rc = 1;
		break;
	case FIX_FAILED:
		stop(l, "fixer_failed", "the fixer %s", fr.detail);
		break;
	case FIX_TIMEOUT:
		if (budget_cut)
			stop(l, "budget", "the budget of %" PRIu64 " ms ran out while the fixer ran",
			     l->o->budget_ms);
		else
			stop(l, "fixer_timeout", "the fixer ran longer than %" PRIu64 " ms", timeout);
		break;
	case FIX_TOO_BIG:
		stop(l, "fixer_failed", "the fixer wrote more than %u bytes", SBX_CODE_MAX);
		break;
	case FIX_INTERRUPTED:
		stop(l, "interrupted", "interrupted while the fixer ran");
		break;
	}
	free(fr.out);
	return rc;
}

/* Tighten this attempt's wall-clock limit to the budget left. Attempt 1
 * is cut only below --timeout: the policy's limit is not known before the
 * first result, and asking for more than the policy is refused. */
static int set_timeout(struct loop *l, uint64_t user_ms, uint64_t known_ms)
{
	long long left = budget_left(l);
	uint64_t base = user_ms ? user_ms : known_ms;

	l->o->timeout_ms = user_ms;
	if (left == INT64_MAX)
		return 1;
	if (left <= 0) {
		stop(l, "budget", "the budget of %" PRIu64 " ms is spent", l->o->budget_ms);
		return 0;
	}
	if (base != 0 && (uint64_t)left < base)
		l->o->timeout_ms = (uint64_t)left;
	return 1;
}

static void progress(const struct loop *l, uint32_t n, json_t *res)
{
	json_t *tb = json_object_get(res, "traceback");
	const char *type = json_string_value(json_object_get(tb, "type"));
	const char *msg = json_string_value(json_object_get(tb, "message"));
	const char *outcome = json_string_value(json_object_get(res, "outcome"));

	if (l->o->json)
		return;
	fprintf(stderr, "sbx: fix: attempt %" PRIu32 " of %" PRIu32 ": %s, exit %" JSON_INTEGER_FORMAT,
		n, l->cap, outcome ? outcome : "?", int_field(res, "exit_code", -1));
	if (type != NULL)
		fprintf(stderr, " (%s%s%s)", type, msg && *msg ? ": " : "", msg ? msg : "");
	fputc('\n', stderr);
}

int run_fix_loop(struct run_opts *o)
{
	struct loop l;
	json_t *last = NULL;
	uint64_t user_timeout = o->timeout_ms, known_wall = 0;
	char parent[SBX_ID_LEN + 1] = "";
	uint32_t n;
	int fd, rc = SBX_EXIT_FAILURE;

	memset(&l, 0, sizeof(l));
	l.o = o;
	if (sodium_init() < 0)
		cli_die("libsodium", "cannot initialise");
	fd = code_memfd(o);
	l.code = code_read_back(fd, &l.code_len);
	close(fd);
	new_session_id(l.session, sizeof(l.session));
	l.cap = o->max_attempts ? (uint32_t)o->max_attempts : SBX_MAX_ATTEMPTS;
	l.start = sbx_mono_ms();
	l.attempts = json_array();
	l.history = json_array();
	for (n = 1;; n++) {
		json_t *res = NULL, *sum;
		json_int_t pmax;

		if (!set_timeout(&l, user_timeout, known_wall))
			break;
		o->code = l.code;
		o->code_len = l.code_len;
		o->session = l.session;
		o->attempt = n;
		o->parent = parent[0] ? parent : NULL;
		remember(&l, l.code, l.code_len);
		rc = run_attempt(o, &res);
		if (res == NULL) {
			json_decref(last);
			last = NULL;
			break; /* sbx failed; the error is printed */
		}
		json_decref(last);
		last = res;
		sum = summary(res, n, o->parent);
		json_array_append_new(l.attempts, sum);
		json_array_append(l.history, sum);
		snprintf(parent, sizeof(parent), "%s", str_field(res, "id"));
		pmax = int_field(json_object_get(res, "limits"), "max_attempts", 0);
		if (pmax > 0 && (uint64_t)pmax < l.cap)
			l.cap = (uint32_t)pmax;
		known_wall = (uint64_t)int_field(json_object_get(res, "limits"), "wall_time_ms", 0);
		progress(&l, n, res);
		if (o->jsonl)
			event_emit("attempt", json_pack("{s:I,s:O}", "attempt", (json_int_t)n, "result", res));
		if (strcmp(str_field(res, "outcome"), "ok") == 0) {
			stop(&l, "ok", NULL);
			break;
		}
		if (strcmp(str_field(res, "outcome"), "sandbox_error") == 0) {
			stop(&l, "sandbox_error", "sbx could not run the attempt");
			break;
		}
		if (signals_stop_requested()) {
			stop(&l, "interrupted", "interrupted during attempt %" PRIu32, n);
			break;
		}
		if (n >= l.cap) {
			stop(&l, "max_attempts", "%" PRIu32 " attempts made, the cap", n);
			break;
		}
		if (!ask_fixer(&l, n, res, sum))
			break;
	}
	if (last != NULL) {
		json_object_set(last, "attempts", l.attempts);
		json_object_set_new(last, "stop_reason", json_string(l.stop));
		json_object_set_new(last, "stop_detail", l.detail[0] ? json_string(l.detail) : json_null());
		json_object_set_new(last, "max_attempts", json_integer(l.cap));
		if (o->jsonl) {
			event_emit("result", json_pack("{s:O}", "result", last));
		} else if (o->json) {
			char *text = json_dumps(last, JSON_INDENT(2));
			if (text == NULL)
				cli_die("result", "cannot format the result JSON");
			puts(text);
			free(text);
		} else {
			fprintf(stderr, "sbx: fix: stopped after %zu attempt%s: %s%s%s\n",
				json_array_size(l.attempts), json_array_size(l.attempts) == 1 ? "" : "s",
				l.stop, l.detail[0] ? ": " : "", l.detail);
		}
	}
	json_decref(last);
	json_decref(l.attempts);
	json_decref(l.history);
	free(l.code);
	if (fflush(stdout) != 0)
		cli_die("stdout", "cannot write");
	return rc;
}
