/* SPDX-License-Identifier: ISC */
/*
 * --workspace, `sbx changes` and `sbx apply` (sbx(1) WORKSPACES,
 * docs/workspace.md). The changeset of a run lives, as the caller's own
 * files, in $XDG_STATE_HOME/sbx/changesets/RUN (default
 * ~/.local/state/sbx/changesets/RUN): "manifest" (the collector's, whose
 * SHA-256 the run's END record signs), "files/N" (the after-content of
 * entry N) and "meta" (written here: the workspace's path and identity
 * and the digest the result named).
 */
#ifndef SBX_CLIENT_WORKSPACE_H
#define SBX_CLIENT_WORKSPACE_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

/* Before the run: open the workspace directory and a fresh changeset
 * directory (o->ws_fd, o->cs_fd); dies with one line on failure. */
void ws_open(struct run_opts *o);
/* After the run, with its result: the changeset directory takes the run's
 * id and its meta file, and the result's "changeset" gains "id" and
 * "path"; without a changeset the directory is removed. */
void ws_finish(const struct run_opts *o, json_t *result);

/* One entry of a manifest. before/after: "-", "d", "f:HEX" or "l:HEX". */
struct ws_entry {
	char *path;
	char before[68], after[68];
	unsigned mode;
	long file;
	bool selected;
};

#define WS_ID_MAX 63 /* hex digits of a changeset id (a run id is 32) */

struct ws_changeset {
	char id[WS_ID_MAX + 1];
	char dir[4096];
	int dirfd;
	char sha256[65];          /* of the manifest as stored now */
	char meta_sha256[65];     /* what the run's result named */
	char workspace[4096];
	uint64_t dev, ino;
	struct ws_entry *e;
	size_t n;
	char **skips;
	size_t n_skips;
	char incomplete[256];     /* "" when complete */
};

/* A changeset id as the client names one: the run's id, 1 to 63
 * lower-case hex digits (WS_ID_MAX). The one test of it. */
bool ws_id_valid(const char *id);
/* A path of a changeset as JSON holds it: invalid UTF-8 replaced by
 * U+FFFD (JSON holds text), so that one odd name cannot drop an entry or
 * the whole document. New reference; dies when out of memory. */
json_t *ws_path_json(const char *path);

/* Load changeset id (dies with one line: unknown id, not the caller's,
 * malformed manifest, a path that is not beneath the workspace). */
void ws_load(const char *id, struct ws_changeset *cs);
/* What ws_load allocated and opened, released. */
void ws_free(struct ws_changeset *cs);
/* "added", "modified" or "deleted" */
const char *ws_action(const struct ws_entry *e);
/* The state of path in the workspace (dirfd) now, in the manifest's
 * words; "!" when it cannot be reached beneath the workspace without a
 * symbolic link or another filesystem. */
void ws_state_now(int wsfd, const char *path, char *out, size_t outlen);

int changes_main(int argc, char **argv);
int apply_main(int argc, char **argv);

#endif
