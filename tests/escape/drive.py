#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Run sbx-helper directly, the way an attacker would, once per case.

usage: drive.py HELPER RAWEXEC CASES.json > RESULTS.jsonl

Each case is an object:
  argv     the helper's arguments after argv[0] (list of strings)
  raw      extra rawexec options (["-0"], ["-c"], ["-e", "X"], ["-B", "N"])
  code     the code put in the sealed memfd on fd 3 (default: a Python print)
  rlimits  {"NOFILE": [soft, hard], ...} set before the exec
The result fd is a socketpair on fd 4; every other fd of this process is
close-on-exec.
One JSON line per case: rc, stdout (the helper's own stdout and the
payload's STDOUT frames), stderr (the helper's own stderr and its MESSAGE
frames, each "sbx-helper: ..." as sbx shows them), result (the result
frame's JSON or null), frames (count).
"""
import json, os, resource, socket, subprocess, sys, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sbxframes as F

helper, rawexec, cases = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
for c in cases:
    t0 = time.monotonic()
    code = c.get("code", "print('RAN')").encode()
    m = F.memfd(code)
    res, peer = socket.socketpair()
    fds = {3: m, 4: peer.fileno()}
    limits = c.get("rlimits", {})

    def setup():
        F.place_fds(fds)
        for name, (soft, hard) in limits.items():
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), (soft, hard))

    p = subprocess.Popen([rawexec] + c.get("raw", []) + ["--", helper, "sbx-helper"] + c["argv"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=setup, close_fds=False, env={})
    peer.close(); os.close(m)
    got = []

    # the socket and the helper's own stdout/stderr are read concurrently:
    # a usage error goes to stderr before the socket is checked
    th = threading.Thread(target=lambda: got.append(F.read_all(res, 60)))
    th.start()
    out, err = p.communicate(timeout=60)
    th.join()
    data = got[0]
    res.close()
    out += F.output(data)
    err += "".join(m + "\n" for m in F.messages(data)).encode()
    print(json.dumps({"name": c.get("name", ""), "rc": p.returncode, "stdout": out.decode(errors="replace"),
                      "stderr": err.decode(errors="replace"), "result": F.result(data), "frames": len(F.parse(data)),
                      "ms": int((time.monotonic() - t0) * 1000)}), flush=True)
