#!/bin/sh
# SPDX-License-Identifier: ISC
# The Python interpreter's flags and environment (sbx.conf(5)
# [language.python]): no -I, so the policy's PYTHON* variables take effect,
# while nothing of the caller's environment reaches the program (the
# helper builds it from the policy and sbx.conf alone); the code's
# directory, the session's /work and the input files' /in are importable;
# output is unbuffered, so what was printed before a memory kill or a
# timeout is in the result; faulthandler prints the Python stack on a
# segfault; pip fails at once (no index, no retries).
. "$(dirname "$0")/lib.sh"
plan 16
POL=$P/etc/sbx/policies.d
X=$T/xdg
# a policy's read-only path under /tmp is not bound (the new root is built
# on /tmp): the library lives in /var/tmp
LIB=$(mktemp -d /var/tmp/sbx-t41.XXXXXX)
trap 'rm -rf "$T" "$LIB"' EXIT
mkdir -p "$X"
chown sbxtest "$X"
printf 'NAME = "from the policy path"\n' > "$LIB/labmod.py"
chmod 0755 "$LIB"; chmod 0644 "$LIB/labmod.py"
cat > "$POL/pyenv.policy" <<EOF2
[policy]
groups = sbx
[limits]
wall_time = 20s
memory = 128M
[filesystem]
ro = /usr /lib /lib64 /bin /sbin /etc/alternatives $LIB
[env]
set = HOME=/tmp LANG=C.UTF-8 PATH=/usr/bin:/bin PYTHONHASHSEED=123 PYTHONPATH=$LIB OMP_NUM_THREADS=3
EOF2
chmod 644 "$POL/pyenv.policy"
srun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# PYTHONHASHSEED: the default policy's 0, twice; another policy's 123
hash='print(hash("abc"), {"x", "y", "z", "w"}.__repr__())'
sbx_run run -c "$hash"; h1=$(cat "$T/out")
sbx_run run -c "$hash"; h2=$(cat "$T/out")
want0=$(cd /tmp && PYTHONHASHSEED=0 /usr/bin/python3 -c "$hash")
check "PYTHONHASHSEED=0 from the default policy: two runs print the same hash and set order" \
	[ -n "$h1" -a "$h1" = "$h2" -a "$h1" = "$want0" ]
sbx_run run --policy pyenv -c "$hash"
check "a policy's PYTHONHASHSEED=123 takes effect" [ "$(cat "$T/out")" = "$(cd /tmp && PYTHONHASHSEED=123 /usr/bin/python3 -c "$hash")" ]

sbx_run run --policy pyenv -c 'import labmod, os, sys; print(labmod.NAME); print(os.environ["PYTHONPATH"]); print(os.environ["OMP_NUM_THREADS"])'
check "a policy's PYTHONPATH takes effect, after sbx's /sbx/python, /work and /in" \
	[ "$(cat "$T/out")" = "from the policy path
/sbx/python:/work:/in:$LIB
3" ]

# the caller's environment never reaches the program
run_as sbxtest env PYTHONPATH=/tmp/evil PYTHONSTARTUP=/tmp/evil.py PYTHONINSPECT=1 PYTHONHASHSEED=7 \
	PYTHONWARNINGS=error LD_PRELOAD=/tmp/evil.so OMP_NUM_THREADS=99 \
	"$SBX" run -c 'import os, sys
print(hash("abc"))
print(sorted(k for k in os.environ if k.startswith(("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONWARNINGS", "LD_"))))
print(os.environ["PYTHONPATH"], os.environ["OMP_NUM_THREADS"], sys.flags.inspect)' >"$T/out" 2>"$T/err" </dev/null
check "the caller's PYTHON*, LD_* and OMP_NUM_THREADS do not reach the program" \
	[ "$(cat "$T/out")" = "$(cd /tmp && PYTHONHASHSEED=0 /usr/bin/python3 -c 'print(hash("abc"))')
[]
/sbx/python:/work:/in 1 0" ]

# importable: the code's own directory, /in, the session's /work
printf 'def f():\n    return "helper in /in"\n' > "$T/inhelper.py"
chmod 0644 "$T/inhelper.py"
srun run --input "$T/inhelper.py" -c 'import inhelper; print(inhelper.f())'
check "a module given with --input is importable (/in)" [ "$rc $(cat "$T/out")" = "0 helper in /in" ]
srun run --session s41 -c 'open("/work/sesshelper.py", "w").write("VALUE = 41\n")'
srun run --session s41 -c 'import sesshelper; print(sesshelper.VALUE)'
check "a module saved in the session's /work is importable by a later run" [ "$rc $(cat "$T/out")" = "0 41" ]
cat > "$T/prog.py" <<'PY'
import sys
print(sys.path[0], sys.flags.isolated, sys.flags.ignore_environment, sys.flags.no_user_site)
PY
chmod 0644 "$T/prog.py"
sbx_run run "$T/prog.py"
check "the code's directory is sys.path[0]; not isolated (-I), environment read (no -E), no user site (-s)" \
	[ "$(cat "$T/out")" = "/code 0 0 1" ]

# unbuffered: output before a kill is kept
sbx_run run --json --policy pyenv -c 'print("step 1 done")
b = bytearray(1 << 30)'
check "output printed before a memory kill is in the result" \
	[ "$(jget outcome) $(jget stdout)" = "memory_limit step 1 done" ]
sbx_run run --json --timeout 2s -c 'import time
print("step 1 done")
while True:
    time.sleep(1)'
check "output printed before a timeout is in the result" [ "$(jget outcome) $(jget stdout)" = "timeout step 1 done" ]
sbx_run run -c 'import sys
sys.stdout.write("no newline yet")
sys.stderr.write("err first\n")
sys.stdout.write(" and the rest\n")'
check "stdout written without a newline is not held back (plain mode)" [ "$(cat "$T/out")" = "no newline yet and the rest" ]

# segfault: the Python stack from faulthandler, and what was printed
sbx_run run --json -c 'import ctypes
def crash():
    ctypes.string_at(0)
print("before the crash")
crash()'
jget stderr > "$T/segv"
diag "$(head -c 400 "$T/segv")"
check "a segfault is outcome signal SEGV and keeps the output printed before it" \
	[ "$(jget outcome) $(jget signal_name) $(jget stdout)" = "signal SEGV before the crash" ]
check "faulthandler prints the Python stack on SIGSEGV" \
	sh -c 'grep -q "Fatal Python error: Segmentation fault" "$1" && grep -q "line 3 in crash" "$1" && grep -q "line 5 in <module>" "$1"' _ "$T/segv"

# pip fails at once: no index, no retries
sbx_run run --json -c 'import subprocess, sys
r = subprocess.run([sys.executable, "-m", "pip", "install", "--break-system-packages", "polars"], capture_output=True, text=True)
print(r.returncode); print(r.stderr)'
jget stdout > "$T/pip"
diag "$(tail -3 "$T/pip")"
check "pip install fails (exit status 1)" [ "$(head -1 "$T/pip")" = 1 ]
check "pip does not retry or try the network (PIP_NO_INDEX, PIP_RETRIES=0)" \
	sh -c '! grep -qi -e retrying -e "connection" "$1" && grep -q "No matching distribution found for polars" "$1"' _ "$T/pip"

sbx_run run --dry-run -c pass
check "dry-run shows the composed environment (sbx.conf search_path and env, CPU counts)" \
	sh -c 'grep -qx "env: PYTHONPATH=/sbx/python:/work:/in" "$1" && grep -qx "env: PIP_NO_INDEX=1" "$1" &&
	       grep -qx "env: OPENBLAS_NUM_THREADS=1" "$1" && grep -qx "env: PYTHONHASHSEED=0" "$1"' _ "$T/out"
sbx_run run --dry-run --policy pyenv -c pass
check "dry-run: the policy's OMP_NUM_THREADS wins over the CPU count" \
	sh -c 'grep -qx "env: OMP_NUM_THREADS=3" "$1" && [ "$(grep -c "^env: OMP_NUM_THREADS=" "$1")" = 1 ]' _ "$T/out"
rm -f "$POL/pyenv.policy"
finish
