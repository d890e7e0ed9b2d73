#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Signal attacks on one sbx run each, all at once (tests/escape/15-signals.t).

usage: signals.py SBX HELPER DIR MARK   (as root; the runs are the caller's)

Every scenario starts `sbx run --lang sh DIR/MARK-NAME.sh` as sbxtest, waits
for a phase (right after the start, mid-run, during output), does what a
caller can do, and waits for the client to go. Prints one line per
scenario: NAME CLIENT-STATUS DETAIL.
"""
import fcntl, os, pty, pwd, signal, subprocess, sys, termios, threading, time

SBX, HELPER, DIR, MARK = sys.argv[1:5]
HELPER = os.path.realpath(HELPER)
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
AS = ["setpriv", "--reuid=sbxtest", "--regid=sbxtest", "--init-groups"]

# The payload: a subshell that ignores TERM/HUP/INT and leaves the session,
# and a main loop that either sleeps or writes a line every 10 ms. Every
# process of it is a fork of "/bin/sh /code/MARK-NAME.sh": the marker.
BODY = {
    "mid": "while :; do sleep 1; done",
    "output": "while :; do echo output-line; sleep 0.01; done",
}


def payload(name, kind):
    path = os.path.join(DIR, "%s-%s.sh" % (MARK, name))
    with open(path, "w") as f:
        f.write("trap '' TERM HUP INT\n( setsid sh -c 'trap \"\" TERM HUP INT; while :; do sleep 1; done' & "
                "while :; do sleep 1; done ) &\necho started\n%s\n" % BODY[kind])
    os.chmod(path, 0o644)
    return path


def children(pid):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    return out


def uid_of(pid):
    for l in open("/proc/%d/status" % pid):
        if l.startswith("Uid:"):
            return int(l.split()[1])
    return -1


def helper_tree(client):
    """(supervisor, recorder, sandbox init) pids, or None."""
    for _ in range(200):
        sup = [p for p in children(client) if os.path.realpath("/proc/%d/exe" % p) == HELPER] if os.path.exists("/proc/%d" % client) else []
        if sup:
            kids = children(sup[0])
            rec = [k for k in kids if uid_of(k) == sbx_uid]
            box = [k for k in kids if uid_of(k) == sbxtest_uid]
            if rec and box:
                return sup[0], rec[0], box[0]
        time.sleep(0.02)
    return None


def caller_kill(sig, pid, group=False):
    """Send SIGsig to pid (its process group with group) as the caller."""
    code = ("import os, signal, sys\n"
            "f = os.killpg if sys.argv[3] == 'g' else os.kill\n"
            "try:\n f(int(sys.argv[1]), getattr(signal, 'SIG' + sys.argv[2])); print('ok')\n"
            "except PermissionError: print('EPERM')\n"
            "except OSError as e: print(e.strerror)\n")
    r = subprocess.run(AS + ["/usr/bin/python3", "-c", code, str(pid), sig, "g" if group else "p"],
                       capture_output=True, text=True, env=ENV)
    return r.stdout.strip() or r.stderr.strip()


sbxtest_uid = pwd.getpwnam("sbxtest").pw_uid
sbx_uid = pwd.getpwnam("_sbx").pw_uid
results = {}


def scenario(name, phase, action):
    kind = "output" if phase == "output" else "mid"
    script = payload(name, kind)
    cmd = AS + [SBX, "run", "--lang", "sh", "--timeout", "5s", script]
    out = os.path.join(DIR, name + ".out")
    master = None
    if action == "hup":
        master, slave = pty.openpty()
        p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=ENV, start_new_session=True,
                             preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
    else:
        f = open(out, "w")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=ENV,
                             start_new_session=True)
    detail = ""
    if phase == "start":
        time.sleep(0.02)
    else:
        seen, t0 = b"", time.monotonic()
        while b"started" not in seen and time.monotonic() - t0 < 10:
            if master is not None:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
            else:
                seen = open(out, "rb").read()
                time.sleep(0.02)
        if phase == "output":
            time.sleep(0.2)
    if action in ("KILL", "TERM", "STOP"):
        os.kill(p.pid, getattr(signal, "SIG" + action))  # root sends what the caller could
    elif action == "hup":
        os.close(master)  # the terminal goes away: SIGHUP to its session
    elif action == "session":
        detail = caller_kill("KILL", p.pid, group=True)
    elif action in ("stop-init", "kill-init", "helper"):
        tree = helper_tree(p.pid)
        if tree is None:
            detail = "no-tree"
        elif action == "helper":
            sup, rec, _ = tree
            detail = ",".join(caller_kill(s, pid) for pid in (sup, rec) for s in ("STOP", "TERM", "KILL"))
        else:
            detail = caller_kill("STOP" if action == "stop-init" else "KILL", tree[2])
    if action == "STOP":
        time.sleep(6)  # past the wall limit while the client stays stopped
        if p.poll() is None:
            p.kill()
        rc = "stopped:%s" % p.wait()
    else:
        try:
            rc = p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "alive:%s" % p.wait()
    results[name] = "%s %s %s" % (name, rc, detail or "-")


SCEN = [
    ("kill-client-start", "start", "KILL"), ("kill-client-mid", "mid", "KILL"),
    ("kill-client-output", "output", "KILL"), ("term-client-start", "start", "TERM"),
    ("term-client-mid", "mid", "TERM"), ("stop-client-mid", "mid", "STOP"),
    ("stop-client-output", "output", "STOP"), ("hup-pty-mid", "mid", "hup"),
    ("hup-pty-output", "output", "hup"), ("kill-session-start", "start", "session"),
    ("kill-session-output", "output", "session"), ("stop-init-mid", "mid", "stop-init"),
    ("kill-init-mid", "mid", "kill-init"), ("helper-signals-mid", "mid", "helper"),
]
ths = [threading.Thread(target=scenario, args=s) for s in SCEN]
for t in ths:
    t.start()
for t in ths:
    t.join()
for s in SCEN:
    print(results.get(s[0], s[0] + " lost -"))
