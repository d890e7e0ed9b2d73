# SPDX-License-Identifier: ISC
"""Allocates memory until the policy's memory limit stops it: the kernel
kills the process (exit status 137, outcome memory_limit). There is no swap
to hide in.

Try it:  sbx run --memory 128M examples/memory_hog.py
It refuses to run outside sbx.
"""
import os
import sys

if os.uname().nodename != "sbx" and not __file__.startswith("/code/"):
    sys.exit("memory_hog.py: refusing to run outside the sbx sandbox")

CHUNK = 16 << 20
chunks = []
while True:
    chunks.append(b"\x01" * CHUNK)  # filled, so the pages are really used
    print(f"allocated {len(chunks) * CHUNK >> 20} MiB", flush=True)
