#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 33: past the [network] limits. With connections = 3 the
# payload opens three connections to the allowed service and keeps them
# open; the fourth, and a fifth after all are closed, are refused at once
# (ECONNREFUSED: the relay closed its listeners, so the sandbox's kernel
# answers). With bytes_out = 64K, sending 1 MiB ends the connection with a
# reset and the service has received exactly 64 KiB; with bytes_in = 64K,
# asking the service for 1 MiB, the payload reads exactly 64 KiB, then
# the reset. The runs themselves go on (outcome ok).
#
# Defences checked by removing them:
# - close_listeners() not called when the limit is reached (relay/loop.c):
#   the kernel in the sandbox accepted the fourth connection (the relay,
#   with no free slot, reset it) and the fifth was relayed to the service:
#   tests 2, 3 and 4 failed.
# - the budget in fill() (relay/conn.c) replaced by the splice size: both
#   transfers went through whole (1 MiB each way): tests 6 to 9 failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/egress-lib.sh"
plan 10

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_listen ns "$T/srv.log" "$EG_SRV:7000" || exit 1
eg_policy conns "[network]
mode = allow
allow = svc.sbx.test:7000
connections = 3"
cat > "$T/conns.py" <<'EOF'
import errno, socket, time
def use():
    s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
    s.sendall(b"hi")
    assert s.recv(16) == b"echo:hi"
    return s
def attempt():
    t = time.monotonic()
    try:
        use()
        return "connected 0"
    except OSError as e:
        return "%s %.2f" % (errno.errorcode.get(e.errno, str(e)), time.monotonic() - t)
held = [use() for _ in range(3)]
print("three", "ok")
print("fourth", attempt())
for s in held:
    s.close()
time.sleep(0.2)
print("fifth", attempt())
EOF
chmod 0644 "$T/conns.py"
egress_sbx run --json --policy eg-conns "$T/conns.py"
jget stdout > "$T/res"
diag "$(cat "$T/res" "$T/err")"
res() { awk -v k="$1" '$1 == k {print $2}' "$T/res"; }
quick() { awk -v k="$1" '$1 == k {exit !($3 < 1)}' "$T/res"; }
check "three connections within the limit work at once" [ "$(res three)" = ok ]
check "the fourth is refused at once" sh -c '[ "$1" = ECONNREFUSED ]' _ "$(res fourth)" && quick fourth
check "the limit is per run: a fifth after closing all is refused too" [ "$(res fifth)" = ECONNREFUSED ]
check "the server host saw exactly three connections" [ "$(grep -c '^conn' "$T/srv.log")" = 3 ]
check "the run goes on: outcome ok" audited "$(jget id)" ok

# bytes_out, then bytes_in, each in a run of its own
eg_policy out "[network]
mode = allow
allow = svc.sbx.test:7000
bytes_out = 64K"
eg_policy in "[network]
mode = allow
allow = svc.sbx.test:7000
bytes_in = 64K"
cat > "$T/out.py" <<'EOF'
import errno, socket
s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
s.sendall(b"hi")
s.recv(16)
try:
    for _ in range(64):
        s.sendall(b"y" * 16384)
    # the kernel may have buffered it all: the reset shows on the next read
    print("out", "read-%d" % len(s.recv(16)))
except OSError as e:
    print("out", errno.errorcode.get(e.errno, str(e)))
EOF
cat > "$T/in.py" <<'EOF'
import errno, socket
s = socket.create_connection(("svc.sbx.test", 7000), timeout=10)
s.sendall(b"send 1048576")
got, how = 0, "eof"
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += len(b)
except OSError as e:
    how = errno.errorcode.get(e.errno, str(e))
print("in", got, how)
EOF
chmod 0644 "$T/out.py" "$T/in.py"
egress_sbx run --json --policy eg-out "$T/out.py"
jget stdout > "$T/res"
id_out=$(jget id)
egress_sbx run --json --policy eg-in "$T/in.py"
jget stdout >> "$T/res"
diag "$(cat "$T/res" "$T/err")" "$(grep -E '^(bytes|sent)' "$T/srv.log")"
check "sending past bytes_out ends the connection" sh -c '[ "$1" = ECONNRESET ] || [ "$1" = EPIPE ]' _ "$(res out)"
# The largest count the service logged is the bytes_out connection's: the
# others counted 2 bytes (the connections run) or 12 (the bytes_in run, whose
# reset the service may or may not see while sending: "bytes" or "sent").
check "the service received exactly 64 KiB (the limit), the 2 bytes before included" \
	[ "$(awk '/^bytes/ && $3 > m {m = $3} END {print m + 0}' "$T/srv.log")" = 65536 ]
check "receiving past bytes_in ends the connection" [ "$(awk '$1 == "in" {print $3}' "$T/res")" = ECONNRESET ]
check "the payload received exactly 64 KiB before the reset" [ "$(awk '$1 == "in" {print $2}' "$T/res")" = 65536 ]
both_ok() { audited "$id_out" ok && audited "$(jget id)" ok; }
check "the runs go on: outcome ok" both_ok
finish
