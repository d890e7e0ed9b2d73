# SPDX-License-Identifier: ISC
"""The driver of a live Python session (sbx(1) SESSIONS).

`sbx session start` sends this file as the session's code: it is the
payload of the session's sandbox, recorded in the session's START like
any run's code. It reads calls from the call channel (its stdin, a socket
whose other end only the recorder holds; common/proto.h "recorder <->
driver") and runs each in one namespace, the __main__ module's, kept
between calls, as a notebook kernel does (Jupyter's ipykernel, E2B):

- each call's code is compiled as "<cell N>" and its lines are put in
  linecache, so a traceback names the call's own lines, with the driver's
  frames left out;
- a last expression's value is printed, as in a notebook, when not None;
- the call's input files (sbx run --session NAME --input FILE) come as
  sealed memfds with the call; /in is emptied and they are written there
  (read-only) before the code runs, so /in holds that call's inputs, as
  a run's /in does; the recorder put their SHA-256 in the call's START;
- the call's wall_time (ITIMER_REAL) and cpu_time (ITIMER_PROF, this
  process's CPU time) raise KeyboardInterrupt in it; so does an interrupt
  from the recorder (the caller's Ctrl-C, or its wall_time by the
  recorder's clock). The recorder kills the session if the call does not
  yield within 2 s;
- the files of /out the call wrote or changed go to the recorder as
  sealed memfds (struct sbx_live_art): the call's artifacts, figures
  saved by matplotlib's show() (sitecustomize.py) included;
- stdout and stderr are flushed, then the recorder is told the call is
  over (struct sbx_live_done).

The driver runs as the program does, with nothing more than it may do;
the code of a call can change the driver itself, which only hurts its own
session: the recorder times and records every call whatever it says.
"""
import ast
import fcntl
import linecache
import os
import resource
import signal
import socket
import stat
import struct
import sys
import threading
import traceback
import types

CALL = struct.Struct("=IIQQII")  # struct sbx_live_call
DONE = struct.Struct("=IIiIQ")   # struct sbx_live_done
ART = struct.Struct("=II256s")   # struct sbx_live_art
INFILE = struct.Struct("=65s7sQ")  # struct sbx_live_input_file
CALL_MAGIC, DONE_MAGIC, ART_MAGIC = 0x43584253, 0x52584253, 0x41584253
OUT = "/out"
IN = "/in"
ART_MAX = 1024  # what one call returns at most (the recorder caps it too)
OK, EXCEPTION, WALL, CPU, INTERRUPT, EXIT = range(6)
DRIVER = __file__


def main():
    chan = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)
    mod = types.ModuleType("__main__")
    mod.__builtins__ = __builtins__
    sys.modules["__main__"] = mod
    ns = mod.__dict__
    calls = []
    cond = threading.Condition()
    state = {"why": None, "running": False}

    def reader():
        # calls queue for the main thread; an interrupt (cell 0) reaches
        # the running call at once
        buf = b""
        fdq = []  # descriptors that came with the calls, in order
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(chan, 1 << 16, 64)
            except OSError:
                data, fds = b"", []
            fdq.extend(fds)
            if not data:
                with cond:
                    calls.append(None)
                    cond.notify()
                return
            buf += data
            while len(buf) >= CALL.size:
                magic, cell, wall, cpu, n, n_in = CALL.unpack_from(buf)
                if magic != CALL_MAGIC or n_in > len(fdq):
                    os._exit(70)
                total = CALL.size + n + n_in * INFILE.size
                if len(buf) < total:
                    break
                code = buf[CALL.size:CALL.size + n]
                inputs = []
                for i in range(n_in):
                    name, _, size = INFILE.unpack_from(buf, CALL.size + n + i * INFILE.size)
                    inputs.append((name.rstrip(b"\0").decode("utf-8", "replace"), size, fdq.pop(0)))
                buf = buf[total:]
                if cell == 0:
                    if state["running"]:
                        state["why"] = state["why"] or INTERRUPT
                        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                    continue
                with cond:
                    calls.append((cell, wall, cpu, code, inputs))
                    cond.notify()

    def on_timer(signum, frame):
        state["why"] = WALL if signum == signal.SIGALRM else CPU
        raise KeyboardInterrupt("wall_time" if signum == signal.SIGALRM else "cpu_time")

    threading.Thread(target=reader, daemon=True).start()
    while True:
        with cond:
            while not calls:
                cond.wait()
            item = calls.pop(0)
        if item is None:
            return 0
        signal.signal(signal.SIGINT, signal.default_int_handler)
        cell, wall, cpu, code, inputs = item
        before = out_files()
        try:
            if not put_inputs(inputs):
                status = EXCEPTION
            else:
                status = run_one(ns, cell, wall, cpu, code.decode("utf-8", "replace"), state, on_timer)
        except KeyboardInterrupt:
            # a second interrupt while the first was being reported
            quiet(state)
            status = state["why"] if state["why"] in (WALL, CPU, INTERRUPT) else INTERRUPT
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        ru = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
        cpu_ms = int(sum(r.ru_utime + r.ru_stime for r in ru) * 1000) - state.get("cpu0", 0)
        send_artifacts(chan, cell, before)
        chan.sendall(DONE.pack(DONE_MAGIC, cell, status, 0, max(cpu_ms, 0)))
        if status == EXIT:
            return 0


def run_one(ns, cell, wall, cpu, src, state, on_timer):
    name = "<cell %d>" % cell
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ru = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    state["cpu0"] = int(sum(r.ru_utime + r.ru_stime for r in ru) * 1000)
    state["why"] = None
    try:
        tree = ast.parse(src, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, name, "exec")
        tail = compile(last, name, "eval") if last is not None else None
    except SyntaxError:
        show_exception(skip=0)
        return EXCEPTION
    signal.signal(signal.SIGALRM, on_timer)
    signal.signal(signal.SIGPROF, on_timer)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    state["running"] = True
    try:
        signal.setitimer(signal.ITIMER_REAL, wall / 1000.0)
        signal.setitimer(signal.ITIMER_PROF, cpu / 1000.0)
        exec(body, ns)
        if tail is not None:
            value = eval(tail, ns)
            if value is not None:
                print(repr(value))
        return OK
    except SystemExit:
        quiet(state)
        return EXIT
    except BaseException:
        quiet(state)
        why = state["why"]
        show_exception(skip=1)
        return why if why in (WALL, CPU, INTERRUPT) else EXCEPTION
    finally:
        quiet(state)


def put_inputs(inputs):
    """/in emptied, then this call's input files written there read-only
    (the session's /in tmpfs is input_size big, as a run's)."""
    ok = True
    try:
        for f in os.listdir(IN):
            os.unlink(os.path.join(IN, f))
    except OSError as e:
        if inputs:
            sys.stderr.write("sbx: /in: %s\n" % e.strerror)
            ok = False
    for name, size, fd in inputs:
        try:
            if ok:
                out = os.open(os.path.join(IN, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
                try:
                    off = 0
                    while off < size:
                        b = os.pread(fd, min(1 << 20, size - off), off)
                        if not b:
                            break
                        os.write(out, b)
                        off += len(b)
                finally:
                    os.close(out)
        except OSError as e:
            sys.stderr.write("sbx: /in/%s: %s\n" % (name, e.strerror))
            ok = False
        finally:
            os.close(fd)
    return ok


def out_files():
    """{path under /out: (size, mtime_ns, inode)} of its regular files."""
    seen = {}
    for root, dirs, files in os.walk(OUT):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            p = os.path.join(root, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                seen[os.path.relpath(p, OUT)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return seen


def send_artifacts(chan, cell, before):
    """The files of /out the call wrote or changed, each as a sealed memfd:
    the call's artifacts (what a run returns from /out, per call)."""
    after = out_files()
    new = sorted(p for p, v in after.items() if before.get(p) != v)[:ART_MAX]
    for rel in new:
        name = rel.encode("utf-8", "surrogateescape")
        if len(name) > 255:
            continue
        try:
            fd = os.open(os.path.join(OUT, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        m = os.memfd_create("artifact", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
        try:
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                os.write(m, b)
            fcntl.fcntl(m, fcntl.F_ADD_SEALS,
                        fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
            socket.send_fds(chan, [ART.pack(ART_MAGIC, cell, name)], [m])
        except OSError:
            pass
        finally:
            os.close(fd)
            os.close(m)


def quiet(state):
    """No timer and no interrupt reaches the driver between calls."""
    state["running"] = False
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.setitimer(signal.ITIMER_PROF, 0)


def show_exception(skip):
    """The traceback as Python prints it, without the driver's frames."""
    etype, value, tb = sys.exc_info()
    for _ in range(skip):
        if tb is not None:
            tb = tb.tb_next
    te = traceback.TracebackException(etype, value, tb)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != DRIVER])
    sys.stderr.write("".join(te.format()))


if __name__ == "__main__":
    sys.exit(main())
