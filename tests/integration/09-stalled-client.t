#!/bin/sh
# SPDX-License-Identifier: ISC
# A client whose terminal is never read (or paused with Ctrl-S) must not
# keep the recorder from writing the END record.
. "$(dirname "$0")/lib.sh"
plan 3

cat > "$T/stall.py" <<'PY'
import os, pty, subprocess, sys, time
master, slave = pty.openpty()          # nobody ever reads the master
t = time.monotonic()
p = subprocess.run([sys.argv[1], "run", "--timeout", "3s", "-c",
                    "import sys\nwhile True: sys.stdout.write('x' * 4096)"],
                   stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=60)
print(p.returncode, int(time.monotonic() - t))
PY
chmod 644 "$T/stall.py"
before=$("$AUDIT" list --limit 0 | grep -c .)
run_as sbxtest /usr/bin/python3 "$T/stall.py" "$SBX" >"$T/out" 2>"$T/err"
diag "$(cat "$T/out" "$T/err")"
set -- $(cat "$T/out")
check "the run ended with a limit, not an sbx failure" sh -c '[ "$1" = 124 ] || [ "$1" = 137 ]' _ "${1:-x}"
check "within the wall limit plus the 10 s flush allowance" [ "${2:-99}" -lt 20 ]
check "its END record was written" sh -c '"$1" list --limit 1 | grep -Eq "timeout|output_limit"' _ "$AUDIT"
finish
