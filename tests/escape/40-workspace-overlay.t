#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 40: the --workspace overlay (sbx(1) WORKSPACES,
# docs/workspace.md), attacked by the payload and through the changeset it
# leaves. The payload tries to reach the layers (the staging directory,
# other mounts of the caller's directory, inherited descriptors), to
# mount or unshare, to make device nodes (and a whiteout by hand), to
# leave a setuid file, to set overlayfs's own xattrs (opaque, whiteout,
# redirect) and an xattr of its own, to forge whiteouts as regular files
# (aufs-style .wh. names), and to leave a fifo and a socket. Checked:
# - the caller's directory on disk is unchanged by the run;
# - no path to either layer is visible inside: no /.sbx-ws, no mount but
#   /work of the workspace, no descriptor of it;
# - mount(2) and unshare(2) fail (seccomp), a character device 1:3 is not
#   created (nodev, no CAP_MKNOD), overlayfs's xattrs set through /work
#   (user.overlay.opaque on a directory) hide nothing;
# - the changeset holds no device, lists the fifo and socket as skipped,
#   and carries .wh.* names as the regular files they are (nothing deleted
#   on disk by them);
# - after sbx apply: no setuid or setgid bit on disk, no xattr carried, the
#   fifo and socket not created, the run audited.
#
# Defences checked by removing them:
# - write_temp's mode & 0777 (client/apply.c) replaced by the manifest's
#   mode: the applied file was 4755 on disk (test 8 failed).
# - mount_workspace's detaching of the staging mounts (helper/workspace.c
#   umount2 of the lower layer and the upper tmpfs, rmdir of /.sbx-ws)
#   skipped: the payload saw /.sbx-ws/lower (the caller's directory,
#   read-only) and /.sbx-ws/up/upper, where it could write the upper layer
#   behind the overlay's back (test 2 failed; test 1 still held: the lower
#   clone is read-only).
. "$(dirname "$0")/lib.sh"
plan 10
X=$T/state
W=$T/ws
mkdir -p "$X" "$W/dir"
printf 'a\n' > "$W/a.txt"
printf 'b\n' > "$W/b.txt"
printf 'c\n' > "$W/dir/c"
chown -R sbxtest:sbxtest "$X" "$W"
chmod 0700 "$X"
wrun() {
	run_as sbxtest env XDG_STATE_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
state() { find "$W" -printf '%p %y %m %s\n' | sort; getfattr -R -d -m - "$W" 2>/dev/null; }
state > "$T/ws.before"

wrun run --json --workspace "$W" -c 'import ctypes, errno, json, os, socket, stat
r = {}
def err(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
r["stage"] = os.path.lexists("/.sbx-ws")
mounts = [l.split()[4] for l in open("/proc/self/mountinfo")]
r["mounts"] = [m for m in mounts if m.startswith("/.sbx") or m.startswith("/work/")]
r["fds"] = []
for f in os.listdir("/proc/self/fd"):
    try:
        t = os.readlink("/proc/self/fd/" + f)
    except OSError:
        continue
    if "sbx-ws" in t or t.startswith("/tmp/sbx-t."):
        r["fds"].append(t)
libc = ctypes.CDLL(None, use_errno=True)
r["mount"] = libc.mount(b"none", b"/work", b"tmpfs", 0, None) == 0
r["unshare"] = libc.unshare(0x10000000 | 0x00020000) == 0
r["mknod"] = err(lambda: os.mknod("/work/null", stat.S_IFCHR | 0o666, os.makedev(1, 3)))
r["whiteout"] = err(lambda: os.mknod("/work/wh", stat.S_IFCHR | 0o666, 0))
open("/work/suid", "w").write("#!/bin/sh\n")
r["chmod"] = err(lambda: os.chmod("/work/suid", 0o6755))
for x in ("user.overlay.opaque", "user.overlay.whiteout", "user.overlay.redirect", "trusted.overlay.opaque"):
    r[x] = err(lambda: os.setxattr("/work/dir", x, b"y"))
r["dir_after"] = os.listdir("/work/dir")
r["user.evil"] = err(lambda: os.setxattr("/work/a.txt", "user.evil", b"1"))
open("/work/.wh.b.txt", "w").write("")
os.mkdir("/work/d2"); open("/work/d2/.wh..wh..opq", "w").write("")
os.mkfifo("/work/fifo")
s = socket.socket(socket.AF_UNIX); s.bind("/work/sock")
print(json.dumps(r))'
ID=$(jget id)
pj "$T/out" 'd["stdout"]' > "$T/probe"
diag "probe: $(cat "$T/probe")"
state > "$T/ws.after"
check "the caller's directory on disk is unchanged by the run" cmp -s "$T/ws.before" "$T/ws.after"
check "no path to a layer inside: no /.sbx-ws, no other mount, no descriptor" \
	pj "$T/probe" 'd["stage"] is False and d["mounts"] == [] and d["fds"] == [] or exit(1)'
check "mount(2) and unshare(2) fail, no character device 1:3" \
	pj "$T/probe" 'd["mount"] is False and d["unshare"] is False and d["mknod"] != "ok" or exit(1)'
# Linux >= 6.7 stores overlayfs xattrs set through an overlay escaped
# (user.overlay.overlay.*, for nesting); older kernels refuse them
xattrs_inert() { pj "$T/probe" 'd["dir_after"] == ["c"] or exit(1)' >/dev/null && ! grep -q " dir/c$" "$X/sbx/changesets/$ID/manifest"; }
check "overlayfs's own xattrs set through /work act on nothing: dir/c still there, inside and in the changeset" xattrs_inert
CS=$X/sbx/changesets/$ID
check "the changeset holds no device; fifo and socket listed as skipped" \
	sh -c '! grep -Eq " (null|wh)$" "$1" && grep -q "^skip fifo fifo$" "$1" && grep -q "^skip socket sock$" "$1"' _ "$CS/manifest"
check "forged whiteouts are regular files in the changeset, nothing deleted by them" \
	sh -c 'grep -Eq "^entry - f:[0-9a-f]+ [0-7]+ [0-9]+ .wh.b.txt$" "$1" && grep -q " d2/.wh..wh..opq$" "$1" && ! grep -q " b.txt$" "$1"' _ "$CS/manifest"
wrun apply "$ID"
check "apply: ok" [ "$rc" = 0 ]
check "apply: no setuid or setgid bit on disk" [ "$(stat -c %a "$W/suid")" = 755 ]
check "apply: no xattr carried, fifo and socket not created, b.txt still there" \
	sh -c '! getfattr -d -m - "$1/a.txt" 2>/dev/null | grep -q evil && [ ! -e "$1/fifo" ] && [ ! -e "$1/sock" ] && [ -f "$1/b.txt" ] && [ -f "$1/.wh.b.txt" ]' _ "$W"
check "the run is audited" audited "$ID" ok
finish
