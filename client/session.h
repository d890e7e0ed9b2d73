/* SPDX-License-Identifier: ISC */
/* Sessions: directories of the caller's own that `sbx run --session NAME`
 * mounts read-write at /work (proto.h --work-fd), and `sbx session`. */
#ifndef SBX_CLIENT_SESSION_H
#define SBX_CLIENT_SESSION_H

/*
 * Open (creating if missing, mode 0700) the session directory NAME under
 * $XDG_DATA_HOME/sbx/sessions (an absolute XDG_DATA_HOME; otherwise
 * ~/.local/share/sbx/sessions), as the caller, without following a symlink
 * at sbx/, sessions/ or NAME. Refuses (dies, exit 125, naming the path) a
 * directory that is a symlink, not owned by the caller, or writable by
 * group or others. Marks it used now (its mtime). Returns an O_RDONLY
 * O_DIRECTORY fd, close-on-exec, holding flock(LOCK_SH) on the directory
 * until it is closed (keep it open for the whole run, every attempt):
 * `sbx session rm` refuses a session so locked. Waits while rm holds its
 * exclusive lock, and starts again when rm removed the directory meanwhile.
 */
int session_open(const char *name);
/* The sessions of sbx session ls --json: [{name, size_bytes, last_used,
 * in_use, live?}] (live: live.c live_info). */
#include <jansson.h>
json_t *session_list_json(void);
/* mkdir -p path, each new level 0700; dies on failure. */
void session_make_dirs(const char *path);

/* Exit status of `sbx session rm NAME` when NAME is in use by a running
 * `sbx run --session NAME` (sysexits.h EX_TEMPFAIL: try again later). */
#define SESSION_EXIT_IN_USE 75

/* `sbx session ARGS...` (argv[0] is "session"); returns the exit status. */
int session_main(int argc, char **argv);

#endif
