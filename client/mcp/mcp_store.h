/* SPDX-License-Identifier: ISC */
/*
 * `sbx mcp`: the artifacts that execute_code returns as resource links,
 * kept so that the client can resources/read them while the server runs.
 *
 * Each kept file is moved (rename(2)) out of its call's work directory
 * into one private directory, $TMPDIR/sbx-mcp-store.XXXXXX (mode 0700,
 * made at the first artifact), under a serial number; the URI, name and
 * media type stay in memory. The store holds at most max_bytes: the
 * oldest artifacts (of earlier results) are dropped first to make room;
 * one that does not fit beside the current result's is not kept. mcp_store_close() removes everything;
 * a server killed by SIGKILL leaves the directory behind in TMPDIR.
 * MCP 2025-06-18 and 2025-11-25, server/resources.
 */
#ifndef SBX_CLIENT_MCP_STORE_H
#define SBX_CLIENT_MCP_STORE_H
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Default of `sbx mcp --keep-artifacts`, bytes. */
#define MCP_STORE_DEFAULT (256ull << 20)
/* The largest file kept: one resources/read answer is built in memory
 * (about 2.7 times this with base64 and the JSON line). */
#define MCP_RESOURCE_MAX (32u << 20)
/* Files kept at most, whatever their sizes. */
#define MCP_STORE_FILES 4096u

/* The store's capacity in bytes, each file counted as its size rounded
 * up to 4 KiB, at least 4 KiB (0: keep nothing). Call before serving. */
void mcp_store_init(uint64_t max_bytes);

/* A new result begins: the files it keeps are never dropped to make room
 * for each other, so that every link in one answer can be read. */
void mcp_store_begin(void);

/*
 * Move the regular file name out of dirfd into the store as uri (the
 * sbx://run/ID/out/NAME of the artifact) with media type mime. Returns its
 * resource_link content block (uri, name, mimeType, size in bytes), or NULL
 * with why set to a phrase for the client ("not kept: ..."): not a regular
 * file, over MCP_RESOURCE_MAX, no room beside the current result's files,
 * or the store could not be made. The file stays in dirfd then.
 * New reference.
 */
json_t *mcp_store_keep(int dirfd, const char *name, const char *uri, const char *mime, char *why,
		       size_t whylen);

/* The ListResourcesResult of everything kept, oldest first. New reference. */
json_t *mcp_store_list(void);

/*
 * The ReadResourceResult of uri (one content: text for UTF-8 text types,
 * else a base64 blob), or NULL when the store does not hold uri (never
 * kept, or dropped for room) or it cannot be read. New reference.
 */
json_t *mcp_store_read(const char *uri);

/* Remove every kept file and the directory. */
void mcp_store_close(void);

/* What the store holds, in bytes as charged against --keep-artifacts, and
 * its directory ("" until the first artifact is kept). */
uint64_t mcp_store_used(void);
const char *mcp_store_dir(void);

#endif
