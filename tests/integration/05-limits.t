#!/bin/sh
# SPDX-License-Identifier: ISC
# Wall timeout (with a double-forked orphan), memory limit, fork bomb:
# right outcome and exit status, nothing left running, audited.
. "$(dirname "$0")/lib.sh"
plan 13

marker=sbx-orphan-$$
cat > "$T/orphan.py" <<PY
import os, time
if os.fork() == 0:
    if os.fork() == 0:
        os.execv("/bin/sleep", ["/bin/sleep", "1000", "$marker"])
    os._exit(0)
while True:
    pass
PY
chmod 644 "$T/orphan.py"
sbx_run run --json --timeout 2s "$T/orphan.py"
check "timeout: exit 124" [ "$rc" = 124 ]
check "timeout: outcome timeout" [ "$(jget outcome)" = timeout ]
w=$(jget wall_ms)
check "timeout: wall_ms about 2 s" [ "$w" -ge 2000 -a "$w" -lt 5000 ]
sleep 0.2
# anchored: the pattern must not match this test's own shell
check "timeout: the double-forked orphan is gone" sh -c '! pgrep -f "^/bin/sleep 1000 $1" >/dev/null' _ "$marker"
check "timeout: audited" [ "$(audit_field "$(jget id)" end.outcome)" = timeout ]

sbx_run run --json -c 'b = bytearray(2**31)'
check "memory: exit 137" [ "$rc" = 137 ]
check "memory: outcome memory_limit" [ "$(jget outcome)" = memory_limit ]
check "memory: audited" [ "$(audit_field "$(jget id)" end.outcome)" = memory_limit ]

cat > "$T/bomb.py" <<'PY'
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
PY
chmod 644 "$T/bomb.py"
sbx_run run --json --timeout 20s "$T/bomb.py"
check "fork bomb: outcome pids_limit" [ "$(jget outcome)" = pids_limit ]
check "fork bomb: stopped well before the wall limit" [ "$(jget wall_ms)" -lt 15000 ]
sleep 0.2
check "fork bomb: not one of its processes is left" sh -c '! pgrep -f "^/usr/bin/python3 -I -B /code/bomb.py" >/dev/null'
check "fork bomb: audited" [ "$(audit_field "$(jget id)" end.outcome)" = pids_limit ]
check "no cgroup left" no_cgroups_left
finish
