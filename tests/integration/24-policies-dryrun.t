#!/bin/sh
# SPDX-License-Identifier: ISC
# `sbx policies` lists what the caller may use (the helper's rule), and
# `sbx run --dry-run` prints the effective set-up after the helper's checks
# without running or recording anything.
. "$(dirname "$0")/lib.sh"
plan 22
POL=$P/etc/sbx/policies.d
printf '[policy]\ndescription = small one\ngroups = sbx\n[limits]\nwall_time = 5s\nmemory = 128M\ninput_size = 1M\n[network]\nmode = loopback\n[filesystem]\nsessions = no\n' > "$POL/small.policy"
printf '[policy]\nusers = sbxout\n' > "$POL/others.policy"
printf '[policy]\nusers = sbxtest\n' > "$POL/mineonly.policy"
printf '[policy]\ngroups = sbx\n' > "$POL/hidden.policy"
chmod 644 "$POL/small.policy" "$POL/others.policy" "$POL/mineonly.policy"
chmod 600 "$POL/hidden.policy"
trap 'rm -rf "$T"; rm -f "$POL/small.policy" "$POL/others.policy" "$POL/mineonly.policy" "$POL/hidden.policy"' EXIT

sbx_run policies
check "policies: exit 0" [ "$rc" = 0 ]
check "policies: the default is listed and marked" grep -Eq '^\*default +30s +30s +512M +64 ' "$T/out"
check "policies: limits of another policy" grep -Eq '^ small +5s +30s +128M .* 1M .*loopback +default +no +small one$' "$T/out"
check "policies: a policy naming the caller is listed" grep -q '^ mineonly ' "$T/out"
check "policies: a policy for other users is not" sh -c '! grep -q others "$1"' _ "$T/out"
check "policies: an unreadable policy is listed as such" grep -q '^ hidden *(unreadable: Permission denied)' "$T/out"
sbx_run policies --json
check "policies --json: the default first, with its limits" [ "$(jget 0.name) $(jget 0.default) $(jget 0.limits.memory_bytes)" = "default true 536870912" ]
check "policies --json: network, input size, sessions" [ "$(jget 3.name) $(jget 3.network) $(jget 3.limits.input_bytes) $(jget 3.sessions)" = "small loopback 1048576 false" ]
run_as sbxout "$SBX" policies >"$T/out" 2>"$T/err"
check "policies: outside group sbx nothing is usable" sh -c 'grep -q "not in group sbx" "$1" && [ "$(wc -l < "$2")" = 1 ]' _ "$T/err" "$T/out"
sbx_run policies --bogus
check "policies: unknown option is a usage error (2)" [ "$rc" = 2 ]

sbx_run run -c pass # the audit log exists from here on
before=$("$AUDIT" list --limit 0 | wc -l)
printf 'abc' > "$T/in.txt"; chmod 644 "$T/in.txt"
sbx_run run --dry-run --timeout 2s --memory 100M --pids 10 --input "$T/in.txt" -c 'open("/tmp/ran", "w")'
check "dry-run: exit 0" [ "$rc" = 0 ]
check "dry-run: tightened limits" sh -c 'grep -qx "wall_time_ms: 2000" "$1" && grep -qx "memory_bytes: 104857600" "$1" && grep -qx "pids: 10" "$1"' _ "$T/out"
check "dry-run: the policy's other limits" grep -qx "cpu_time_ms: 30000" "$T/out"
check "dry-run: mounts, /in with the input" sh -c 'grep -qx "mount: /tmp tmpfs rw,nosuid,nodev size=67108864 nr_inodes=16384" "$1" && grep -qx "input: /in/in.txt 3" "$1"' _ "$T/out"
check "dry-run: namespaces and seccomp" sh -c 'grep -qx "namespaces: user mount pid net ipc uts cgroup" "$1" && grep -qx "seccomp: default" "$1"' _ "$T/out"
sbx_run run --dry-run --json --policy small -c pass
check "dry-run --json: one object with the policy's limits" [ "$(jget dry_run) $(jget policy) $(jget wall_time_ms) $(jget network)" = "true small 5000 loopback" ]
check "dry-run --json: mounts as a list" [ "$(jget mount.0)" = "/ tmpfs ro,nosuid,nodev" ]
sbx_run run --dry-run --timeout 60s -c pass
check "dry-run: a request above the policy is refused (125)" [ "$rc" = 125 ]
check "dry-run: the error names the limit" grep -q -- "--timeout 1m exceeds policy default's wall_time 30s" "$T/err"
sbx_run run --dry-run --json --policy others -c pass
check "dry-run --json: a policy the caller may not use is refused" sh -c '[ "$1" = 125 ] && grep -q "does not allow user sbxtest" "$2"' _ "$rc" "$T/out"
# a caller that never reads the result socket (and keeps its own stdout
# full) cannot hold root for ever: the answer is sent with MSG_DONTWAIT and
# a bounded wait, and the helper never writes to the caller's stdout
cat > "$T/stall.py" <<'PY'
import os, socket, subprocess, sys, time
import sbxframes as F
helper = sys.argv[1]
r, w = os.pipe()
os.set_blocking(w, False)
try:
    while True: os.write(w, b"x" * 65536)
except BlockingIOError: pass
os.set_blocking(w, True)
code = F.memfd(b"pass")
a, b = socket.socketpair()
b.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
t = time.time()
p = subprocess.Popen([helper, "run", "--lang", "python", "--code-fd", str(code), "--result-fd", str(b.fileno()),
                      "--dry-run"], stdout=w, pass_fds=(code, b.fileno()))
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    rc = "hung"
print(rc, int(time.time() - t) < 10)
PY
chmod 644 "$T/stall.py"
run_as sbxtest /usr/bin/python3 "$T/stall.py" "$P/libexec/sbx/sbx-helper" >"$T/out" 2>"$T/err"
check "dry-run: a client that does not read ends the helper (125), not holds it" [ "$(cat "$T/out")" = "125 True" ]
check "dry-run: nothing recorded in the audit log" [ "$("$AUDIT" list --limit 0 | wc -l)" = "$before" ]
finish
