#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Kill a run's artifact collector mid-copy, as the caller (escape 27).

usage: collector_kill.py [--stop] SBX OUT CODE [SBX-RUN-ARG...]   (as the caller)

Starts `sbx run --json -c CODE [SBX-RUN-ARG...]` with its stdout in OUT,
watches /proc for the collector (a process of this uid in the initial pid
namespace whose parent is the root supervisor: sbx-helper before its exec
of sbx-collector, sbx-collector after) and
SIGKILLs it the moment it shows. Prints KILLED PID or MISSED.

--stop: SIGSTOP it instead (a collector that never finishes, for the
supervisor's time limit to end); prints STOPPED PID GONE once the client
has exited and the stopped process has died (is gone or a zombie), or
STOPPED PID ALIVE if it still lives 10 s after.
"""
import os, signal, subprocess, sys, time

STOP = sys.argv[1] == "--stop"
if STOP:
    del sys.argv[1]
SBX, OUT, CODE = sys.argv[1:4]
EXTRA = sys.argv[4:]
ME = os.getuid()


def status(pid):
    try:
        with open("/proc/%s/status" % pid) as f:
            return dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
    except OSError:
        return None


def collector():
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        s = status(p)
        if (s is None or int(s["Uid"].split()[0]) != ME
                or len(s.get("NSpid", "").split()) != 1):
            continue
        parent = status(s["PPid"])
        if parent and parent.get("Name") == "sbx-helper" and parent["Uid"].split()[0] == "0":
            return int(p)
    return None


def alive(pid):
    s = status(pid)
    return s is not None and not s.get("State", "").startswith("Z")


with open(OUT, "w") as out:
    client = subprocess.Popen([SBX, "run", "--json", "-c", CODE] + EXTRA, stdout=out, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    killed = None
    while client.poll() is None and killed is None:
        pid = collector()
        if pid is not None:
            os.kill(pid, signal.SIGSTOP if STOP else signal.SIGKILL)
            killed = pid
    client.wait()
if STOP and killed:
    for _ in range(100):
        if not alive(killed):
            break
        time.sleep(0.1)
    print("STOPPED %d %s" % (killed, "ALIVE" if alive(killed) else "GONE"))
else:
    print("KILLED %d" % killed if killed else "MISSED")
