#!/bin/sh
# SPDX-License-Identifier: ISC
# [network] mode = allow keeps TCP's semantics end to end, and every way a
# connection ends is told to the program at once and recorded: a
# half-close (the client ends its writing, the service still answers), the
# service closing first, an allowed service that is down (nothing listens
# on the pinned pair), and connections still open when the program exits
# or when the wall-time limit kills it (the run ends at once, the relay
# does not hold it). The END record names each ending.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/egress-lib.sh"
plan 9

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_listen ns "$T/srv.log" "$EG_SRV:7000" || { echo "Bail out! listener"; exit 1; }
eg_policy conn "[network]
mode = allow
allow = svc.sbx.test:7000 svc.sbx.test:7002
[limits]
wall_time = 20s"
cat > "$T/tcp.py" <<'EOF'
import errno, socket, time
def name(e):
    return errno.errorcode.get(e.errno, str(e))
# half-close: 1 MB, then SHUT_WR; the answer comes after it
s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
s.sendall(b"count")
s.sendall(b"z" * 1000000)
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(64)
    if not b:
        break
    got += b
print("halfclose", got.decode())
s.close()
# the service closes first: its bytes, then end of file
s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
s.sendall(b"send 5000")
n = 0
while True:
    b = s.recv(65536)
    if not b:
        break
    n += len(b)
print("serverclose", n, "eof")
s.close()
# the allowed service is down
t = time.monotonic()
try:
    s = socket.create_connection(("svc.sbx.test", 7002), timeout=10)
    s.sendall(b"hi")
    r = s.recv(16)
    print("down", "read-%d" % len(r), "%.2f" % (time.monotonic() - t))
except OSError as e:
    print("down", name(e), "%.2f" % (time.monotonic() - t))
# left open when the program exits
held = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
held.sendall(b"hi")
held.recv(16)
print("held", "open")
EOF
chmod 0644 "$T/tcp.py"
egress_sbx run --json --policy eg-conn "$T/tcp.py"
jget stdout > "$T/res"
diag "$(cat "$T/res" "$T/err")"
res() { awk -v k="$1" '$1 == k {$1 = ""; print substr($0, 2)}' "$T/res"; }
check "a half-close reaches the service, and its answer comes back after it" [ "$(res halfclose)" = "counted 1000005" ]
check "the service closing first: all its bytes, then end of file" [ "$(res serverclose)" = "5000 eof" ]
check "an allowed service that is down: refused at once" sh -c '
	set -- $1; { [ "$1" = ECONNREFUSED ] || [ "$1" = ECONNRESET ] || [ "$1" = read-0 ]; } && [ "${2%.*}" -lt 2 ]' _ "$(res down)"
"$AUDIT" show --json "$(jget id)" > "$T/rec.json"
# the connection left open at the exit was closed by the program's kernel:
# "closed" if the service closed its side before the relay stopped, else
# "run_ended" (docs/egress.md, "How one run gets its network", 5)
check "END: each connection with how it ended (closed, closed, refused, closed or run_ended)" \
	[ "$(pj "$T/rec.json" '[(c["port"], c["end"].replace("run_ended", "closed")) for c in d["end"]["network_connections"]]')" = \
	  "[(7000, 'closed'), (7000, 'closed'), (7002, 'refused'), (7000, 'closed')]" ]
check "END: the half-closed connection's bytes each way" \
	[ "$(pj "$T/rec.json" '(d["end"]["network_connections"][0]["bytes_out"], d["end"]["network_connections"][0]["bytes_in"])')" = "(1000005, 15)" ]
check "the run is audited (outcome ok)" [ "$(pj "$T/rec.json" 'd["end"]["outcome"]')" = ok ]

# the wall-time limit kills a program that holds a connection open
eg_policy wall "[network]
mode = allow
allow = svc.sbx.test:7000
[limits]
wall_time = 2s"
cat > "$T/hold.py" <<'EOF'
import socket, time
s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
s.sendall(b"hi")
s.recv(16)
print("connected", flush=True)
time.sleep(60)
EOF
chmod 0644 "$T/hold.py"
t0=$(date +%s)
egress_sbx run --json --policy eg-wall "$T/hold.py"
t1=$(date +%s)
diag "$(head -c 300 "$T/err")" "$((t1 - t0)) s"
check "wall time kills the program holding a connection; the run ends, the relay does not hold it" \
	sh -c '[ "$1" = "timeout wall_time" ] && [ "$2" -lt 15 ]' _ "$(jget outcome) $(jget limit)" "$((t1 - t0))"
"$AUDIT" show --json "$(jget id)" > "$T/rec.json"
check "END: the connection open at the kill, its bytes, ended with the program (closed or run_ended)" \
	[ "$(pj "$T/rec.json" '[(c["end"] in ("closed", "run_ended"), c["bytes_out"], c["bytes_in"]) for c in d["end"]["network_connections"]], d["end"]["outcome"]')" = "([(True, 2, 7)], 'timeout')" ]
check "no relay of this prefix is left running" [ -z "$(eg_relays)" ]
finish
