/* SPDX-License-Identifier: ISC */
/*
 * `sbx mcp`: artifacts kept for resources/read (see mcp_store.h). Files
 * are named by serial number in the store directory, so nothing the
 * sandboxed program chose (its file names) ever becomes a path here; the
 * rename is within TMPDIR (mcp_tmpdir(), as for the calls' directories),
 * one file system.
 *
 * Each file is charged its size rounded up to 4 KiB, so that empty files
 * cannot pile up for free, and the store holds at most MCP_STORE_FILES of
 * them. Room is made by dropping the oldest files, but never those of the
 * result being built (mcp_store_begin): every link in one answer can be
 * read when it arrives.
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

/* bytes a file counts for: its size rounded up to 4 KiB, at least 4 KiB */
static uint64_t charge(uint64_t size)
{
	return size == 0 ? 4096 : (size + 4095) / 4096 * 4096;
}

struct kept {
	struct kept *next;
	char *uri, *name, *mime;
	uint64_t size;
	unsigned serial, gen;
};

static struct {
	uint64_t max, used; /* bytes, as charged */
	uint64_t gen_used;  /* charged to the current generation */
	unsigned next, gen, count;
	int fd; /* the store directory, -1 until the first artifact */
	char dir[MCP_TMPDIR_MAX + 32];
	struct kept *head, **tail;
} ks = {.fd = -1};

void mcp_store_init(uint64_t max_bytes)
{
	ks.max = max_bytes;
	ks.tail = &ks.head;
}

void mcp_store_begin(void)
{
	ks.gen++;
	ks.gen_used = 0;
}

static void free_kept(struct kept *k)
{
	free(k->uri);
	free(k->name);
	free(k->mime);
	free(k);
}

static void drop_oldest(void)
{
	struct kept *k = ks.head;
	char f[16];

	snprintf(f, sizeof(f), "%u", k->serial);
	unlinkat(ks.fd, f, 0);
	ks.used -= charge(k->size);
	ks.count--;
	ks.head = k->next;
	if (ks.head == NULL)
		ks.tail = &ks.head;
	free_kept(k);
}

/* The directory, made at first use. */
static int open_store(char *why, size_t whylen)
{
	if (ks.fd >= 0)
		return 0;
	snprintf(ks.dir, sizeof(ks.dir), "%s/sbx-mcp-store.XXXXXX", mcp_tmpdir());
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
	uint64_t cost;
	char f[16];
	json_t *link;

	/* names come from the result JSON: one directory entry, never a path */
	if (dirfd < 0 || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not kept: not saved");
		return NULL;
	}
	if ((uint64_t)st.st_size > MCP_RESOURCE_MAX) {
		snprintf(why, whylen, "not kept: over %u MiB, the most resources/read returns",
			 MCP_RESOURCE_MAX >> 20);
		return NULL;
	}
	cost = charge((uint64_t)st.st_size);
	/* only older calls' files may go to make room */
	if (ks.gen_used + cost > ks.max) {
		snprintf(why, whylen, "not kept: the store is full (sbx mcp --keep-artifacts %llu)",
			 (unsigned long long)ks.max);
		return NULL;
	}
	if (open_store(why, whylen) < 0)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (k == NULL || (k->uri = strdup(uri)) == NULL || (k->name = strdup(name)) == NULL ||
	    (k->mime = strdup(mime)) == NULL) {
		snprintf(why, whylen, "not kept: out of memory");
		goto fail;
	}
	k->serial = ks.next++;
	k->gen = ks.gen;
	k->size = (uint64_t)st.st_size;
	link = json_pack("{s:s,s:s,s:s,s:s,s:I}", "type", "resource_link", "uri", k->uri, "name", k->name,
			 "mimeType", k->mime, "size", (json_int_t)k->size);
	if (link == NULL) {
		snprintf(why, whylen, "not kept: out of memory");
		goto fail;
	}
	snprintf(f, sizeof(f), "%u", k->serial);
	if (renameat(dirfd, name, ks.fd, f) < 0) {
		snprintf(why, whylen, "not kept: %s", strerror(errno));
		json_decref(link);
		goto fail;
	}
	/* Oldest first; the current generation is at the tail and, by the
	 * check above, never needs to go. */
	while (ks.head != NULL && ks.head->gen != ks.gen &&
	       (ks.used + cost > ks.max || ks.count >= MCP_STORE_FILES))
		drop_oldest();
	if (ks.count >= MCP_STORE_FILES) {
		unlinkat(ks.fd, f, 0);
		snprintf(why, whylen, "not kept: this call has %u files in the store already", MCP_STORE_FILES);
		json_decref(link);
		goto fail;
	}
	ks.used += cost;
	ks.gen_used += cost;
	ks.count++;
	*ks.tail = k;
	ks.tail = &k->next;
	return link;
fail:
	if (k != NULL)
		free_kept(k);
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

uint64_t mcp_store_used(void)
{
	return ks.used;
}

const char *mcp_store_dir(void)
{
	return ks.dir;
}
