#!/bin/sh
# SPDX-License-Identifier: ISC
# What the payload can see and touch: no network, no host files, nothing
# writable but /tmp and /out, no host pids, no privileges.
. "$(dirname "$0")/lib.sh"
plan 15

# a listener on the host's loopback that the sandbox must not reach
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); s.settimeout(30)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("connected")
except Exception: pass' "$port" "$T/connected" &
lpid=$!
sleep 0.3

cat > "$T/probe.py" <<PY
import os, socket, errno
r = {}
try:
    s = socket.create_connection(("127.0.0.1", $port), timeout=2); r["net"] = "connected"
except OSError as e:
    r["net"] = "refused:" + errno.errorcode.get(e.errno, str(e.errno))
r["ifaces"] = sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:])
r["visible"] = [p for p in ("/home", "/root", "/etc/shadow", "/var", "/run", "/sys/fs/cgroup") if os.path.exists(p)]
w = []
for d in ("/", "/usr", "/etc", "/code", "/dev", "/bin", "/usr/lib", "/tmp", "/out", "/proc/sys/kernel"):
    try:
        open(os.path.join(d, "sbx-probe"), "w").close(); w.append(d)
    except OSError:
        pass
r["writable"] = w
pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
r["pids"] = sorted(pids)
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
r["uid"] = st["Uid"].split(); r["gid"] = st["Gid"].split(); r["groups"] = st["Groups"].split()
r["caps"] = sorted(set(st[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")))
r["nnp"] = st["NoNewPrivs"].strip(); r["seccomp"] = st["Seccomp"].strip()
r["sid_is_self"] = os.getsid(0) == os.getpid()
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
# ADDR_NO_RANDOMIZE, with and without bit 31 set
r["personality"] = [libc.personality(ctypes.c_ulong(v)) for v in (0x0040000, 0x80040000, 0x0400000)]
import json; print(json.dumps(r))
PY
chmod 644 "$T/probe.py"
sbx_run run --json "$T/probe.py"
cp "$T/out" "$T/result"
jget stdout > "$T/probe.json"; cp "$T/probe.json" "$T/out"
kill $lpid 2>/dev/null; wait $lpid 2>/dev/null
diag "$(cat "$T/out" "$T/err")"
r() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/out" "$1"; }

check "probe ran" [ "$rc" = 0 ]
check "connect to the host's 127.0.0.1 fails" [ "$(r net)" != connected ]
check "the host's listener saw no connection" [ ! -e "$T/connected" ]
check "only lo exists" [ "$(r ifaces)" = "['lo']" ]
check "/home, /root, /etc/shadow, /var, /run invisible" [ "$(r visible)" = "[]" ]
check "writable: only /tmp and /out" [ "$(r writable)" = "['/tmp', '/out']" ]
check "no host pid visible (init and the payload only)" [ "$(r pids)" = "[1, 2]" ]
u=$(id -u sbxtest); g=$(id -g sbxtest)
check "all four uids are the caller's" [ "$(r uid)" = "['$u', '$u', '$u', '$u']" ]
check "all four gids are the caller's" [ "$(r gid)" = "['$g', '$g', '$g', '$g']" ]
check "no supplementary groups" [ "$(r groups)" = "[]" ]
check "every capability set empty" [ "$(r caps)" = "['0000000000000000']" ]
check "no_new_privs and seccomp filter" [ "$(r nnp) $(r seccomp)" = "1 2" ]
check "payload leads its own session" [ "$(r sid_is_self)" = True ]
check "personality changes refused" [ "$(r personality)" = "[-1, -1, -1]" ]
cp "$T/result" "$T/out"
check "no cgroup left" no_cgroups_left
finish
