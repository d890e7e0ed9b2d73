/* SPDX-License-Identifier: ISC */
/*
 * The CallToolResult of execute_code. content is what a model reads, most
 * useful first: the error (its traceback, or "type: message"), stdout,
 * stderr, one summary line, then the artifacts. structuredContent is the result JSON itself, for
 * programs.
 *
 * PNG and JPEG artifacts are image content, embedded (up to MCP_EMBED_MAX
 * per call). Every other artifact, and an image beyond that, is a
 * resource link, sbx://run/ID/out/NAME, that the client reads with
 * resources/read while the server runs (mcp_store.c keeps the file).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "fdio.h"
#include "mcp.h"
#include "mcp_int.h"
#include "ttysafe.h"
#include "mcp_store.h"
#include "textutil.h"

/* The negotiated revision; the newest before initialize (and in tests). */
static const struct mcp_revision *revision(void)
{
	return mcp_srv.rev != NULL ? mcp_srv.rev : &mcp_revisions[0];
}

static void add_text(json_t *content, const char *text)
{
	json_array_append_new(content, json_pack("{s:s,s:s}", "type", "text", "text", text));
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* "label:\n" + text (+ a note when truncated), or nothing for "". */
static size_t max_text = MCP_MAX_TEXT_DEFAULT;

void mcp_set_max_text(size_t bytes)
{
	max_text = bytes < 256 ? 256 : bytes;
}

size_t mcp_max_text(void)
{
	return max_text;
}

/* n bytes of s, or fewer, ending on a UTF-8 character boundary */
static size_t utf8_head(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/*
 * text bounded to about max_text bytes: the first and the last part with
 * a marker naming the bytes left out and where the whole is (uri, or
 * NULL). malloc'ed, or NULL when text is within the bound.
 */
static char *bounded(const char *text, const char *uri)
{
	size_t len = strlen(text), half = max_text / 2 - 128, h, t, n;
	char marker[300], *out;

	if (len <= max_text)
		return NULL;
	h = utf8_head(text, half);
	t = len - half;
	while (t < len && ((unsigned char)text[t] & 0xc0) == 0x80)
		t++;
	snprintf(marker, sizeof(marker), "\n[sbx mcp: %zu of %zu bytes not shown here (--max-text %zu)%s%s]\n",
		 t - h, len, max_text, uri ? "; all of it: " : "", uri ? uri : "");
	n = h + strlen(marker) + (len - t) + 1;
	out = malloc(n);
	if (out != NULL)
		snprintf(out, n, "%.*s%s%s", (int)h, text, marker, text + t);
	return out;
}

/* Keep the whole stream as a resource (sbx://run/ID/NAME, text/plain) in
 * the store; the resource_link block, or NULL (why set). */
static json_t *keep_stream(const char *text, const char *id, const char *name, int dirfd, char *uri,
			   size_t urilen, char *why, size_t whylen)
{
	char file[32];
	int fd;
	json_t *link;

	snprintf(uri, urilen, "sbx://run/%s/%s", id, name);
	if (dirfd < 0) {
		snprintf(why, whylen, "not kept: no work directory");
		return NULL;
	}
	/* a hidden name: no artifact is ever called that */
	snprintf(file, sizeof(file), ".sbx-%s", name);
	fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || sbx_write_all(fd, text, strlen(text)) < 0) {
		snprintf(why, whylen, "not kept: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		unlinkat(dirfd, file, 0);
		return NULL;
	}
	close(fd);
	link = mcp_store_keep(dirfd, file, uri, "text/plain", why, whylen);
	if (link == NULL)
		unlinkat(dirfd, file, 0);
	return link;
}

/*
 * The stream's text block, within max_text; past it the whole stream is
 * kept as a resource and linked right after, and the result's own copy
 * (structuredContent) is bounded the same way.
 */
static void add_stream(json_t *content, json_t *r, const char *name, int dirfd)
{
	const char *text = str(r, name), *id = str(r, "id"), *action;
	char trunc_key[32], uri[160], why[256];
	json_t *link = NULL;
	char *cut = NULL, *buf;
	size_t len;
	bool truncated;

	if (text == NULL || text[0] == '\0')
		return;
	snprintf(trunc_key, sizeof(trunc_key), "%s_truncated", name);
	/* under output_action truncate the text holds the recorder's own
	 * marker between head and tail (sbx.policy(5)) */
	action = str(json_object_get(r, "limits"), "output_action");
	truncated = json_is_true(json_object_get(r, trunc_key)) && !(action && strcmp(action, "truncate") == 0);
	if (strlen(text) > max_text) {
		link = keep_stream(text, id ? id : "unknown", name, dirfd, uri, sizeof(uri), why, sizeof(why));
		cut = bounded(text, link ? uri : NULL);
		if (cut != NULL) {
			json_object_set_new(r, name, json_string(cut));
			text = str(r, name);
		}
	}
	len = strlen(name) + strlen(text) + 300;
	buf = malloc(len);
	if (buf != NULL) {
		snprintf(buf, len, "%s:\n%s%s%s%s", name, text, truncated ? "\n[truncated by the output limit]" : "",
			 cut && !link ? "\n[the whole " : "", cut && !link ? name : "");
		if (cut && !link)
			snprintf(buf + strlen(buf), len - strlen(buf), " was %s]", why);
		add_text(content, buf);
		free(buf);
	}
	if (link != NULL)
		json_array_append_new(content, link);
	free(cut);
}

/* stderr that is just the traceback again says nothing new. */
static bool stderr_is_traceback(const char *err, const char *tb)
{
	size_t a, b;

	if (err == NULL || tb == NULL)
		return false;
	a = strlen(err);
	b = strlen(tb);
	while (a > 0 && (err[a - 1] == '\n' || err[a - 1] == ' '))
		a--;
	while (b > 0 && (tb[b - 1] == '\n' || tb[b - 1] == ' '))
		b--;
	return a == b && memcmp(err, tb, a) == 0;
}

static void add_summary(json_t *content, json_t *r)
{
	const char *outcome = str(r, "outcome"), *limit = str(r, "limit"), *id = str(r, "id");
	json_t *code = json_object_get(r, "exit_code"), *sig = json_object_get(r, "signal_name");
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "outcome: %s", outcome ? outcome : "?");
	if (json_is_integer(code))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", exit code %" JSON_INTEGER_FORMAT,
			      json_integer_value(code));
	if (json_is_string(sig))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", killed by SIG%s", json_string_value(sig));
	if (limit != NULL)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", limit: %s", limit);
	if (json_is_integer(json_object_get(r, "wall_ms")))
		n += snprintf(line + n, sizeof(line) - (size_t)n, "; %" JSON_INTEGER_FORMAT " ms",
			      json_integer_value(json_object_get(r, "wall_ms")));
	if (id != NULL && id[0] != '\0')
		snprintf(line + n, sizeof(line) - (size_t)n, "; run %s", id);
	add_text(content, line);
}

/* A workspace run's changeset (sbx mcp --workspace): what it proposes,
 * then the diff (already bounded by sbx changes --max-bytes). */
static void add_changeset(json_t *content, json_t *r)
{
	json_t *cs = json_object_get(r, "changeset"), *files = json_object_get(cs, "files"), *e;
	const char *id = str(cs, "id"), *miss = str(cs, "missing"), *rerr = str(cs, "review_error");
	const char *diff = str(cs, "diff");
	json_int_t omitted = json_integer_value(json_object_get(cs, "files_omitted"));
	json_int_t diff_omitted = json_integer_value(json_object_get(cs, "diff_omitted_bytes"));
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	if (!json_is_object(cs))
		return;
	f = open_memstream(&text, &len);
	if (f == NULL)
		return;
	if (id != NULL)
		fprintf(f, "changeset %s: %" JSON_INTEGER_FORMAT " change(s) proposed for the workspace; nothing on "
			"disk has changed (apply_changes applies them)", id, json_integer_value(json_object_get(cs, "entries")));
	else
		fprintf(f, "changeset: none (%s)", miss ? miss : "the run left none");
	if (miss != NULL && id != NULL)
		fprintf(f, "\n%s", miss);
	json_array_foreach(files, i, e) {
		/* a name is the payload's: it must not forge the lines around it */
		char *p = ttysafe_name(str(e, "path") ? str(e, "path") : "?");
		const char *type = str(e, "type") ? str(e, "type") : "";
		fprintf(f, "\n  %-8s %s", str(e, "action") ? str(e, "action") : "?", p ? p : "?");
		if (strcmp(type, "file") == 0 && str(e, "action") && strcmp(str(e, "action"), "deleted") != 0)
			fprintf(f, " (mode %04llo)", (unsigned long long)json_integer_value(json_object_get(e, "mode")));
		else if (strcmp(type, "symlink") == 0 || strcmp(type, "directory") == 0)
			fprintf(f, " (%s)", type);
		free(p);
	}
	if (omitted > 0)
		fprintf(f, "\n  ... and %" JSON_INTEGER_FORMAT " more (sbx changes %s lists all)", omitted, id ? id : "");
	if (id != NULL && !json_is_true(json_object_get(cs, "shown_whole")))
		fprintf(f, "\nnot shown whole here: apply_changes refuses it (review it with sbx changes %s, apply it "
			"with sbx apply %s)", id, id);
	if (rerr != NULL)
		fprintf(f, "\nno diff: %s", rerr);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	add_text(content, text);
	free(text);
	if (diff != NULL && diff[0] != '\0')
		add_text(content, diff);
	json_int_t files_left = json_integer_value(json_object_get(cs, "diff_omitted_files"));
	if (diff_omitted > 0 || files_left > 0) {
		char note[256];
		snprintf(note, sizeof(note), "[sbx mcp: %" JSON_INTEGER_FORMAT " bytes and %" JSON_INTEGER_FORMAT
			 " more files of the diff not shown (--max-text); sbx changes %s shows all]", diff_omitted,
			 files_left, id ? id : "");
		add_text(content, note);
	}
}

static bool is_png(const unsigned char *d, size_t n)
{
	return n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0;
}

static bool is_jpeg(const unsigned char *d, size_t n)
{
	return n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF;
}

static bool is_utf8_text(const unsigned char *d, size_t n)
{
	char *clean;
	bool same;

	if (memchr(d, '\0', n) != NULL)
		return false;
	clean = sbx_utf8_sanitize((const char *)d, n);
	same = clean != NULL && strlen(clean) == n && memcmp(clean, d, n) == 0;
	free(clean);
	return same;
}

static bool textual(const char *type)
{
	return strncmp(type, "text/", 5) == 0 || strcmp(type, "application/json") == 0 ||
	       strcmp(type, "image/svg+xml") == 0;
}

static char *base64(const unsigned char *d, size_t n)
{
	size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
	char *b = malloc(len);

	if (b != NULL)
		sodium_bin2base64(b, len, d, n, sodium_base64_VARIANT_ORIGINAL);
	return b;
}

/* sbx://run/ID/out/NAME with NAME percent-encoded (RFC 3986 unreserved kept). */
static char *artifact_uri(const char *id, const char *name)
{
	size_t len = strlen(id) + 3 * strlen(name) + 32, o;
	char *u = malloc(len);
	const unsigned char *p;

	if (u == NULL)
		return NULL;
	o = (size_t)snprintf(u, len, "sbx://run/%s/out/", id);
	for (p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.' || *p == '_' || *p == '~')
			u[o++] = (char)*p;
		else
			o += (size_t)snprintf(u + o, len - o, "%%%02X", *p);
	}
	u[o] = '\0';
	return u;
}

unsigned char *mcp_read_artifact(int dirfd, const char *name, size_t max, size_t *n, const char **why)
{
	struct stat st;
	unsigned char *d;
	size_t got = 0;
	int fd;

	*why = "not saved";
	if (dirfd < 0 || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		*why = "over the size limit for embedded data";
		close(fd);
		return NULL;
	}
	d = malloc((size_t)st.st_size + 1);
	while (d != NULL && got < (size_t)st.st_size) {
		ssize_t r = read(fd, d + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (d == NULL || got != (size_t)st.st_size) {
		free(d);
		*why = "unreadable";
		return NULL;
	}
	*n = got;
	return d;
}

json_t *mcp_resource_contents(const char *uri, const char *mime, unsigned char *d, size_t n)
{
	json_t *c;
	char *b64;

	if (textual(mime) && is_utf8_text(d, n)) {
		d[n] = '\0';
		return json_pack("{s:s,s:s,s:s}", "uri", uri, "mimeType", mime, "text", (char *)d);
	}
	b64 = base64(d, n);
	if (b64 == NULL)
		return NULL;
	c = json_pack("{s:s,s:s,s:s}", "uri", uri, "mimeType", mime, "blob", b64);
	free(b64);
	return c;
}

static void add_artifact(json_t *content, const char *id, json_t *a, int dirfd, size_t *budget)
{
	const char *name = str(a, "name"), *type = str(a, "media_type"), *why;
	unsigned char *d = NULL;
	char *b64 = NULL, *uri, note[512], kept_why[256] = "not kept: out of memory";
	size_t n = 0;
	json_t *link;

	if (name == NULL)
		return;
	if (type == NULL)
		type = "application/octet-stream";
	if (strcmp(type, "image/png") == 0 || strcmp(type, "image/jpeg") == 0)
		d = mcp_read_artifact(dirfd, name, *budget, &n, &why);
	if (d != NULL && ((strcmp(type, "image/png") == 0 && is_png(d, n)) ||
			  (strcmp(type, "image/jpeg") == 0 && is_jpeg(d, n)))) {
		*budget -= n;
		b64 = base64(d, n);
		if (b64 != NULL)
			json_array_append_new(content, json_pack("{s:s,s:s,s:s}", "type", "image", "data", b64,
								 "mimeType", type));
		free(b64);
		free(d);
		return;
	}
	free(d);
	uri = artifact_uri(id, name);
	link = uri != NULL ? mcp_store_keep(dirfd, name, uri, type, kept_why, sizeof(kept_why)) : NULL;
	free(uri);
	if (link != NULL && !revision()->structured) {
		/* before 2025-06-18 there is no resource_link: name the URI */
		snprintf(note, sizeof(note), "artifact %s (%" JSON_INTEGER_FORMAT " bytes, %s): resources/read %s", name,
			 json_integer_value(json_object_get(a, "size")), type,
			 json_string_value(json_object_get(link, "uri")));
		json_decref(link);
		add_text(content, note);
		return;
	}
	if (link != NULL) {
		json_array_append_new(content, link);
		return;
	}
	snprintf(note, sizeof(note), "artifact %s (%" JSON_INTEGER_FORMAT " bytes, %s): %s", name,
		 json_integer_value(json_object_get(a, "size")), type, kept_why);
	add_text(content, note);
}

static void add_labelled(json_t *content, const char *label, const char *msg)
{
	size_t len = strlen(msg) + strlen(label) + 3;
	char *line = malloc(len);

	if (line == NULL)
		return;
	snprintf(line, len, "%s: %s", label, msg);
	add_text(content, line);
	free(line);
}

/* The first block: what went wrong (the result's "error" object, sbx(1)
 * The result): a limit that stopped the program as "timeout: wall-time
 * limit of 30s (policy default) reached", then the traceback of where it
 * was; else the traceback when there is one, else "type: message". A
 * hint follows as its own block. */
static void add_error(json_t *content, json_t *r, const char *tbtext)
{
	json_t *err = json_object_get(r, "error");
	const char *type = str(err, "type"), *msg = str(err, "message"), *code = str(err, "code");
	const char *hint = str(err, "hint");
	char *line;
	size_t len;

	if (json_is_string(err) && json_string_length(err) > 0) { /* the form before error objects */
		add_text(content, json_string_value(err));
	} else if (code != NULL && type != NULL && strcmp(code, type) == 0 && msg != NULL && msg[0] != '\0' &&
		   tbtext != NULL && tbtext[0] != '\0') {
		add_labelled(content, type, msg);
		add_text(content, tbtext);
	} else if (tbtext != NULL && tbtext[0] != '\0') {
		add_text(content, tbtext);
	} else if (msg != NULL && msg[0] != '\0') {
		if (type == NULL)
			type = str(r, "outcome");
		len = strlen(msg) + (type ? strlen(type) : 0) + 3;
		line = malloc(len);
		if (line == NULL)
			return;
		snprintf(line, len, "%s: %s", type ? type : "error", msg);
		add_text(content, line);
		free(line);
	}
	if (hint != NULL && hint[0] != '\0')
		add_labelled(content, "hint", hint);
}

json_t *mcp_tool_result(json_t *r, int dirfd)
{
	json_t *content = json_array(), *arts = json_object_get(r, "artifacts"), *a;
	const char *outcome = str(r, "outcome"), *id = str(r, "id");
	const char *tbtext = str(json_object_get(r, "error"), "traceback");
	size_t i, budget = MCP_EMBED_MAX;
	char *tmp;

	if (tbtext == NULL)
		tbtext = str(json_object_get(r, "traceback"), "text");
	json_array_foreach(arts, i, a)
		json_object_del(a, "path");
	add_error(content, r, tbtext);
	mcp_store_begin();
	add_stream(content, r, "stdout", dirfd);
	if (!stderr_is_traceback(str(r, "stderr"), tbtext))
		add_stream(content, r, "stderr", dirfd);
	else if ((tmp = bounded(str(r, "stderr"), NULL)) != NULL) {
		json_object_set_new(r, "stderr", json_string(tmp));
		free(tmp);
	}
	add_summary(content, r);
	add_changeset(content, r);
	json_array_foreach(arts, i, a)
		add_artifact(content, id ? id : "unknown", a, dirfd, &budget);
	if (!revision()->structured) {
		/* no structuredContent before 2025-06-18: the result JSON as the
		 * last text block, as that revision advises for compatibility */
		char *text = json_dumps(r, JSON_COMPACT);
		int failed = outcome == NULL || strcmp(outcome, "ok") != 0; /* outcome points into r */

		if (text != NULL)
			add_text(content, text);
		free(text);
		json_decref(r);
		return json_pack("{s:o,s:b}", "content", content, "isError", failed);
	}
	return json_pack("{s:o,s:o,s:b}", "content", content, "structuredContent", r, "isError",
			 outcome == NULL || strcmp(outcome, "ok") != 0);
}

/* msg may hold a child's words cut at a byte count: made UTF-8 first */
json_t *mcp_tool_error(const char *msg)
{
	char *clean = sbx_utf8_sanitize(msg, strlen(msg));
	json_t *r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text",
			      clean ? clean : "error (out of memory)", "isError", 1);

	free(clean);
	return r;
}
