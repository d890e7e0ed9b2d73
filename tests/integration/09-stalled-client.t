#!/bin/sh
# SPDX-License-Identifier: ISC
# A client whose terminal is never read (or paused with Ctrl-S) must not
# keep the recorder from writing the END record, and must still get its
# result: the payload writes in small pieces (many output frames), and a
# client that waited out a stalled write for every frame fell behind the
# recorder's flush allowance (exit 125, "closed inside a frame").
. "$(dirname "$0")/lib.sh"
plan 4

cat > "$T/stall.py" <<'PY'
import os, pty, subprocess, sys, time
master, slave = pty.openpty()          # nobody ever reads the master
t = time.monotonic()
p = subprocess.run([sys.argv[1], "run", "--timeout", "3s", "-c",
                    "import sys\nwhile True: sys.stdout.write('x' * 512)"],
                   stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
print(p.returncode, int(time.monotonic() - t))
sys.stderr.write(p.stderr.decode(errors="replace"))
PY
chmod 644 "$T/stall.py"
before=$("$AUDIT" list --limit 0 | grep -c .)
run_as sbxtest /usr/bin/python3 "$T/stall.py" "$SBX" >"$T/out" 2>"$T/err"
diag "$(cat "$T/out" "$T/err")"
set -- $(cat "$T/out")
check "the run ended with a limit, not an sbx failure" sh -c '[ "$1" = 124 ] || [ "$1" = 137 ]' _ "${1:-x}"
check "within the wall limit plus the 10 s flush allowance" [ "${2:-99}" -lt 20 ]
check "the client got its result (no protocol error)" sh -c '! grep -q "protocol error" "$1"' _ "$T/err"
check "its END record was written" sh -c '"$1" list --limit 1 | grep -Eq "timeout|output_limit"' _ "$AUDIT"
finish
