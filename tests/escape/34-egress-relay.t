#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 34: the relay and the names. While a run with egress is
# going on, the caller tries to signal, trace and read sbx-relay (it runs
# as _sbxnet, without capabilities, not dumpable); the payload looks for
# any descriptor of the relay's or of the seccomp listener in its own
# process; the names are changed on the host in the middle of the run
# (they were resolved once, at the start, and stay pinned); one payload
# thread swaps the destination in memory while another calls connect(2)
# on it, racing the sandbox init's record of the call (the kernel decides
# from the routes, so the swapped-in address is never reached); and a
# flood of connect(2) calls to refused destinations leaves the run and the
# allowed service working.
#
# Defences checked by removing them:
# - the relay run as the caller (the uid the issue first suggested)
#   instead of _sbxnet (egress_start()): the caller stopped it with
#   SIGSTOP (test 2 failed) and the run's connections hung until the
#   wall-time limit (tests 4-9 failed); a caller that can stop or kill the
#   relay decides what the END record's connection list says. ptrace and
#   /proc/PID/mem stayed refused (not dumpable): test 3 held.
# - PR_SET_DUMPABLE not cleared in relay/main.c (execve made the relay
#   dumpable again): /proc/PID/fd became _sbxnet's, open to every other
#   _sbxnet process: test 1 failed; the caller, another uid, was still
#   refused: tests 2 and 3 held.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/egress-lib.sh"
plan 9

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_listen ns "$T/srv.log" "$EG_SRV:7000" "$EG_SRV2:7000" || exit 1
eg_policy relay "[network]
mode = allow
allow = svc.sbx.test:7000
connections = 1024
[limits]
wall_time = 60s
cpu_time = 60s"
cat > "$T/relay.py" <<'EOF'
import ctypes, errno, os, socket, struct, threading, time
res = {}
def name(e):
    return errno.errorcode.get(e, str(e))
def echo(host):
    s = socket.create_connection((host, 7000), timeout=10)
    s.sendall(b"hi")
    return s.recv(16).decode()
res["fds"] = " ".join(sorted(os.listdir("/proc/self/fd"), key=int))
res["first"] = echo("svc.sbx.test")
# the test sees the first connection on the server host and changes the
# host's names meanwhile
time.sleep(3)
res["second"] = echo("svc.sbx.test")
res["second_addr"] = socket.gethostbyname("svc.sbx.test")
# race: one buffer, flipped between the allowed pair and the other address
libc = ctypes.CDLL(None, use_errno=True)
def sin(addr):
    return struct.pack("=HH4s8x", socket.AF_INET, socket.htons(7000), socket.inet_aton(addr))
good, other = sin("SRV"), sin("SRV2")
buf = ctypes.create_string_buffer(good, 16)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, other, 16)
        ctypes.memmove(buf, good, 16)
t = threading.Thread(target=flip)
t.start()
outcomes = {}
for _ in range(300):
    s = socket.socket()
    rc = libc.connect(s.fileno(), buf, 16)
    k = "connected" if rc == 0 else name(ctypes.get_errno())
    outcomes[k] = outcomes.get(k, 0) + 1
    s.close()
stop = True
t.join()
res["race"] = ",".join("%s=%d" % kv for kv in sorted(outcomes.items()))
# flood: refused destinations, as fast as possible
t0 = time.monotonic()
for i in range(20000):
    s = socket.socket()
    try:
        s.connect(("10.%d.%d.%d" % (i % 250, i // 250 % 250, 1 + i % 200), 1 + i % 1000))
    except OSError:
        pass
    s.close()
res["flood_s"] = "%.1f" % (time.monotonic() - t0)
res["after_flood"] = echo("svc.sbx.test")
for k in sorted(res):
    print(k, res[k])
EOF
sed -i "s/\"SRV\"/\"$EG_SRV\"/; s/\"SRV2\"/\"$EG_SRV2\"/" "$T/relay.py"
chmod 0644 "$T/relay.py"
( egress_sbx run --json --policy eg-relay "$T/relay.py"; echo "$rc" > "$T/rc" ) &
bg=$!
# the relay of this run, while it runs
relay=
for _ in $(seq 100); do relay=$(pgrep -x sbx-relay | head -1); [ -n "$relay" ] && break; sleep 0.1; done
st=/proc/$relay/status
check "the relay runs as _sbxnet with no capability, no_new_privs, not dumpable (/proc/PID/fd is root's)" sh -c '
	u=$(id -u _sbxnet)
	grep -Eq "^Uid:\s+$u\s+$u\s+$u\s+$u$" "$1" && grep -Eq "^CapEff:\s+0+$" "$1" && grep -Eq "^CapPrm:\s+0+$" "$1" &&
	grep -Eq "^NoNewPrivs:\s+1$" "$1" && [ "$(stat -c %u "/proc/$2/fd")" = 0 ]' _ "$st" "$relay"
check "the caller cannot signal the relay" sh -c '! setpriv --reuid=sbxtest --regid=sbxtest --clear-groups kill -STOP "$1" 2>/dev/null && ! grep -q "^State:\s*T" "/proc/$1/status"' _ "$relay"
check "the caller cannot trace it or read its memory and descriptors" sh -c '
	setpriv --reuid=sbxtest --regid=sbxtest --clear-groups /usr/bin/python3 -c "
import ctypes, os, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
ok = libc.ptrace(16, pid, 0, 0) != 0
for p in (\"/proc/%d/mem\" % pid, \"/proc/%d/environ\" % pid):
    try:
        open(p, \"rb\").read(1); ok = False
    except OSError:
        pass
try:
    os.listdir(\"/proc/%d/fd\" % pid); ok = False
except OSError:
    pass
sys.exit(0 if ok else 1)" "$1"' _ "$relay"
# re-point the name on the host in the middle of the run, once the first
# connection is through
for _ in $(seq 300); do grep -q "^conn" "$T/srv.log" && break; sleep 0.1; done
printf '127.0.0.1\tlocalhost\n%s\tsvc.sbx.test\n' "$EG_SRV2" > "$T/hosts"
wait "$bg"
rc=$(cat "$T/rc")
jget stdout > "$T/res"
diag "$(cat "$T/res" "$T/err")"
res() { awk -v k="$1" '$1 == k {print $2}' "$T/res"; }
check "the payload holds no descriptor but its own (0, 1, 2 and the listing's)" [ "$(awk '$1 == "fds" {$1 = ""; print}' "$T/res")" = " 0 1 2 3" ]
check "a name changed on the host during the run stays pinned, and is relayed to its address" sh -c '
	[ "$(awk "\$1 == \"second\" {print \$2}" "$1")" = echo:hi ] && [ "$(awk "\$1 == \"second_addr\" {print \$2}" "$1")" = "$2" ]' _ "$T/res" "$EG_SRV"
check "racing the destination: only the allowed pair is reached" sh -c '! grep -q "^conn $1:7000" "$2" && [ "$(grep -c "^conn $3:7000" "$2")" -ge 3 ]' _ "$EG_SRV2" "$T/srv.log" "$EG_SRV"
check "... and each call either reached it or failed at once (ENETUNREACH)" sh -c 'echo "$1" | grep -Eq "^((connected|ENETUNREACH)=[0-9]+,?)+$"' _ "$(res race)"
check "20000 refused connect(2) calls: the allowed service still answers" [ "$(res after_flood)" = echo:hi ]
check "the run is audited (outcome ok)" audited "$(jget id)" ok
finish
