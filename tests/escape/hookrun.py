#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Run the hooked helper directly and act at one of its pause points.

usage: hookrun.py HOOKED PHASE ACTION -- HELPER-ARGS... > RESULT.json

The hooked helper (common/testhook.h) writes "sbx-test-hook: PHASE PID" to
its stderr at each pause point and waits for a byte on its stdin. At PHASE
this runs ACTION (a shell command, as this process's user) before letting
it go on; every other point goes on at once. The code (a Python print) is
a sealed memfd on fd 3, the result socket fd 4, as sbx passes them.
Prints one JSON object: rc, phases seen, the action's exit status, the
helper's other stderr lines, and the result frame (or null).
"""
import json, os, socket, subprocess, sys, threading
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sbxframes as F

hooked, phase, action = sys.argv[1:4]
args = sys.argv[5:] if sys.argv[4] == "--" else sys.argv[4:]
m = F.memfd(b"print('RAN')")
res, peer = socket.socketpair()


def setup():
    os.dup2(m, 103)
    os.dup2(peer.fileno(), 104)
    os.dup2(103, 3)
    os.dup2(104, 4)
    os.close(103)
    os.close(104)


p = subprocess.Popen([hooked] + args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, preexec_fn=setup, close_fds=False)
peer.close()
os.close(m)
got = []
th = threading.Thread(target=lambda: got.append(F.read_all(res, 60)))
th.start()
phases, other, acted = [], [], None
for raw in p.stderr:
    line = raw.decode(errors="replace").rstrip("\n")
    if line.startswith("sbx-test-hook: "):
        name = line.split()[1]
        phases.append(name)
        if name == phase and acted is None:
            acted = subprocess.call(["/bin/sh", "-c", action])
        try:
            p.stdin.write(b"x")
            p.stdin.flush()
        except OSError:
            pass
    elif not line.startswith("sbx-test-mark: "):
        other.append(line)
rc = p.wait(timeout=60)
th.join()
print(json.dumps({"rc": rc, "phases": phases, "acted": acted, "stderr": other,
                  "result": F.result(got[0])}))
