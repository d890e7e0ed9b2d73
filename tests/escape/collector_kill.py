#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Kill a run's artifact collector mid-copy, as the caller (escape 27).

usage: collector_kill.py SBX OUT CODE   (as the caller)

Starts `sbx run --json -c CODE` with its stdout in OUT, watches /proc for
the collector (a process of this uid named sbx-helper, in the initial pid
namespace, whose parent is the root supervisor) and SIGKILLs it the
moment it shows. Prints KILLED PID or MISSED.
"""
import os, signal, subprocess, sys

SBX, OUT, CODE = sys.argv[1:4]
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
        if (s is None or s.get("Name") != "sbx-helper" or int(s["Uid"].split()[0]) != ME
                or len(s.get("NSpid", "").split()) != 1):
            continue
        parent = status(s["PPid"])
        if parent and parent.get("Name") == "sbx-helper" and parent["Uid"].split()[0] == "0":
            return int(p)
    return None


with open(OUT, "w") as out:
    client = subprocess.Popen([SBX, "run", "--json", "-c", CODE], stdout=out, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    killed = None
    while client.poll() is None and killed is None:
        pid = collector()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            killed = pid
    client.wait()
print("KILLED %d" % killed if killed else "MISSED")
