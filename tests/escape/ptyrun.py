# SPDX-License-Identifier: ISC
"""ptyrun.py OUT CMD...: run CMD as the leader of a new session whose
controlling terminal is a fresh pty (fds 0-2), the way a user at a terminal
runs sbx. Before exec it injects the line "control" itself (TIOCSTI on its
own terminal, allowed), which proves injection is seen by this harness.
Afterwards it writes what CMD printed to OUT and prints JSON: CMD's exit
status and every byte left unread in the terminal's input queue."""
import fcntl, json, os, pty, select, sys, termios, time

out, cmd = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    if slave > 2:
        os.close(slave)
    for ch in b"control\n":
        fcntl.ioctl(0, termios.TIOCSTI, bytes([ch]))
    os.execv(cmd[0], cmd)
data, st = b"", None
while True:
    r, _, _ = select.select([master], [], [], 0.1)
    if r:
        try:
            data += os.read(master, 65536)
        except OSError:
            r = []
    if st is None:
        done, s = os.waitpid(pid, os.WNOHANG)
        st = s if done else None
    if st is not None and not r:
        break
open(out, "wb").write(data)
# what is still queued on the terminal's input side
os.set_blocking(slave, False)
attr = termios.tcgetattr(slave)
attr[3] &= ~termios.ICANON
termios.tcsetattr(slave, termios.TCSANOW, attr)
left = b""
try:
    while True:
        b = os.read(slave, 4096)
        if not b:
            break
        left += b
except BlockingIOError:
    pass
print(json.dumps({"status": os.waitstatus_to_exitcode(st), "leftover": left.decode("latin-1")}))
