#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""egress-listen.py LOG WHERE...: accept TCP connections on each WHERE
(ADDR:PORT, [ADDR6]:PORT, or @NAME for an abstract unix socket), log
"conn WHERE from PEER" to LOG for each, answer the first bytes with
"echo:" + them, then count the rest until the peer closes ("bytes WHERE N"
logged; first bytes "send N": N bytes back, "sent WHERE N" logged); udp:ADDR:PORT logs "udp WHERE from PEER" for each datagram.
"ready" is logged once every socket listens. For the egress tests: what
reaches the server host (or the host), and what does not."""
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
            if first.startswith(b"send "):
                # "send N": N bytes back, then close
                left = int(first.split()[1])
                while left > 0:
                    k = c.send(b"x" * min(left, 65536))
                    left -= k
                note("sent %s %d" % (where, int(first.split()[1])))
                c.close()
                return
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
            note("conn %s from %s" % (where, peer[0] if isinstance(peer, tuple) else "unix"))
            threading.Thread(target=serve, args=(c, where, peer), daemon=True).start()

    def datagrams(u, where):
        while True:
            _, peer = u.recvfrom(65536)
            note("udp %s from %s" % (where, peer[0]))

    for a in addrs:
        if a.startswith("@"):
            l = socket.socket(socket.AF_UNIX)
            l.bind("\0" + a[1:])
            l.listen(64)
            threading.Thread(target=accept, args=(l, a), daemon=True).start()
            continue
        udp = a.startswith("udp:")
        host, port = (a[4:] if udp else a).rsplit(":", 1)
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        l = socket.socket(fam, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if fam == socket.AF_INET6:
            l.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        l.bind((host.strip("[]"), int(port)))
        if udp:
            threading.Thread(target=datagrams, args=(l, a), daemon=True).start()
            continue
        l.listen(64)
        threading.Thread(target=accept, args=(l, a), daemon=True).start()
    note("ready")
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
