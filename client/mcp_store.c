/*
 * `sbx mcp`: artifacts kept for resources/read (see mcp_store.h). Files
 * are named by serial number in the store directory, so nothing the
 * sandboxed program chose (its file names) ever becomes a path here; the
 * rename is within TMPDIR, the same file system as the call's directory.
 */
#include "mcp_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_int.h"

struct kept {
	struct kept *next;
	char *uri, *name, *mime;
	uint64_t size;
	unsigned serial;
};

static struct {
	uint64_t max, used;
	unsigned next;
	int fd; /* the store directory, -1 until the first artifact */
	char dir[4096];
	struct kept *head, **tail;
} ks = {.fd = -1};

void mcp_store_init(uint64_t max_bytes)
{
	ks.max = max_bytes;
	ks.tail = &ks.head;
}

static void drop_oldest(void)
{
	struct kept *k = ks.head;
	char f[16];

	snprintf(f, sizeof(f), "%u", k->serial);
	unlinkat(ks.fd, f, 0);
	ks.used -= k->size;
	ks.head = k->next;
	if (ks.head == NULL)
		ks.tail = &ks.head;
	free(k->uri);
	free(k->name);
	free(k->mime);
	free(k);
}

/* The directory, made at first use: TMPDIR as mktemp(1) takes it. */
static int open_store(char *why, size_t whylen)
{
	const char *tmp = getenv("TMPDIR");

	if (ks.fd >= 0)
		return 0;
	if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > sizeof(ks.dir) - 32)
		tmp = "/tmp";
	snprintf(ks.dir, sizeof(ks.dir), "%s/sbx-mcp-store.XXXXXX", tmp);
	if (mkdtemp(ks.dir) == NULL) {
		snprintf(why, whylen, "not kept: store directory %s: %s", ks.dir, strerror(errno));
		ks.dir[0] = '\0';
		return -1;
	}
	ks.fd = open(ks.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ks.fd < 0) {
		snprintf(why, whylen, "not kept: store directory %s: %s", ks.dir, strerror(errno));
		rmdir(ks.dir);
		ks.dir[0] = '\0';
		return -1;
	}
	return 0;
}

json_t *mcp_store_keep(int dirfd, const char *name, const char *uri, const char *mime, char *why,
		       size_t whylen)
{
	struct stat st;
	struct kept *k;
	char f[16];

	/* names come from the result JSON: one directory entry, never a path */
	if (dirfd < 0 || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not kept: not saved");
		return NULL;
	}
	if ((uint64_t)st.st_size > ks.max) {
		snprintf(why, whylen, "not kept: larger than the store (sbx mcp --keep-artifacts %llu)",
			 (unsigned long long)ks.max);
		return NULL;
	}
	if (open_store(why, whylen) < 0)
		return NULL;
	while (ks.head != NULL && ks.used + (uint64_t)st.st_size > ks.max)
		drop_oldest();
	k = calloc(1, sizeof(*k));
	if (k == NULL || (k->uri = strdup(uri)) == NULL || (k->name = strdup(name)) == NULL ||
	    (k->mime = strdup(mime)) == NULL) {
		snprintf(why, whylen, "not kept: out of memory");
		goto fail;
	}
	k->serial = ks.next++;
	k->size = (uint64_t)st.st_size;
	snprintf(f, sizeof(f), "%u", k->serial);
	if (renameat(dirfd, name, ks.fd, f) < 0) {
		snprintf(why, whylen, "not kept: %s", strerror(errno));
		goto fail;
	}
	ks.used += k->size;
	*ks.tail = k;
	ks.tail = &k->next;
	return json_pack("{s:s,s:s,s:s,s:s,s:I}", "type", "resource_link", "uri", k->uri, "name", k->name,
			 "mimeType", k->mime, "size", (json_int_t)k->size);
fail:
	if (k != NULL) {
		free(k->uri);
		free(k->name);
		free(k->mime);
	}
	free(k);
	return NULL;
}

json_t *mcp_store_list(void)
{
	json_t *list = json_array();

	for (struct kept *k = ks.head; k != NULL; k = k->next)
		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:I}", "uri", k->uri, "name", k->name,
						      "mimeType", k->mime, "size", (json_int_t)k->size));
	return json_pack("{s:o}", "resources", list);
}

json_t *mcp_store_read(const char *uri)
{
	struct kept *k;
	unsigned char *d;
	const char *why;
	char f[16];
	size_t n = 0;
	json_t *c;

	for (k = ks.head; k != NULL && strcmp(k->uri, uri) != 0; k = k->next)
		;
	if (k == NULL)
		return NULL;
	snprintf(f, sizeof(f), "%u", k->serial);
	d = mcp_read_artifact(ks.fd, f, k->size, &n, &why);
	if (d == NULL)
		return NULL;
	c = mcp_resource_contents(k->uri, k->mime, d, n);
	free(d);
	return c != NULL ? json_pack("{s:[o]}", "contents", c) : NULL;
}

void mcp_store_close(void)
{
	while (ks.head != NULL)
		drop_oldest();
	if (ks.fd >= 0) {
		close(ks.fd);
		ks.fd = -1;
		rmdir(ks.dir);
	}
}
