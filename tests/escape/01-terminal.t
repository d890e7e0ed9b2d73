#!/bin/sh
# SPDX-License-Identifier: ISC
# Class 1, terminal injection. The client runs on a pty as its session's
# controlling terminal (ptyrun.py), as a user at a terminal does. The
# payload tries TIOCSTI (plain, with high bits set in the 64-bit request,
# which the kernel truncates to 32 bits), and TIOCLINUX, on fds 0-2 and any
# terminal it can open; none may succeed, nothing may reach the caller's
# terminal input, and no sandboxed process may share the caller's session
# or have a controlling terminal.
#
# Defence removed -> this test failed (checked by hand, see the report):
#   the ioctl rules deleted from helper/seccomp.c (bad_ioctls loop)
#     -> test 2 fails: ENOTTY instead of the filter's EPERM
#   SCMP_CMP_MASKED_EQ 0xffffffff replaced by a full 64-bit SCMP_CMP_EQ
#     -> test 2 fails: the high-bit variants pass the filter (ENOTTY)
#   both setsid() calls removed (sandbox_main and exec_payload)
#     -> test 8 fails: the sandbox shares the caller's session and tty
#   plain output sent to a terminal unfiltered (h->tty[] forced false in
#   client/spawn.c)
#     -> tests 11-12 fail: the escape sequences reach the terminal
. "$(dirname "$0")/lib.sh"
plan 13

cat > "$T/inject.py" <<'PY'
import ctypes, errno, json, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
r = {"ioctl": {}, "open": {}}
fds = [0, 1, 2]
for p in ("/dev/tty", "/dev/console", "/dev/ptmx", "/dev/pts/0", "/dev/tty0"):
    try:
        fds.append(os.open(p, os.O_RDWR | os.O_NOCTTY)); r["open"][p] = "opened"
    except OSError as e:
        r["open"][p] = errno.errorcode[e.errno]
reqs = {"TIOCSTI": 0x5412, "TIOCSTI|0xffffffff00000000": 0xffffffff00005412,
        "TIOCSTI|1<<32": 0x100005412, "TIOCLINUX": 0x541C}
for fd in fds:
    for name, req in reqs.items():
        seen = set()
        # TIOCLINUX subcodes: 3 paste selection, 2 set selection, 6 shift state
        for ch in (b"echo INJECTED\n" if name != "TIOCLINUX" else b"\x03\x02\x06"):
            buf = ctypes.create_string_buffer(bytes([ch]) + b"\0" * 63)
            rc = libc.ioctl(fd, req, buf)
            seen.add("ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), "?"))
        r["ioctl"]["%d %s" % (fd, name)] = sorted(seen)
r["isatty"] = [os.isatty(fd) for fd in (0, 1, 2)]
r["sid_is_pid"] = os.getsid(0) == os.getpid()
print(json.dumps(r), flush=True)
time.sleep(1.2)  # for the host-side look at the sandbox's processes
PY
chmod 644 "$T/inject.py"

run_as sbxtest python3 "$T/ptyrun.py" "$T/tty.out" "$SBX" run --json "$T/inject.py" > "$T/pty.json" &
bg=$!
procs 2 > "$T/procs.json"; prc=$?
wait $bg
# the client's JSON, after the terminal's echo of the control line
tr -d '\r' < "$T/tty.out" | sed -n '/^{/,$p' > "$T/out"
jget stdout > "$T/probe.json"
diag "$(cat "$T/pty.json")" "$(head -c 1500 "$T/probe.json")"

check "payload ran on a pty-attached client" [ "$(jget outcome)" = ok ]
check "every TIOCSTI/TIOCLINUX refused by the filter (EPERM), high bits included" \
	[ "$(pj "$T/probe.json" 'sorted(set(x for v in d["ioctl"].values() for x in v))')" = "['EPERM']" ]
check "all four requests tried on fds 0-2" [ "$(pj "$T/probe.json" 'len(d["ioctl"])')" = 12 ]
check "no terminal among fds 0-2" [ "$(pj "$T/probe.json" 'd["isatty"]')" = "[False, False, False]" ]
check "no terminal device can be opened" \
	[ "$(pj "$T/probe.json" '"opened" in d["open"].values()')" = False ]
check "nothing reached the caller's terminal input (only the harness's own line)" \
	[ "$(pj "$T/pty.json" 'repr(d["leftover"])')" = "'control\\n'" ]
check "the caller really had a controlling terminal" sh -c '[ "$1" = 0 ] && [ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"supervisor\"][\"stat\"][\"tty_nr\"])" "$2")" != 0 ]' _ "$prc" "$T/procs.json"
check "no sandboxed process shares the caller's session or has a controlling tty" \
	[ "$(pj "$T/procs.json" 'all(p["stat"]["sid"] != d["supervisor"]["stat"]["sid"] and p["stat"]["tty_nr"] == 0 for p in d["sandbox"])')" = True ]
check "host unchanged" host_unchanged
check "the run is audited" audited "$(jget id)" ok

# Escape sequences are the other way to a terminal: a title change, a
# cursor-position report (which the terminal answers as if typed), OSC 52
# clipboard, and the 8-bit CSI (U+009B). Shown on a terminal, the plain
# output carries them in caret/\u notation, never as raw controls.
cat > "$T/esc.py" <<'PY'
import sys
sys.stdout.write("A\x1b]0;pwned\x07B\x1b[6nC\x1b]52;c;ZWNobyBwd25lZA==\x07D\u009b6nE\n")
sys.stderr.write("F\x1b[2JG\n")
PY
chmod 644 "$T/esc.py"
run_as sbxtest python3 "$T/ptyrun.py" "$T/tty2.out" "$SBX" run "$T/esc.py" > "$T/pty2.json"
diag "$(od -c "$T/tty2.out" | head -8)"
check "terminal: no ESC, BEL or C1 control reached it" \
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(any(b in d for b in (b"\x1b", b"\x07", b"\xc2\x9b")))' "$T/tty2.out"
check "terminal: the sequences are shown instead (stdout and stderr)" \
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(not all(s in d for s in (b"A^[]0;pwned^GB^[[6nC", b"D\\u009b6nE", b"F^[[2JG")))' "$T/tty2.out"
# the same output into a pipe is left alone
sbx_run run "$T/esc.py"
check "pipe: the bytes unchanged" \
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(d != "A\x1b]0;pwned\x07B\x1b[6nC\x1b]52;c;ZWNobyBwd25lZA==\x07D\u009b6nE\n".encode())' "$T/out"
finish
