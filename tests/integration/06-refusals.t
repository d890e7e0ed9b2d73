#!/bin/sh
# SPDX-License-Identifier: ISC
# Who may not run, what is refused, and what never reaches root code or the
# sandbox: callers outside group sbx, requests above the policy, interval
# timers (policy permissions, the hostile environment and caller rlimits
# are in tests/escape/13-policy-perms.t and 08-env.t).
. "$(dirname "$0")/lib.sh"
plan 13
POL=$P/etc/sbx/policies.d

run_as sbxout "$SBX" run -c 'print(1)' >"$T/out" 2>"$T/err"; rc=$?
check "caller outside group sbx: exit 77, naming the group and how to join it" \
	sh -c '[ "$1" = 77 ] && grep -q "sbxout is not in group sbx, which may run .*: ask an administrator to run usermod -a -G sbx sbxout, then log in again" "$2"' _ "$rc" "$T/err"
check "caller outside group sbx: nothing ran" [ ! -s "$T/out" ]
run_as sbxout "$P/libexec/sbx/sbx-helper" run --lang python --code-fd 3 --result-fd 4 --control-fd 5 \
	3</dev/null 4>/dev/null 5</dev/null >/dev/null 2>&1; rc=$?
check "helper not executable outside group sbx" [ "$rc" = 126 ]

# Policy files and directories others can write: tests/escape/13-policy-perms.t.

# a policy for named users only: the default group must not come back
printf '[policy]\nusers = sbxout\n' > "$POL/named.policy"
chmod 644 "$POL/named.policy"
sbx_run run --json --policy named -c 'print("ran")'
check "policy naming other users: refused (125)" [ "$rc" = 125 ]
check "policy naming other users: nothing ran" [ "$(jget stdout)" = "" ]
check "policy naming other users: error says so" sh -c 'grep -q "does not allow user sbxtest" "$1"' _ "$T/out"
rm -f "$POL/named.policy"

# the code fd must be a memfd: a pipe could hold root code in read(2)
run_as sbxtest sh -c "sleep 5 | $P/libexec/sbx/sbx-helper run --lang python --code-fd 3 --result-fd 4 --control-fd 5 3<&0 4>/dev/null 5</dev/null" >/dev/null 2>"$T/err"; rc=$?
check "code from a pipe refused at once" sh -c '[ "$1" = 125 ] && grep -q "not a memfd" "$2"' _ "$rc" "$T/err"

sbx_run run --json --memory 4G -c 'print(1)'
check "asking above the policy: 125" [ "$rc" = 125 ]
check "refused request is still audited as sandbox_error" sh -c '"$1" list --limit 1 | grep -q sandbox_error' _ "$AUDIT"

# The hostile environment and caller rlimits: tests/escape/08-env.t.
# An interval timer survives execve(2): the supervisor must not die of it.
cat > "$T/itimer.py" <<'PY'
import json, os, signal, socket, struct, sys
helper = sys.argv[1]
m = os.memfd_create("code", os.MFD_ALLOW_SEALING)
os.write(m, b"import time; time.sleep(2); print('done')")
res, peer = socket.socketpair(); cr, cw = os.pipe()
pid = os.fork()
if pid == 0:
    res.close()
    for fd in (m, peer.fileno(), cr): os.set_inheritable(fd, True)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    signal.setitimer(signal.ITIMER_PROF, 0.01)
    os.execv(helper, [helper, "run", "--lang", "python", "--code-fd", str(m),
             "--result-fd", str(peer.fileno()), "--control-fd", str(cr)])
peer.close(); os.close(cr)
data = b""
while True:
    b = res.recv(65536)
    if not b: break
    data += b
_, st = os.waitpid(pid, 0)
t, n = struct.unpack(">II", data[:8])
r = json.loads(data[8:8 + n])
print(os.waitstatus_to_exitcode(st), r["stdout"].strip(), r["id"])
PY
chmod 644 "$T/itimer.py"
run_as sbxtest /usr/bin/python3 "$T/itimer.py" "$P/libexec/sbx/sbx-helper" >"$T/out" 2>"$T/err"
check "caller's interval timers do not kill the supervisor" [ "$(tail -1 "$T/out" | cut -d' ' -f1,2)" = "0 done" ]
check "no cgroup left after the timer attack" no_cgroup_of "$(tail -1 "$T/out" | cut -d' ' -f3)"

# The control pipe is the caller's: a second description of it (opened via
# /proc/self/fd) can read each byte right after poll(2) announced it to the
# supervisor. A supervisor blocking in read(2) would then stop enforcing
# every limit; it must read its own non-blocking description instead. The
# race is won only now and then, so the check is that the limit always
# holds while it is tried for a whole run.
cat > "$T/steal.py" <<'PY'
# The caller steals the supervisor's control bytes: a second, non-blocking
# description of the control pipe (via /proc/self/fd) reads each byte right
# after it is written, racing the supervisor's poll(2) -> read(2). Bytes
# other than I and T mean nothing to the helper. Prints the result's
# outcome and wall_ms.
import json, os, socket, struct, sys, time
helper = sys.argv[1]
code = b"import time\nwhile True:\n    time.sleep(0.01)\n"
m = os.memfd_create("code", os.MFD_ALLOW_SEALING)
os.write(m, code)
res, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
cr, cw = os.pipe()
thief = os.open("/proc/self/fd/%d" % cr, os.O_RDONLY | os.O_NONBLOCK)
pid = os.fork()
if pid == 0:
    os.dup2(m, 3); os.dup2(peer.fileno(), 4); os.dup2(cr, 5)
    os.closerange(6, 1024)
    os.execv(helper, [helper, "run", "--lang", "python", "--timeout", "2000", "--code-fd", "3",
                      "--result-fd", "4", "--control-fd", "5"])
peer.close(); os.close(cr)
end = time.monotonic() + 3.0
import random
while time.monotonic() < end:
    os.write(cw, b"x")
    t = time.perf_counter() + random.random() * 0.0003  # hit poll -> read
    while time.perf_counter() < t:
        pass
    try:
        os.read(thief, 16)
    except BlockingIOError:
        pass
# hold the write end: a supervisor stuck in read(2) stays stuck
res.settimeout(12)
data = b""
try:
    while True:
        b = res.recv(65536)
        if not b:
            break
        data += b
except socket.timeout:
    pass
os.close(cw)
os.waitpid(pid, 0)
t, n = struct.unpack(">II", data[:8]) if len(data) >= 8 else (0, 0)
r = json.loads(data[8:8 + n]) if n else {"outcome": "none", "wall_ms": -1}
print(r["outcome"], r["wall_ms"])
PY
chmod 644 "$T/steal.py"
run_as sbxtest /usr/bin/python3 "$T/steal.py" "$P/libexec/sbx/sbx-helper" >"$T/out" 2>/dev/null
diag "stolen control bytes: $(cat "$T/out")"
check "control bytes stolen: the 2 s wall limit still ends the run" \
	sh -c 'set -- $(cat "$1"); [ "$1" = timeout ] && [ "$2" -lt 4000 ]' _ "$T/out"
# anything but a pipe is refused (a socket or a terminal has other rules)
run_as sbxtest /usr/bin/python3 -c 'import os, socket, sys
m = os.memfd_create("c"); os.write(m, b"print(1)")
a, b = socket.socketpair(); r, p = socket.socketpair()
os.dup2(m, 3); os.dup2(p.fileno(), 4); os.dup2(b.fileno(), 5)
for fd in (3, 4, 5): os.set_inheritable(fd, True)
os.execv(sys.argv[1], [sys.argv[1], "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4", "--control-fd", "5"])' \
	"$P/libexec/sbx/sbx-helper" >/dev/null 2>"$T/err"; rc=$?
check "a control fd that is not a pipe: refused (125), named" sh -c '[ "$1" = 125 ] && grep -q -- "--control-fd: not a pipe" "$2"' _ "$rc" "$T/err"
finish
