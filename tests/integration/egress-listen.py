#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""egress-listen.py LOG ADDR:PORT...: accept TCP connections on each
address, log "conn ADDR:PORT from PEER" to LOG for each, answer the first
line with "echo:" + the line, then discard the rest until the peer closes
("bytes N" logged). "ready" is logged once every socket listens. For the
egress tests: what reaches the server host, and what does not."""
import socket
import sys
import threading


def main(log, addrs):
    out = open(log, "a", buffering=1)
    lock = threading.Lock()

    def note(s):
        with lock:
            out.write(s + "\n")

    def serve(c, where, peer):
        n = 0
        try:
            first = c.recv(4096)
            n += len(first)
            c.sendall(b"echo:" + first)
            while True:
                b = c.recv(65536)
                if not b:
                    break
                n += len(b)
        except OSError:
            pass
        note("bytes %s %d" % (where, n))
        c.close()

    def accept(l, where):
        while True:
            c, peer = l.accept()
            note("conn %s from %s" % (where, peer[0]))
            threading.Thread(target=serve, args=(c, where, peer), daemon=True).start()

    for a in addrs:
        host, port = a.rsplit(":", 1)
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        l = socket.socket(fam)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind((host.strip("[]"), int(port)))
        l.listen(64)
        threading.Thread(target=accept, args=(l, a), daemon=True).start()
    note("ready")
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
