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
 * O_DIRECTORY fd, close-on-exec.
 */
int session_open(const char *name);

/* `sbx session ARGS...` (argv[0] is "session"); returns the exit status. */
int session_main(int argc, char **argv);

#endif
