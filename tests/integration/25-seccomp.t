#!/bin/sh
# SPDX-License-Identifier: ISC
# The seccomp profiles (docs/seccomp.md): what each denies and how a denied
# call fails (EPERM, ENOSYS for clone3, EAFNOSUPPORT for socket families),
# under the default and the strict profile, with and without loopback.
. "$(dirname "$0")/lib.sh"
plan 12
POL=$P/etc/sbx/policies.d

# Each probe makes the raw system call (ctypes, so no libc wrapper fallback
# hides the result) and prints NAME=errno-name or NAME=ok.
cat > "$T/probe.py" <<'PY'
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
NR = {"ptrace": 101, "mount": 165, "unshare": 272, "keyctl": 250, "bpf": 321,
      "io_uring_setup": 425, "clone3": 435, "personality": 135,
      "vmsplice": 278, "io_setup": 206, "mbind": 237}
def sys(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *args)
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
out = {}
out["ptrace"] = sys("ptrace", 0, 0, 0, 0)             # PTRACE_TRACEME
out["mount"] = sys("mount", b"none", b"/tmp", b"tmpfs", 0, 0)
out["unshare"] = sys("unshare", 0x10000000)          # CLONE_NEWUSER
out["keyctl"] = sys("keyctl", 0, -1, 0)              # KEYCTL_GET_KEYRING_ID
out["bpf"] = sys("bpf", 0, 0, 0)
out["io_uring_setup"] = sys("io_uring_setup", 1, 0)
out["clone3"] = sys("clone3", 0, 0)
out["personality"] = sys("personality", 0x0040000)   # ADDR_NO_RANDOMIZE
ctx = ctypes.c_ulong(0)
out["io_setup"] = sys("io_setup", 1, ctypes.byref(ctx))
r, w = os.pipe()
buf = ctypes.create_string_buffer(b"x")
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 1)
out["vmsplice"] = sys("vmsplice", w, ctypes.byref(iov), 1, 0)
out["mbind"] = sys("mbind", 0, 0, 0, 0, 0, 0)
for fam in ("AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET"):
    try:
        socket.socket(getattr(socket, fam), socket.SOCK_DGRAM if fam != "AF_PACKET" else socket.SOCK_RAW).close()
        out[fam] = "ok"
    except OSError as e:
        out[fam] = errno.errorcode.get(e.errno, "?")
print(" ".join("%s=%s" % kv for kv in sorted(out.items())))
PY
chmod 644 "$T/probe.py"

probe() { # POLICY: the probe's line in $T/line
	sbx_run run --json --policy "$1" "$T/probe.py"
	jget stdout > "$T/line"
	[ "$(jget outcome)" = ok ] || diag "$1: $(cat "$T/out" "$T/err")"
}
has() { tr ' ' '\n' < "$T/line" | grep -qx "$1" || { diag "want $1 in: $(cat "$T/line")"; return 1; }; }

for pol in def-none:none:default def-lo:loopback:default strict-lo:loopback:strict; do
	IFS=: read -r name mode prof <<EOF2
$pol
EOF2
	printf '[network]\nmode = %s\n[seccomp]\nprofile = %s\n' "$mode" "$prof" > "$POL/$name.policy"
	chmod 644 "$POL/$name.policy"
done

probe def-none
check "default: ptrace, mount, unshare, keyctl, bpf, io_uring, personality fail with EPERM" sh -c '
	for c in ptrace mount unshare keyctl bpf io_uring_setup personality; do
		tr " " "\n" < "$1" | grep -qx "$c=EPERM" || { echo "# $c: $(cat "$1")"; exit 1; }
	done' _ "$T/line"
check "default: clone3 fails with ENOSYS (glibc falls back to clone)" has clone3=ENOSYS
check "default, mode none: AF_INET and AF_INET6 fail with EAFNOSUPPORT" sh -c 'grep -q "AF_INET=EAFNOSUPPORT" "$1" && grep -q "AF_INET6=EAFNOSUPPORT" "$1"' _ "$T/line"
check "default: AF_NETLINK and AF_PACKET fail with EAFNOSUPPORT" sh -c 'grep -q "AF_NETLINK=EAFNOSUPPORT" "$1" && grep -q "AF_PACKET=EAFNOSUPPORT" "$1"' _ "$T/line"
check "default: vmsplice, io_setup and mbind are not filtered" sh -c '! grep -Eq "(vmsplice|io_setup|mbind)=EPERM" "$1"' _ "$T/line"

probe def-lo
check "default, loopback: AF_INET sockets allowed" has AF_INET=ok
check "default, loopback: AF_NETLINK still denied" has AF_NETLINK=EAFNOSUPPORT

probe strict-lo
check "strict, loopback: AF_INET and AF_INET6 denied" sh -c 'grep -q "AF_INET=EAFNOSUPPORT" "$1" && grep -q "AF_INET6=EAFNOSUPPORT" "$1"' _ "$T/line"
check "strict: vmsplice denied with EPERM" has vmsplice=EPERM
check "strict: io_setup (kernel AIO) denied with EPERM" has io_setup=EPERM
check "strict: mbind (NUMA) denied with EPERM" has mbind=EPERM
check "strict: the default profile's denials still hold" sh -c 'grep -q "ptrace=EPERM" "$1" && grep -q "clone3=ENOSYS" "$1"' _ "$T/line"

rm -f "$POL/def-none.policy" "$POL/def-lo.policy" "$POL/strict-lo.policy"
finish
