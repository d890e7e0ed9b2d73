#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Run sbx-helper directly, the way an attacker would, once per case.

usage: drive.py HELPER RAWEXEC CASES.json > RESULTS.jsonl

Each case is an object:
  argv     the helper's arguments after argv[0] (list of strings)
  raw      extra rawexec options (["-0"], ["-c"], ["-e", "X"], ["-B", "N"])
  code     the code put in the memfd on fd 3 (default: a Python print)
  rlimits  {"NOFILE": [soft, hard], ...} set before the exec
The result fd is a socketpair on fd 4, the control fd a pipe on fd 5;
every other fd of this process is close-on-exec.
One JSON line per case: rc, stdout, stderr, result (the result frame's
JSON or null), artifacts (frame count).
"""
import json, os, resource, socket, struct, subprocess, sys, threading, time

helper, rawexec, cases = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
for c in cases:
    t0 = time.monotonic()
    code = c.get("code", "print('RAN')").encode()
    m = os.memfd_create("code", os.MFD_ALLOW_SEALING)
    os.write(m, code)
    res, peer = socket.socketpair()
    cr, cw = os.pipe()
    fds = {3: m, 4: peer.fileno(), 5: cr}
    limits = c.get("rlimits", {})

    def setup():
        for target, fd in fds.items():
            os.dup2(fd, target + 100)
        for target in fds:
            os.dup2(target + 100, target)
            os.close(target + 100)
        for name, (soft, hard) in limits.items():
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), (soft, hard))

    p = subprocess.Popen([rawexec] + c.get("raw", []) + ["--", helper, "sbx-helper"] + c["argv"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=setup, close_fds=False, env={})
    peer.close(); os.close(cr); os.close(m)
    got = []

    def read_result():
        data = b""
        res.settimeout(60)
        try:
            while True:
                b = res.recv(1 << 20)
                if not b:
                    break
                data += b
        except socket.timeout:
            pass
        got.append(data)

    # the helper forwards output to our pipes while it runs: drain them
    # concurrently, or it waits for a stalled client
    th = threading.Thread(target=read_result)
    th.start()
    out, err = p.communicate(timeout=60)
    th.join()
    data = got[0]
    os.close(cw); res.close()
    result, frames = None, 0
    while len(data) >= 8:
        t, n = struct.unpack(">II", data[:8])
        body, data = data[8:8 + n], data[8 + n:]
        frames += 1
        if t == 2:
            result = json.loads(body)
    print(json.dumps({"name": c.get("name", ""), "rc": p.returncode, "stdout": out.decode(errors="replace"),
                      "stderr": err.decode(errors="replace"), "result": result, "frames": frames, "ms": int((time.monotonic() - t0) * 1000)}), flush=True)
