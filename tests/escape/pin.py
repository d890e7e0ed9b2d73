#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Try to pin sbx-helper on the caller's own descriptors.

usage: pin.py HELPER CASES.json > RESULTS.jsonl   (run as the caller)

Each case: name, argv (after argv[0]), full (which of "1", "2" are a pipe
already full, that nobody reads while the helper runs), code (the memfd
on fd 3; a result socketpair is fd 4, as drive.py passes them, which
pin.py does not read while the helper runs either). The helper gets 8 s
to exit. One JSON line per case: exited (within the 8 s), rc, seconds,
then what the pipes held once they were read after all, and the bytes of
the frames on the result socket as text ("sock"): the messages must not
be lost.
"""
import fcntl, json, os, socket, subprocess, sys, time
import sbxframes as F

F_SETPIPE_SZ = 1031
helper, cases = sys.argv[1], json.load(open(sys.argv[2]))


def full_pipe():
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"f" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)
    return r, w


def drain(fd, until):
    got = b""
    os.set_blocking(fd, False)
    while time.monotonic() < until:
        try:
            b = os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.05)
            continue
        if not b:
            break
        got += b
    return got.lstrip(b"f")


for c in cases:
    m = os.memfd_create("code", os.MFD_ALLOW_SEALING)
    os.write(m, c.get("code", "print('RAN')").encode())
    fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    res, peer = socket.socketpair()
    pipes = {fd: full_pipe() for fd in c["full"]}
    fds = {3: m, 4: peer.fileno()}
    for fd, (r, w) in pipes.items():
        fds[int(fd)] = w

    def setup():
        F.place_fds(fds)

    t0 = time.monotonic()
    p = subprocess.Popen([helper] + c["argv"], executable=helper, stdin=subprocess.DEVNULL,
                         stdout=None if "1" in c["full"] else subprocess.DEVNULL,
                         stderr=None if "2" in c["full"] else subprocess.DEVNULL,
                         preexec_fn=setup, close_fds=False, env={})
    peer.close()
    os.close(m)
    for r, w in pipes.values():
        os.close(w)
    try:
        rc = p.wait(timeout=8)
        exited = True
    except subprocess.TimeoutExpired:
        rc, exited = None, False
    secs = time.monotonic() - t0
    # now the caller reads: what was written to it is still delivered
    out = {fd: drain(r, time.monotonic() + 3).decode(errors="replace") for fd, (r, w) in pipes.items()}
    out["sock"] = drain(res.fileno(), time.monotonic() + 3).decode(errors="replace")
    if not exited:
        rc = p.wait()
    res.close()
    for r, w in pipes.values():
        os.close(r)
    print(json.dumps({"name": c["name"], "exited": exited, "rc": rc, "seconds": round(secs, 2), "out": out}),
          flush=True)
