# SPDX-License-Identifier: ISC
"""Spins forever: the wall-clock or CPU limit ends it (exit status 124,
outcome timeout or cpu_limit). Ctrl-C reaches it as KeyboardInterrupt.

Try it:  sbx run --timeout 2s examples/infinite_loop.py
"""
print("spinning until a limit stops me", flush=True)
n = 0
while True:
    n += 1
