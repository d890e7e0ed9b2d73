#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 32: reaching more than the allowed address:port pair by
# naming the destination differently. The allowed pair is svc.sbx.test
# (the server host's first address) port 7000. The payload tries the
# server host's second address, its IPv6 address, the IPv4-mapped forms of
# both, the host's end of the test network (IPv4 and IPv6), the host's
# own addresses, loopback variants, broadcast and multicast, a socket
# bound to an interface the host has (SO_BINDTODEVICE), and taking the
# pinned pair for itself (bind, SO_REUSEPORT). Then an IPv6-only policy:
# the service over IPv6 works, its IPv4 address does not. Every refusal
# is immediate; the listeners see only the allowed connections.
#
# Defences checked by removing them:
# - the pinned addresses added with /32 and /128 prefixes changed to /24
#   and /64 (egress_net.c add_address()): the server host's second
#   address was no longer "unreachable" but "refused" by the sandbox's own
#   lo (the whole subnet became local): test 1 failed; nothing left the
#   sandbox, tests 6 and 9 held.
# - listen_on() given SO_REUSEPORT: the payload's own listener on the
#   pinned pair was accepted (test 4 failed) and took one of the
#   connections meant for the relay (test 6 failed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/egress-lib.sh"
plan 10

eg_net_up && eg_net6_up || { echo "Bail out! cannot create the test network"; exit 1; }
P2=$((21000 + EG_ID % 9000))
HOSTIP=$(ip -4 -o addr show scope global | awk -v skip="$EG_IF"a '$2 != skip {sub("/.*", "", $4); print $4; exit}')
eg_listen ns "$T/srv.log" "$EG_SRV:7000" "$EG_SRV:7001" "$EG_SRV2:7000" "[$EG_SRV6]:7000" || exit 1
eg_listen host "$T/host.log" "0.0.0.0:$P2" "[::]:$P2" || exit 1
eg_policy v4 "[network]
mode = allow
allow = svc.sbx.test:7000"
cat > "$T/addr.py" <<EOF
import errno, socket, time
res = {}
def probe(key, fam, addr, **opt):
    t = time.monotonic()
    s = socket.socket(fam)
    s.settimeout(20)
    try:
        if "dev" in opt:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, opt["dev"].encode())
        s.connect(addr)
        r = "connected"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e))
    res[key] = "%s %.2f" % (r, time.monotonic() - t)
I4, I6 = socket.AF_INET, socket.AF_INET6
probe("other_addr", I4, ("$EG_SRV2", 7000))
probe("srv_ipv6", I6, ("$EG_SRV6", 7000))
probe("mapped_other", I6, ("::ffff:$EG_SRV2", 7000))
probe("mapped_pinned_other_port", I6, ("::ffff:$EG_SRV", 7001))
probe("compat", I6, ("::$EG_SRV", 7000))
probe("host_veth", I4, ("$EG_HOST", $P2))
probe("host_veth6", I6, ("$EG_HOST6", $P2))
probe("host_addr", I4, ("${HOSTIP:-192.0.2.2}", $P2))
probe("lo_127_2", I4, ("127.0.0.2", $P2))
probe("any", I4, ("0.0.0.0", $P2))
probe("lo6", I6, ("::1", $P2))
probe("broadcast", I4, ("255.255.255.255", 7000))
probe("multicast", I4, ("224.0.0.1", 7000))
probe("linklocal6", I6, ("fe80::1", 7000, 0, 1))
probe("bindtodevice", I4, ("$EG_SRV", 7000), dev="eth0")
for reuse in (False, True):
    s = socket.socket()
    try:
        if reuse:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("$EG_SRV", 7000))
        s.listen()
        res["hijack_reuse" if reuse else "hijack"] = "listening"
    except OSError as e:
        res["hijack_reuse" if reuse else "hijack"] = errno.errorcode.get(e.errno, str(e))
probe("allowed", I4, ("svc.sbx.test", 7000))
probe("allowed_mapped", I6, ("::ffff:$EG_SRV", 7000))
for k in sorted(res):
    print(k, res[k])
EOF
chmod 0644 "$T/addr.py"
egress_sbx run --json --policy eg-v4 "$T/addr.py"
jget stdout > "$T/res"
diag "$(cat "$T/res" "$T/err")"
res() { awk -v k="$1" '$1 == k {print $2}' "$T/res"; }
# every refusal within a second
quick() { awk -v k="$1" '$1 == k {exit !($3 < 1)}' "$T/res"; }
bad=
for k in other_addr srv_ipv6 mapped_other compat host_veth host_veth6 host_addr broadcast multicast linklocal6; do
	{ [ "$(res $k)" = ENETUNREACH ] || [ "$(res $k)" = EINVAL ]; } && quick $k || bad="$bad $k=$(res $k)"
done
check "other addresses of the server host and of the host, IPv6 and mapped forms: unreachable at once ($bad)" [ -z "$bad" ]
bad=
for k in mapped_pinned_other_port lo_127_2 any lo6; do
	[ "$(res $k)" = ECONNREFUSED ] && quick $k || bad="$bad $k=$(res $k)"
done
check "another port of the pinned address, loopback variants: refused at once ($bad)" [ -z "$bad" ]
check "SO_BINDTODEVICE to the host's interface: no such device inside" [ "$(res bindtodevice)" = ENODEV ]
check "the payload cannot take the pinned pair, with or without SO_REUSEPORT" [ "$(res hijack) $(res hijack_reuse)" = "EADDRINUSE EADDRINUSE" ]
check "the allowed pair, also as an IPv4-mapped IPv6 address" [ "$(res allowed) $(res allowed_mapped)" = "connected connected" ]
check "the server host saw two connections, both on the allowed pair" sh -c '
	[ "$(grep -c "^conn" "$1")" = 2 ] && [ "$(grep -c "^conn $2:7000 " "$1")" = 2 ]' _ "$T/srv.log" "$EG_SRV"
check "the run is audited" audited "$(jget id)" ok

# IPv6 only: the service by its IPv6 address
eg_policy v6 "[network]
mode = allow
allow = [$EG_SRV6]:7000"
cat > "$T/v6.py" <<EOF
import errno, socket
for fam, addr in ((socket.AF_INET6, ("$EG_SRV6", 7000)), (socket.AF_INET, ("$EG_SRV", 7000))):
    s = socket.socket(fam)
    s.settimeout(10)
    try:
        s.connect(addr)
        s.sendall(b"six")
        print(addr[0], s.recv(16).decode())
    except OSError as e:
        print(addr[0], errno.errorcode.get(e.errno, str(e)))
EOF
chmod 0644 "$T/v6.py"
egress_sbx run --json --policy eg-v6 "$T/v6.py"
jget stdout > "$T/res6"
diag "$(cat "$T/res6" "$T/err")"
check "an IPv6 service is relayed over IPv6" grep -qx "$EG_SRV6 echo:six" "$T/res6"
check "... and the same host's IPv4 address is unreachable" grep -qx "$EG_SRV ENETUNREACH" "$T/res6"
check "the host saw nothing at all" sh -c '! grep -q "^conn" "$1"' _ "$T/host.log"
finish
