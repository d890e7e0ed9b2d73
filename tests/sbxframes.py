# SPDX-License-Identifier: ISC
"""The client <-> sbx-helper protocol (common/proto.h) for tests that drive
the helper directly: sealed code memfds, the frames on the result socket,
control bytes. lib.sh copies this file into each test's directory."""
import os, socket, struct

ARTIFACT, RESULT, STDOUT, STDERR, MESSAGE, STARTED, DRY_RUN = 1, 2, 3, 4, 5, 6, 7
INTERRUPT, TERMINATE = b"\x01", b"\x02"


def memfd(data, seal=True, name="code"):
    """A memfd holding data, sealed as the helper wants (unless seal=False)."""
    m = os.memfd_create(name, os.MFD_ALLOW_SEALING)
    os.write(m, data)
    if seal:
        import fcntl
        fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    return m


def place_fds(fds):
    """For Popen's preexec_fn: each descriptor of {target: fd} at its target
    number in the child, as the helper's fd options name them (by way of
    target + 100, so that no dup2 closes a source still to be moved)."""
    for target, fd in fds.items():
        os.dup2(fd, target + 100)
    for target in fds:
        os.dup2(target + 100, target)
        os.close(target + 100)


def read_all(sock, timeout=None):
    """Everything the helper sends until it closes the socket (or timeout
    seconds pass without a byte)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            b = sock.recv(1 << 20)
            if not b:
                break
            data += b
    except socket.timeout:
        pass
    return data


def parse(data):
    """[(type, payload)] of every complete frame in data."""
    out = []
    while len(data) >= 8:
        t, n = struct.unpack(">II", data[:8])
        out.append((t, data[8:8 + n]))
        data = data[8 + n:]
    return out


def result(data):
    """The result frame's JSON, or None."""
    import json
    for t, p in parse(data):
        if t == RESULT:
            return json.loads(p)
    return None


def messages(data):
    """The helper's own lines, each as "sbx-helper: ..." like the client shows them."""
    return ["sbx-helper: " + p.decode(errors="replace") for t, p in parse(data) if t == MESSAGE]


def output(data, which=STDOUT):
    return b"".join(p for t, p in parse(data) if t == which)
