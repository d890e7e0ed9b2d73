# SPDX-License-Identifier: ISC
"""A fork bomb: every process forks as fast as it can. The policy's pids
limit stops it (outcome pids_limit, or an error once fork() fails), and
nothing outside the sandbox notices.

Try it:  sbx run --pids 32 --timeout 10s examples/fork_bomb.py
It refuses to run outside sbx.
"""
import os
import sys
import time

if os.uname().nodename != "sbx" and not __file__.startswith("/code/"):
    sys.exit("fork_bomb.py: refusing to run outside the sbx sandbox")

original = os.getpid()
started = 0
try:
    while True:
        pid = os.fork()
        if pid == 0:
            started = 0  # the child forks too
            continue
        started += 1
        if os.getpid() == original and started % 8 == 0:
            print(f"{started} children so far", flush=True)
except OSError as e:
    if os.getpid() != original:
        time.sleep(1)
        os._exit(0)
    print(f"fork failed after {started} children: {e}", flush=True)
    raise
