#!/bin/sh
# SPDX-License-Identifier: ISC
# Who may not run, what is refused, and what never reaches root code or the
# sandbox: callers outside group sbx, requests above the policy, interval
# timers (policy permissions, the hostile environment and caller rlimits
# are in tests/escape/13-policy-perms.t and 08-env.t).
. "$(dirname "$0")/lib.sh"
plan 14
POL=$P/etc/sbx/policies.d

run_as sbxout "$SBX" run -c 'print(1)' >"$T/out" 2>"$T/err"; rc=$?
check "caller outside group sbx: exit 77, naming the group and how to join it" \
	sh -c '[ "$1" = 77 ] && grep -q "sbxout is not in group sbx, which may run .*: ask an administrator to run usermod -a -G sbx sbxout, then log in again" "$2"' _ "$rc" "$T/err"
check "caller outside group sbx: nothing ran" [ ! -s "$T/out" ]
run_as sbxout "$P/libexec/sbx/sbx-helper" run --lang python --code-fd 3 --result-fd 4 \
	3</dev/null 4>/dev/null >/dev/null 2>&1; rc=$?
check "helper not executable outside group sbx" [ "$rc" = 126 ]

# Policy files and directories others can write: tests/escape/13-policy-perms.t.

# a policy for named users only: the default group must not come back
printf '[policy]\nusers = sbxout\n' > "$POL/named.policy"
chmod 644 "$POL/named.policy"
sbx_run run --json --policy named -c 'print("ran")'
check "policy naming other users: refused by policy (77)" [ "$rc" = 77 ]
check "policy naming other users: nothing ran" [ "$(jget stdout)" = "" ]
check "policy naming other users: error says so" sh -c 'grep -q "does not allow user sbxtest" "$1"' _ "$T/out"
rm -f "$POL/named.policy"

# the code fd must be a sealed memfd: a pipe could hold root code in
# read(2), and unsealed code could change between the recorder's hash and
# the sandbox's copy (the recorded code would not be the code that ran)
cat > "$T/codefd.py" <<'PY'
import os, socket, subprocess, sys, time
import sbxframes as F
helper, kind = sys.argv[1], sys.argv[2]
if kind == "pipe":
    r, w = os.pipe()          # never written, never closed: read(2) would wait
    code = r
else:
    code = F.memfd(b"print('RAN')", seal=False)
a, b = socket.socketpair()
t = time.monotonic()
p = subprocess.Popen([helper, "run", "--lang", "python", "--code-fd", str(code), "--result-fd", str(b.fileno())],
                     pass_fds=(code, b.fileno()), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
b.close()
data = F.read_all(a, 20)
rc = p.wait(timeout=20)
res = F.result(data) or {}
print(rc, int(time.monotonic() - t) < 5, res.get("outcome"), repr(res.get("stdout")), "|".join(F.messages(data)))
PY
chmod 644 "$T/codefd.py"
run_as sbxtest /usr/bin/python3 "$T/codefd.py" "$P/libexec/sbx/sbx-helper" pipe >"$T/out" 2>"$T/err"
diag "$(cat "$T/out" "$T/err")"
check "code from a pipe refused at once, audited, nothing ran" \
	sh -c 'grep -q "^125 True sandbox_error .. sbx-helper: --code-fd: not a memfd" "$1"' _ "$T/out"
run_as sbxtest /usr/bin/python3 "$T/codefd.py" "$P/libexec/sbx/sbx-helper" unsealed >"$T/out" 2>"$T/err"
check "code in an unsealed memfd refused (it could change after it was recorded)" \
	sh -c 'grep -q "^125 True sandbox_error .. sbx-helper: --code-fd: memfd not sealed" "$1"' _ "$T/out"

sbx_run run --json --memory 4G -c 'print(1)'
check "asking above the policy: refused by policy (77)" [ "$rc" = 77 ]
check "refused request is still audited as sandbox_error" sh -c '"$1" list --limit 1 | grep -q sandbox_error' _ "$AUDIT"

# The hostile environment and caller rlimits: tests/escape/08-env.t.
# An interval timer survives execve(2): the supervisor must not die of it.
cat > "$T/itimer.py" <<'PY'
import os, signal, socket, sys
import sbxframes as F
helper = sys.argv[1]
m = F.memfd(b"import time; time.sleep(2); print('done')")
res, peer = socket.socketpair()
pid = os.fork()
if pid == 0:
    res.close()
    for fd in (m, peer.fileno()): os.set_inheritable(fd, True)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    signal.setitimer(signal.ITIMER_PROF, 0.01)
    os.execv(helper, [helper, "run", "--lang", "python", "--code-fd", str(m),
             "--result-fd", str(peer.fileno())])
peer.close()
data = F.read_all(res)
_, st = os.waitpid(pid, 0)
r = F.result(data)
print(os.waitstatus_to_exitcode(st), r["stdout"].strip(), r["id"])
PY
chmod 644 "$T/itimer.py"
run_as sbxtest /usr/bin/python3 "$T/itimer.py" "$P/libexec/sbx/sbx-helper" >"$T/out" 2>"$T/err"
check "caller's interval timers do not kill the supervisor" [ "$(tail -1 "$T/out" | cut -d' ' -f1,2)" = "0 done" ]
check "no cgroup left after the timer attack" no_cgroup_of "$(tail -1 "$T/out" | cut -d' ' -f3)"

# The control bytes arrive on the result socket, which is the caller's: a
# copy of the helper's end kept by the caller can read each byte right
# after poll(2) announced it to the supervisor. A supervisor blocking in
# recv(2) would then stop enforcing every limit; it reads with
# MSG_DONTWAIT. The race is won only now and then, so the check is that the
# limit always holds while it is tried for a whole run.
cat > "$T/steal.py" <<'PY'
# The caller steals the supervisor's control bytes: a copy of the helper's
# end of the result socket reads each byte right after it is written,
# racing the supervisor's poll(2) -> recv(2). Bytes other than the control
# values mean nothing to the helper. Prints the result's outcome and wall_ms.
import os, random, socket, sys, time
import sbxframes as F
helper = sys.argv[1]
m = F.memfd(b"import time\nwhile True:\n    time.sleep(0.01)\n")
res, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
thief = socket.socket(fileno=os.dup(peer.fileno()))
thief.setblocking(False)
pid = os.fork()
if pid == 0:
    os.dup2(m, 3); os.dup2(peer.fileno(), 4)
    os.closerange(5, 1024)
    os.execv(helper, [helper, "run", "--lang", "python", "--timeout", "2000", "--code-fd", "3",
                      "--result-fd", "4"])
peer.close()
end = time.monotonic() + 3.0
got = b""
while time.monotonic() < end:
    res.send(b"x")
    t = time.perf_counter() + random.random() * 0.0003  # hit poll -> recv
    while time.perf_counter() < t:
        pass
    try:
        thief.recv(16)
    except BlockingIOError:
        pass
thief.close()
data = F.read_all(res, 12)
os.waitpid(pid, 0)
r = F.result(data) or {"outcome": "none", "wall_ms": -1}
print(r["outcome"], r["wall_ms"])
PY
chmod 644 "$T/steal.py"
run_as sbxtest /usr/bin/python3 "$T/steal.py" "$P/libexec/sbx/sbx-helper" >"$T/out" 2>/dev/null
diag "stolen control bytes: $(cat "$T/out")"
check "control bytes stolen: the 2 s wall limit still ends the run" \
	sh -c 'set -- $(cat "$1"); [ "$1" = timeout ] && [ "$2" -lt 4000 ]' _ "$T/out"
# the result fd must be an AF_UNIX stream socket (getsockopt SO_DOMAIN,
# SO_TYPE); said on stderr, by a child running as the caller
run_as sbxtest /usr/bin/python3 -c 'import os, socket, sys
sys.path.insert(0, sys.argv[2]); import sbxframes as F
m = F.memfd(b"print(1)")
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
os.dup2(m, 3); os.dup2(b.fileno(), 4)
for fd in (3, 4): os.set_inheritable(fd, True)
os.execv(sys.argv[1], [sys.argv[1], "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4"])' \
	"$P/libexec/sbx/sbx-helper" "$T" >/dev/null 2>"$T/err"; rc=$?
check "a result fd that is not a stream socket: refused (125), named on stderr" \
	sh -c '[ "$1" = 125 ] && [ "$(cat "$2")" = "sbx-helper: --result-fd: not an AF_UNIX SOCK_STREAM socket" ]' _ "$rc" "$T/err"
finish
