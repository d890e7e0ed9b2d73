#!/bin/sh
# SPDX-License-Identifier: ISC
# Class 4, symlink and rename races on every path used for the caller.
# The helper itself opens no path the caller names (code arrives as a
# memfd, artifacts leave as sealed memfds: DESIGN.md); the client does, as
# the caller. Racers (bin/swapper.c, renameat2 RENAME_EXCHANGE in a loop,
# thousands of times) swap the --artifacts directory with symlinks to a
# directory outside and to /etc, and the code file with a symlink to a
# root-only file, during whole runs; inside the sandbox a racer that tries
# to outlive the payload swaps /out entries with symlinks to a host file
# and to /etc while the run ends (and the caller cannot reach /out from
# outside to race the copy-out: /proc/PID/root is refused). Nothing may be
# written, read or mounted outside the intended place.
#
# Defence removed -> this test failed (checked by hand, see the report):
#   O_NOFOLLOW dropped from artifact_dir_open() (client/artifacts.c)
#     -> tests 3 and 8 fail: the raced and the static symlink are followed,
#        files land in the directory outside
#   O_NOFOLLOW and every RESOLVE_* flag dropped from the collector's openat2
#     (collector/artifacts.c) -> tests 9 and 11 fail: /out symlinks are followed and
#     the host file's content comes back as an artifact
. "$(dirname "$0")/lib.sh"
plan 14
echo "host-secret-$$" > "$T/hostsecret"
chmod 0644 "$T/hostsecret"
R=$T/r
mkdir "$R" "$R/art" "$T/victim"
echo 'open("/out/r.txt", "w").write("from-sandbox")' > "$R/code.py"
ln -s "$T/victim" "$R/l-victim"
ln -s /etc "$R/l-etc"
ln -s "$CANARY/secret" "$R/l-secret"
ln -s "$T/victim" "$R/static-link"
chown -h sbxtest "$R" "$R"/* "$T/victim"
grep -F "$T" /proc/self/mountinfo > "$T/mounts.before"

# 1. the caller's paths, raced for 2.5 s while runs go on
run_as sbxtest "$BIN/swapper" "$R/art" "$R/l-victim" 2500 > "$T/sw1" &
s1=$!
run_as sbxtest "$BIN/swapper" "$R/art" "$R/l-etc" 2500 > "$T/sw2" &
s2=$!
run_as sbxtest "$BIN/swapper" "$R/code.py" "$R/l-secret" 2500 > "$T/sw3" &
s3=$!
i=0; : > "$T/rcs"; : > "$T/ids"
while [ $i -lt 12 ]; do
	i=$((i + 1))
	run_as sbxtest "$SBX" run --json --artifacts "$R/art" "$R/code.py" > "$T/out" 2> "$T/err.$i"; rc=$?
	echo "$rc" >> "$T/rcs"
	[ "$rc" = 0 ] && jget id >> "$T/ids"
	cat "$T/out" "$T/err.$i" >> "$T/all-output"
done
wait $s1 $s2 $s3
diag "exchanges: $(cat "$T/sw1" "$T/sw2" "$T/sw3" | tr '\n' ' ')" "exit statuses: $(sort "$T/rcs" | uniq -c | tr '\n' ' ')"
check "the racers made thousands of exchanges each" \
	sh -c 'for f in "$@"; do [ "$(cat "$f")" -gt 1000 ] || exit 1; done' _ "$T/sw1" "$T/sw2" "$T/sw3"
check "every run either worked or was refused by the client (2: a raced path, 125: set-up)" sh -c '! grep -vxq "0\|2\|125" "$1"' _ "$T/rcs"
check "nothing written into the directory outside" [ -z "$(ls -A "$T/victim")" ]
check "nothing written into /etc" [ -z "$(find /etc -maxdepth 2 \( -name 'r.txt*' -o -name '*.tmp-*' \) 2>/dev/null)" ]
check "the root-only file was never read (not in any result or error)" sh -c '! grep -q canary-secret "$1"' _ "$T/all-output"
check "what was saved is the sandbox's file, in the real directory" \
	sh -c 'for f in $(find "$1" -type f ! -name code.py); do [ "$(cat "$f")" = from-sandbox ] || exit 1; done' _ "$R"
audited_all() { while read -r id; do audited "$id" ok || return 1; done < "$T/ids"; }
check "every run that ran is audited" audited_all

# 2. the same paths, not raced: refused, not followed
run_as sbxtest "$SBX" run --artifacts "$R/static-link" -c 'open("/out/s.txt", "w").write("x")' > "$T/out" 2> "$T/err"; rc=$?
check "--artifacts naming a symlink: refused (2, artifacts_unwritable), nothing in its target" \
	sh -c '[ "$1" = 2 ] && grep -q "is a symbolic link" "$2" && [ -z "$(ls -A "$3")" ]' _ "$rc" "$T/err" "$T/victim"

# 3. inside: /out entries raced against symlinks to a host file and /etc by
# a process that tries to outlive the payload, while /out is copied out
cat > "$T/outrace.py" <<PY
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
open("/out/x", "w").write("sandbox-file")
os.symlink("$T/hostsecret", "/out/y")
os.mkdir("/out/d"); open("/out/d/inner", "w").write("inner")
os.symlink("/etc", "/out/e")
os.symlink("$T/hostsecret", "/out/static-link")
os.symlink("/etc/passwd", "/out/passwd-link")
if os.fork() == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    n = 0
    while True:
        libc.renameat2(-100, b"/out/x", -100, b"/out/y", 2)
        libc.renameat2(-100, b"/out/d", -100, b"/out/e", 2)
        n += 2
        if n % 1000 == 0:
            open("/tmp/count.new", "w").write(str(n))
            os.rename("/tmp/count.new", "/tmp/count")
time.sleep(0.4)
print(open("/tmp/count").read())
PY
chmod 644 "$T/outrace.py"
ok3=0; : > "$T/ids3"
for i in 1 2 3; do
	rm -rf "$T/art3"
	sbx_run run --json --artifacts "$T/art3" "$T/outrace.py"
	jget id >> "$T/ids3"
	grep -rqs host-secret "$T/art3" && ok3=1
	# /out/d (renamed to e by the racer) is the sandbox's own directory:
	# its one file comes back under it (artifacts from subdirectories,
	# issue 12); /etc behind the symlink e never does
	find "$T/art3" -mindepth 1 ! -name x ! -name y ! -path "$T/art3/[de]" ! -path "$T/art3/[de]/inner" |
		grep -q . && ok3=1
	diag "run $i: $(cd "$T/art3" 2>/dev/null && find . -mindepth 1 | sort | tr '\n' ' ')"
	for f in "$T/art3"/*; do
		[ ! -f "$f" ] || [ "$(cat "$f")" = sandbox-file ] || ok3=1
		[ ! -d "$f" ] || [ "$(cat "$f/inner")" = inner ] || ok3=1
	done
	[ "$(jget stdout)" -gt 1000 ] 2>/dev/null || ok3=2
done
diag "swaps in the sandbox (last run): $(jget stdout)"
ok $ok3 "/out raced: only the sandbox's files come back (x or y, and d/inner or e/inner), never the host file or /etc"
check "the racer did not outlive the run (no cgroup left)" no_cgroups_left

# 4. could the caller race /out during copy-out from outside? Only through
# the payload's /proc/PID/root, which the kernel refuses: the sandbox's
# user namespace belongs to root, so the caller has no ptrace access to
# the payload even with the same uid (commoncap: CAP_SYS_PTRACE in the
# target's namespace). The racer tries for the whole run anyway: the
# payload fills /out, then waits for SIGUSR1, which the test (root) sends
# once the racer is done; that the payload is waiting is read from its
# /proc/PID/status (SigCgt), so no sleep decides who goes first.
cat > "$T/hostrace.py" <<'PY'
import ctypes, errno, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end, n, seen = time.time() + 1.0, 0, set()
while time.time() < end:
    try:
        d = os.open("/proc/%s/root/out" % sys.argv[1], os.O_PATH | os.O_DIRECTORY)
    except OSError as e:
        seen.add(errno.errorcode[e.errno]); continue
    seen.add("opened")
    n += libc.renameat2(d, b"x", d, b"y", 2) == 0
    n += libc.renameat2(d, b"d", d, b"e", 2) == 0
    os.close(d)
print(n, " ".join(sorted(seen)))
PY
chmod 644 "$T/hostrace.py"
rm -rf "$T/art4"
sbx_run_bg() { run_as sbxtest "$SBX" run --json --artifacts "$T/art4" -c "import os, signal
open('/out/x', 'w').write('sandbox-file')
os.symlink('$T/hostsecret', '/out/y')
os.mkdir('/out/d')
os.symlink('/etc', '/out/e')
signal.signal(signal.SIGUSR1, lambda *a: None)
signal.pause()" > "$T/out" 2>"$T/err"; }
sbx_run_bg &
bg=$!
procs 2 > "$T/procs4.json"
payload=$(pj "$T/procs4.json" 'max(p["pid"] for p in d["sandbox"])')
# until the payload catches SIGUSR1 (bit 10 of SigCgt), at most 60 s
python3 -c 'import sys, time
for _ in range(600):
    try:
        st = open("/proc/%s/status" % sys.argv[1]).read()
    except OSError:
        sys.exit(1)
    if int(st.split("SigCgt:")[1].split()[0], 16) & (1 << 9):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)' "$payload" || diag "the payload never waited for SIGUSR1"
run_as sbxtest python3 "$T/hostrace.py" "$payload" > "$T/hostswaps" 2>&1
kill -USR1 "$payload"
wait $bg
diag "caller on the payload's /proc/PID/root/out: $(cat "$T/hostswaps"); saved: $(ls -A "$T/art4" 2>/dev/null | tr '\n' ' ')"
check "the caller cannot reach the sandbox's /out from outside (EACCES), only x comes back" \
	sh -c 'grep -Eq "^0 EACCES( ENOENT)?$" "$1" && [ "$(ls -A "$2")" = x ] && [ "$(cat "$2/x")" = sandbox-file ]' _ "$T/hostswaps" "$T/art4"
jget id >> "$T/ids3"
check "no mount appeared on the host" sh -c 'grep -F "$1" /proc/self/mountinfo | cmp -s - "$2"' _ "$T" "$T/mounts.before"
check "host unchanged (passwd, shadow, canary, helper)" host_unchanged
audited3() { while read -r id; do audited "$id" ok || return 1; done < "$T/ids3"; }
check "the raced runs are audited" audited3
finish
