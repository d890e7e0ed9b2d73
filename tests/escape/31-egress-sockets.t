#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 31: leaving [network] mode = allow by another kind of
# socket. A payload allowed one TCP service tries UDP (a DNS query to the
# server host, and to the host's resolver address), ICMP (raw and ping
# sockets), raw IP, AF_PACKET, netlink (to add a route or an address),
# SCTP and MPTCP streams, the same calls with high bits set in the
# arguments, TCP Fast Open data to another address, and an abstract unix
# socket the caller's own uid listens on outside (the abstract namespace
# belongs to the network namespace). Every attempt fails at once and
# nothing reaches a listener; the allowed service still works.
#
# Defences checked by removing them:
# - egress_seccomp_rules() not called from install_seccomp() (nor the
#   listener taken): UDP, UDP-Lite and MPTCP sockets and the high-bit forms
#   were created, raw and ping sockets failed only for want of a
#   capability or ping_group_range (EPERM, EACCES): test 1 failed; TCP
#   Fast Open went as far as ENETUNREACH: test 3 failed. The datagrams to
#   the pinned address and to 127.0.0.1 were "sent" to the sandbox's own
#   lo and reached nobody; test 5 held (the network namespace has no route
#   out).
# - egress_sandbox_setup() skipped in sandbox_main() (no pinned address,
#   no listener): the allowed service was unreachable (ENETUNREACH):
#   test 6 failed; the refusals held.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/egress-lib.sh"
plan 7

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
ABS=sbx-egress-$EG_ID
eg_listen ns "$T/srv.log" "$EG_SRV:7000" "$EG_SRV:7001" "udp:$EG_SRV:53" "udp:$EG_SRV2:53" "$EG_SRV2:9" || exit 1
eg_listen caller "$T/abs.log" "@$ABS" || exit 1
eg_policy sock "[network]
mode = allow
allow = svc.sbx.test:7000"
cat > "$T/sock.py" <<EOF
import ctypes, errno, socket, time
libc = ctypes.CDLL(None, use_errno=True)
res = {}
def name(e):
    return errno.errorcode.get(e, str(e))
def mk(key, *args):
    try:
        s = socket.socket(*args)
        res[key] = "created"
        return s
    except OSError as e:
        res[key] = name(e.errno)
def raw_socket(key, fam, typ, proto):
    # the kernel reads int arguments from the low 32 bits only
    fd = libc.syscall(41, ctypes.c_long(fam), ctypes.c_long(typ), ctypes.c_long(proto))
    res[key] = "created" if fd >= 0 else name(ctypes.get_errno())
def dns_query(addr):
    s = mk("udp4", socket.AF_INET, socket.SOCK_DGRAM)
    if s:
        try:
            s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04test\x00\x00\x01\x00\x01", (addr, 53))
            res["udp4_send_" + addr] = "sent"
        except OSError as e:
            res["udp4_send_" + addr] = name(e.errno)
dns_query("$EG_SRV")
dns_query("127.0.0.1")
mk("udp6", socket.AF_INET6, socket.SOCK_DGRAM)
mk("udplite", socket.AF_INET, socket.SOCK_DGRAM, 136)
mk("raw_icmp", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
mk("raw_ip", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
mk("ping", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
mk("ping6", socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6)
mk("sctp", socket.AF_INET, socket.SOCK_STREAM, 132)
mk("sctp_seq", socket.AF_INET, socket.SOCK_SEQPACKET, 132)
mk("mptcp", socket.AF_INET, socket.SOCK_STREAM, 262)
mk("packet", socket.AF_PACKET, socket.SOCK_RAW, 0x0300)
mk("netlink", socket.AF_NETLINK, socket.SOCK_RAW, 0)
raw_socket("udp_highbits", socket.AF_INET, socket.SOCK_DGRAM | (1 << 32), 0)
raw_socket("sctp_highbits", socket.AF_INET, socket.SOCK_STREAM, 132 | (1 << 32))
raw_socket("udp_proto_highbits", socket.AF_INET, socket.SOCK_STREAM, 17 | (1 << 33))
raw_socket("tcp_zero_highbits", socket.AF_INET, socket.SOCK_STREAM, 1 << 32)
s = socket.socket()
t = time.monotonic()
try:
    s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("$EG_SRV2", 9))
    res["fastopen"] = "sent"
except OSError as e:
    res["fastopen"] = name(e.errno)
u = socket.socket(socket.AF_UNIX)
try:
    u.connect("\0$ABS")
    res["abstract"] = "connected"
except OSError as e:
    res["abstract"] = name(e.errno)
try:
    s = socket.create_connection(("svc.sbx.test", 7000), timeout=5)
    s.sendall(b"hi")
    res["allowed"] = s.recv(16).decode()
except OSError as e:
    res["allowed"] = name(e.errno)
res["elapsed"] = round(time.monotonic() - t, 2)
for k in sorted(res):
    print(k, res[k])
EOF
chmod 0644 "$T/sock.py"
egress_sbx run --json --policy eg-sock "$T/sock.py"
jget stdout > "$T/res"
diag "$(cat "$T/res" "$T/err")"
res() { awk -v k="$1" '$1 == k {print $2}' "$T/res"; }
bad=
for k in udp4 udp6 udplite raw_icmp raw_ip ping ping6 sctp sctp_seq mptcp udp_highbits sctp_highbits \
	udp_proto_highbits tcp_zero_highbits; do
	[ "$(res $k)" = EPROTONOSUPPORT ] || bad="$bad $k=$(res $k)"
done
check "UDP, ICMP, raw, SCTP, MPTCP sockets refused, high bits too (EPROTONOSUPPORT:$bad)" [ -z "$bad" ]
check "AF_PACKET and netlink sockets refused (EAFNOSUPPORT)" [ "$(res packet) $(res netlink)" = "EAFNOSUPPORT EAFNOSUPPORT" ]
check "TCP Fast Open data to another address refused (EOPNOTSUPP)" [ "$(res fastopen)" = ENOTSUP ]
check "the caller's abstract unix socket outside is not reachable (ECONNREFUSED)" [ "$(res abstract)" = ECONNREFUSED ]
check "nothing reached the server host's UDP or other ports, nor the caller's socket" sh -c '
	! grep -Eq "^(udp|conn $2:|conn $3:7001)" "$1" && ! grep -q "^conn" "$4"' _ "$T/srv.log" "$EG_SRV2" "$EG_SRV" "$T/abs.log"
check "the allowed service still answers, and nothing waited for a timeout" sh -c '[ "$1" = echo:hi ] && [ "${2%.*}" -lt 2 ]' _ \
	"$(res allowed)" "$(res elapsed)"
check "the run is audited" audited "$(jget id)" ok
finish
