#!/bin/sh
# SPDX-License-Identifier: ISC
# Input files (/in), sessions (/work), and the helper's checks of the fds
# behind them when it is called directly with crafted ones.
. "$(dirname "$0")/lib.sh"
plan 56
POL=$P/etc/sbx/policies.d
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
# run_as clears the environment: the session store goes where X says
srun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
cat > "$POL/tinyin.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
input_size = 1K
[filesystem]
sessions = no
EOF2
chmod 644 "$POL/tinyin.policy"
RO=$X/sbx/sessions/ro
trap 'umount "$RO" 2>/dev/null; rm -rf "$T"; rm -f "$POL/tinyin.policy"' EXIT

printf 'a,b\n1,2\n' > "$T/data.csv"
printf 'x' > "$T/other.txt"
chmod 644 "$T/data.csv" "$T/other.txt"

# --- inputs ---
srun run --input "$T/data.csv" --input "$T/other.txt" -c 'import os
print(sorted(os.listdir("/in")))
print(open("/in/data.csv").read(), end="")'
check "inputs: run ok" [ "$rc" = 0 ]
check "inputs: both files under /in by basename" grep -qx "\['data.csv', 'other.txt'\]" "$T/out"
check "inputs: content intact" grep -qx "1,2" "$T/out"
srun run --input "$T/data.csv" -c 'import errno
for how in ("w", "a"):
    try:
        open("/in/data.csv", how)
        print("written")
    except OSError as e:
        print(errno.errorcode[e.errno])
try:
    open("/in/new", "w")
    print("created")
except OSError as e:
    print(errno.errorcode[e.errno])'
check "inputs: read-only (write, append and create fail)" sh -c '[ "$(grep -cE "^(EROFS|EACCES)\$" "$1")" = 3 ]' _ "$T/out"

srun run --input "$T/data.csv" --json -c 'pass'
check "inputs: the result's limits carry input_bytes" [ "$(jget limits.input_bytes)" = 67108864 ]
# one vocabulary: sbx-audit show --json has the result's limit keys, input_bytes too
check "inputs: show --json has the result's limits, input_bytes included (START and END)" \
	[ "$(audit_field "$(jget id)" start.limits.input_bytes) $(audit_field "$(jget id)" end.limits.input_bytes) $(audit_field "$(jget id)" start.limits.wall_time_ms)" = "67108864 67108864 30000" ]
check "inputs: the result lists name, size and SHA-256" \
	[ "$(jget inputs.0.name) $(jget inputs.0.size) $(jget inputs.0.sha256)" = "data.csv 8 $(sha256sum < "$T/data.csv" | cut -d' ' -f1)" ]

head -c 2000 /dev/zero > "$T/big.bin"; chmod 644 "$T/big.bin"
srun run --policy tinyin --input "$T/big.bin" -c 'print("ran")'
check "too large: refused by policy (77)" [ "$rc" = 77 ]
check "too large: nothing ran" [ ! -s "$T/out" ]
check "too large: error names input_size and the policy" grep -q "input files: more than input_size 1K (1024 bytes) of policy 'tinyin'" "$T/err"
srun run --policy tinyin --input "$T/data.csv" -c 'print(len(open("/in/data.csv").read()))'
check "under the limit: runs" [ "$(cat "$T/out")" = 8 ]

srun run --input "$T/data.csv" --input "$T/sub/data.csv" -c pass
check "duplicate basename: usage error 2" [ "$rc" = 2 ]
check "duplicate basename: error says so" grep -q "second file named 'data.csv'" "$T/err"
cp "$T/data.csv" "$T/.hidden"; chmod 644 "$T/.hidden"
srun run --input "$T/.hidden" -c pass
check "basename starting with '.': refused (2)" sh -c '[ "$1" = 2 ] && grep -q "is not a name for /in" "$2"' _ "$rc" "$T/err"
printf 'secret' > "$T/secret"; chmod 600 "$T/secret"
srun run --input "$T/secret" -c 'print("ran")'
check "file the caller cannot read: input_unreadable (2)" [ "$rc" = 2 ]
check "file the caller cannot read: client names it" grep -q "^sbx: --input: $T/secret: Permission denied" "$T/err"
srun run --input "$T" -c pass
check "a directory as input: refused" grep -q "not a regular file" "$T/err"
srun run --input /nonexistent/f -c pass
check "missing input: refused (2)" sh -c '[ "$1" = 2 ] && grep -q "No such file" "$2"' _ "$rc" "$T/err"

# --- sessions ---
srun run --session s1 -c 'import os; print(os.getcwd()); open("/work/note", "w").write("kept")'
check "session: run 1 ok, starts in /work" [ "$rc $(cat "$T/out")" = "0 /work" ]
check "session: directory created 0700, owned by the caller" \
	[ "$(stat -c '%a %U' "$X/sbx/sessions/s1")" = "700 sbxtest" ]
check "session: the file is the caller's" [ "$(stat -c %U "$X/sbx/sessions/s1/note")" = sbxtest ]
srun run --session s1 -c 'print(open("/work/note").read())'
check "session: run 2 reads what run 1 wrote" [ "$(cat "$T/out")" = kept ]
srun run --session s2 -c 'import os; print(os.listdir("/work"))'
check "another session does not see it" [ "$(cat "$T/out")" = "[]" ]
srun run -c 'import os; print(os.path.exists("/work"), os.getcwd())'
check "no session: no /work, starts in /tmp" [ "$(cat "$T/out")" = "False /tmp" ]
srun run --json --session s1 -c pass
check "session name recorded as the run's session" [ "$(audit_field "$(jget id)" start.session)" = s1 ]

# the helper never follows a link in the session: the payload resolves it in the sandbox
ln -s /etc/shadow "$X/sbx/sessions/s1/shadow"
ln -s /root "$X/sbx/sessions/s1/rootdir"
srun run --session s1 -c 'import os
for p in ("/work/shadow", "/work/rootdir"):
    print(os.path.exists(p))'
check "session: symlinks inside resolve in the sandbox, not on the host" [ "$(tr '\n' ' ' < "$T/out")" = "False False " ]
srun run --session s1 --lang sh -c 'mount -t tmpfs x /work 2>/dev/null && echo mounted; mkdir /work/d && echo made'
check "session: the payload cannot mount over it, can write" [ "$(cat "$T/out")" = made ]

srun run --json --policy tinyin --session s1 -c 'print("ran")'
check "policy with sessions = no: a session is refused by policy (77)" sh -c '[ "$1" = 77 ] && grep -q "does not allow sessions" "$2"' _ "$rc" "$T/out"
check "policy with sessions = no: the refusal is audited" [ "$(audit_field "$(jget id)" end.outcome)" = sandbox_error ]

srun session ls
check "session ls: lists both with sizes" sh -c 'grep -Eq "^s1 +4 " "$1" && grep -Eq "^s2 +0 " "$1"' _ "$T/out"
srun session ls --json
check "session ls --json: names" [ "$(jget 0.name) $(jget 1.name)" = "s1 s2" ]
chmod 0500 "$X/sbx/sessions/s1/d"
srun session rm s1
check "session rm: removed (even a read-only directory inside)" sh -c '[ "$1" = 0 ] && [ ! -e "$2" ]' _ "$rc" "$X/sbx/sessions/s1"
check "session rm: the link targets are untouched" [ -e /etc/shadow ]
srun session rm nosuch
check "session rm: unknown name is an error" [ "$rc" = 125 ]

for bad in ../x a/b .hidden ''; do
	srun run --session "$bad" -c pass
	[ "$rc" = 2 ] && grep -q "is not a session name" "$T/err" || { ok 1 "session name '$bad' refused"; continue; }
	ok 0 "session name '$bad' refused"
done

# a session on a read-only mount stays read-only (flags are only ever added)
mkdir "$RO"; chown sbxtest "$RO"; chmod 0700 "$RO"
mount --bind "$RO" "$RO" && mount -o remount,bind,ro "$RO"
srun run --session ro -c 'import errno
try:
    open("/work/x", "w")
    print("written")
except OSError as e:
    print(errno.errorcode[e.errno])'
check "session on a read-only mount: still read-only in the sandbox" [ "$(cat "$T/out")" = EROFS ]
umount "$RO"
srun run --session ro --lang sh -c 'grep " /work " /proc/self/mountinfo'
check "session mount: nosuid, nodev, private (no shared: peer group)" \
	sh -c 'grep -q "nosuid,nodev" "$1" && ! grep -q "shared:" "$1"' _ "$T/out"

ln -s /tmp "$X/sbx/sessions/link"
srun run --session link -c 'print("ran")'
check "client: session that is a symlink refused" sh -c '[ "$1" = 125 ] && grep -q "is a symbolic link: refused" "$2"' _ "$rc" "$T/err"
mkdir "$X/sbx/sessions/ww"; chown sbxtest "$X/sbx/sessions/ww"; chmod 0777 "$X/sbx/sessions/ww"
srun run --session ww -c 'print("ran")'
check "client: world-writable session refused" grep -q "writable by group or others (mode 0777): refused" "$T/err"
mkdir "$X/sbx/sessions/rootown"; chmod 0700 "$X/sbx/sessions/rootown"
srun run --session rootown -c 'print("ran")'
check "client: session owned by another user refused" grep -q "owned by uid 0, not by you" "$T/err"

# --- the helper called directly with crafted fds ---
cat > "$T/direct.py" <<'PY'
# The payload's output goes to our stdout, the helper's messages (and any
# usage error on its own stderr) to our stderr, as sbx would show them.
import os, socket, sys
import sbxframes as F
helper, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
code = F.memfd(b"print('ran')")
res, peer = socket.socketpair()
extra = []
if mode == "plainfile":        # a regular file, not a memfd
    fd = os.open(arg, os.O_RDONLY); extra = ["--input-fd", str(fd), "--input-name", "x"]
elif mode == "unsealed":       # a memfd the caller can still change
    fd = os.memfd_create("in", os.MFD_ALLOW_SEALING); os.write(fd, b"data")
    extra = ["--input-fd", str(fd), "--input-name", "x"]
elif mode == "halfsealed":     # sealed against shrinking only
    fd = os.memfd_create("in", os.MFD_ALLOW_SEALING); os.write(fd, b"data")
    import fcntl; fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    extra = ["--input-fd", str(fd), "--input-name", "x"]
elif mode == "name":           # a sealed memfd under a hostile name
    fd = os.memfd_create("in", os.MFD_ALLOW_SEALING); os.write(fd, b"data")
    import fcntl; fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    extra = ["--input-fd", str(fd), "--input-name", arg]
elif mode == "wrap":           # sparse sealed memfds whose sizes add up past 2^64
    import fcntl
    fds = []
    for size in ((1 << 63) - 4096, (1 << 63) - 4096, 16384):
        f = os.memfd_create("in", os.MFD_ALLOW_SEALING); os.ftruncate(f, size)
        fcntl.fcntl(f, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        fds.append(f)
    for i, f in enumerate(fds):
        os.set_inheritable(f, True); extra += ["--input-fd", str(f), "--input-name", "f%d" % i]
    fd = fds[0]
elif mode == "noname":
    fd = os.memfd_create("in", 0); extra = ["--input-fd", str(fd)]
elif mode == "work":           # --work-fd on any path (O_PATH, no follow)
    fd = os.open(arg, os.O_PATH | os.O_NOFOLLOW); extra = ["--work-fd", str(fd)]
elif mode == "procself":       # our own /proc/PID: ours, 0555, but /proc/PID/root is the host's /
    fd = os.open("/proc/%d" % os.getpid(), os.O_RDONLY | os.O_DIRECTORY); extra = ["--work-fd", str(fd)]
for f in [code, peer.fileno()] + ([fd] if extra else []):
    os.set_inheritable(f, True)
pid = os.fork()
if pid == 0:
    os.execv(helper, [helper, "run", "--lang", "python", "--code-fd", str(code),
             "--result-fd", str(peer.fileno())] + extra)
peer.close()
data = F.read_all(res)
_, st = os.waitpid(pid, 0)
sys.stdout.write(F.output(data).decode(errors="replace"))
sys.stderr.write("".join(m + "\n" for m in F.messages(data)))
print(os.waitstatus_to_exitcode(st))
PY
chmod 644 "$T/direct.py"
direct() { run_as sbxtest /usr/bin/python3 "$T/direct.py" "$P/libexec/sbx/sbx-helper" "$@" >"$T/out" 2>"$T/err"; }
refused() { [ "$(tail -1 "$T/out")" = "${2:-125}" ] && grep -q "$1" "$T/err" && ! grep -q ran "$T/out"; }
direct plainfile "$T/data.csv"
check "helper: a plain file as --input-fd refused" refused "not a memfd"
direct unsealed -
check "helper: an unsealed memfd refused" refused "not sealed against writing"
direct halfsealed -
check "helper: a partly sealed memfd refused" refused "not sealed against writing"
direct wrap -
check "helper: sparse inputs whose sizes wrap around refused by policy (77)" refused "more than input_size" 77
direct name ../etc
check "helper: input name with '..' refused" refused "input-name: invalid value"
direct name a/b
check "helper: input name with '/' refused" refused "input-name: invalid value"
direct noname -
check "helper: --input-fd without a name refused" refused "must be followed by --input-name"
mkdir "$T/mine"; chown sbxtest "$T/mine"; chmod 0700 "$T/mine"
ln -s "$T/mine" "$T/mylink"
direct work "$T/mylink"
check "helper: --work-fd on a symlink refused" refused "not a directory"
direct work /usr
check "helper: --work-fd on a directory of another user refused" refused "owned by uid 0, not by you"
chmod 0777 "$T/mine"
direct work "$T/mine"
check "helper: --work-fd on a world-writable directory refused" refused "writable by group or others"
direct procself -
check "helper: --work-fd on the caller's own /proc/PID refused" refused "kernel pseudo-filesystem): refused"
chmod 0700 "$T/mine"
direct work "$T/mine"
check "helper: a good --work-fd runs" [ "$(tr '\n' ' ' < "$T/out")" = "ran 0 " ]
srun run --json --session s2 --input "$T/data.csv" -c pass
check "no cgroup left after a run with inputs and a session" no_cgroups_left
finish
