#!/bin/sh
# SPDX-License-Identifier: ISC
# Nothing is stopped, cut or left behind without a word (sbx(1)
# DIAGNOSTICS, "The result"):
# - plain mode: one stderr line from sbx for each limit that stopped the
#   program (naming the limit, its value and the policy or option it came
#   from), for output cut at the cap, a full /tmp, files in /out not
#   returned, a pids limit the program lived with, a fatal signal;
# - --json: the error object leads with the limit (code and type timeout,
#   the message naming it) and keeps the KeyboardInterrupt traceback;
# - a missing module gets a hint: packages cannot be installed at run time,
#   and the Debian package when the host's package lists have one;
# - stdin: with -c or FILE, a piped standard input reaches the program,
#   capped by input_size, its size and SHA-256 in the result.
. "$(dirname "$0")/lib.sh"
plan 22
POL=$P/etc/sbx/policies.d
cat > "$POL/stops.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
wall_time = 20s
cpu_time = 1s
output = 64K
file_size = 1M
tmp_size = 4M
input_size = 1K
EOF2
chmod 644 "$POL/stops.policy"
# sbx_run, but stdin from $1
sbx_in() {
	in=$1; shift
	run_as sbxtest "$SBX" "$@" >"$T/out" 2>"$T/err" <"$in"
	rc=$?
}
line() { grep -x -- "$1" "$T/err" >/dev/null; }

sbx_run run -c 'b = bytearray(2**31)'
check "README's memory hog: exit 137 and 'sbx: stopped: memory limit of 512M (policy default) reached'" \
	sh -c '[ "$1" = 137 ] && grep -qx "sbx: stopped: memory limit of 512M (policy default) reached" "$2"' _ "$rc" "$T/err"
sbx_run run --timeout 1s -c 'import time
time.sleep(30)'
check "timeout: exit 124, 'sbx: stopped: wall-time limit of 1s (--timeout) reached'" \
	sh -c '[ "$1" = 124 ] && grep -qx "sbx: stopped: wall-time limit of 1s (--timeout) reached" "$2"' _ "$rc" "$T/err"
sbx_run run --policy stops -c 'while True: pass'
check "CPU time: 'sbx: stopped: CPU-time limit of 1s (policy stops) reached'" line "sbx: stopped: CPU-time limit of 1s (policy stops) reached"
sbx_run run --policy stops -c 'print("x" * 1000000)'
diag "$(cat "$T/err")"
check "output: 'sbx: stopped: output limit of 64K (policy stops) reached'" line "sbx: stopped: output limit of 64K (policy stops) reached"
check "output: 'sbx: output cut at 64K (policy stops); ... not shown'" grep -q '^sbx: output cut at 64K (policy stops); [0-9.]*K not shown$' "$T/err"
# (Python ignores SIGXFSZ and gets EFBIG: the shell's head is killed by it)
sbx_run run --policy stops --lang sh -c 'exec head -c 2097152 /dev/zero > /tmp/big'
check "file size: 'sbx: stopped: file size limit of 1M (policy stops) reached'" line "sbx: stopped: file size limit of 1M (policy stops) reached"
sbx_run run --pids 16 --lang sh -c 'bash -c ":(){ :|:& };:"; sleep 30'
check "fork bomb: 'sbx: stopped: process limit of 16 (--pids) reached'" line "sbx: stopped: process limit of 16 (--pids) reached"
sbx_run run --policy stops -c 'import os
for i in range(5):
    try:
        open("/tmp/f%d" % i, "wb").write(b"x" * 1000000)
    except OSError:
        pass'
check "/tmp full: 'sbx: /tmp filled up at 4M (policy stops): ...'" \
	line 'sbx: /tmp filled up at 4M (policy stops): the program got "No space left on device"'
sbx_run run -c 'import threading
ev, ts = threading.Event(), []
try:
    while True:
        t = threading.Thread(target=ev.wait); t.start(); ts.append(t)
except RuntimeError:
    pass
ev.set()
[t.join() for t in ts]'
check "pids met and lived with: 'sbx: the process limit of 64 (policy default) refused ...'" \
	line "sbx: the process limit of 64 (policy default) refused to start a process or thread; the program went on"
sbx_run run -c 'import os
for i in range(3000):
    open("/out/f%d" % i, "w").close()'
check "files in /out not returned: 'sbx: N files in /out not returned (...)'" \
	grep -q '^sbx: [0-9]* files in /out not returned (regular files only, within the artifact count cap and out_size 64M (policy default))$' "$T/err"
sbx_run run -c 'import ctypes
ctypes.string_at(0)'
check "a segfault: exit 139 and 'sbx: the program was killed by signal SIGSEGV'" \
	sh -c '[ "$1" = 139 ] && grep -qx "sbx: the program was killed by signal SIGSEGV" "$2"' _ "$rc" "$T/err"
sbx_run run -c 'print("fine")'
check "a run that is not stopped or cut: no sbx line" [ ! -s "$T/err" ]

# --json: the error leads with the limit, the traceback says where
sbx_run run --json --timeout 1s -c 'import time
def wait():
    time.sleep(30)
wait()'
check "timeout: error.code and error.type are timeout, the message names the limit" \
	[ "$(jget error.code) $(jget error.type) $(jget error.message)" = "timeout timeout wall-time limit of 1s (--timeout) reached" ]
jget error.traceback > "$T/tb"
check "timeout: the KeyboardInterrupt traceback stays in error.traceback and traceback" \
	sh -c '[ "$1" = KeyboardInterrupt ] && grep -q "in wait" "$2"' _ "$(jget traceback.type)" "$T/tb"

# a missing module: the hint
sbx_run run --json -c 'import polars'
jget error.hint > "$T/hint"
check "import polars: error.type ModuleNotFoundError with a hint naming it and why it cannot be installed" \
	sh -c '[ "$1" = ModuleNotFoundError ] && grep -q "the module .polars. is not installed in the sandbox, and packages cannot be installed at run time" "$2"' \
	_ "$(jget error.type)" "$T/hint"
sbx_run run -c 'import polars.dataframe'
check "plain mode: 'sbx: hint: the module 'polars' is not installed ...'" grep -q "^sbx: hint: the module 'polars' is not installed" "$T/err"
mod=pyfiglet
if /usr/bin/python3 -c "import $mod" 2>/dev/null; then
	ok 0 "# SKIP $mod is installed here"
else
	known=no
	for f in /var/lib/apt/lists/*_Packages*; do
		[ -e "$f" ] || continue
		/usr/lib/apt/apt-helper cat-file "$f" 2>/dev/null | grep -qx "Package: python3-$mod" && known=yes
	done
	sbx_run run --json -c "import $mod"
	diag "python3-$mod in this host's package lists: $known; hint: $(jget error.hint)"
	jget error.hint > "$T/hint"
	if [ $known = yes ]; then
		check "a module Debian packages: the hint names python3-$mod" grep -q "Debian package python3-$mod (apt install python3-$mod)" "$T/hint"
	else
		check "a module the host's package lists lack: the hint says so" grep -q "no package python3-$mod is known" "$T/hint"
	fi
fi

# stdin
printf 'alice\n21\n' > "$T/stdin.txt"
sbx_in "$T/stdin.txt" run -c 'name = input(); n = int(input()); print("hello", name, n * 2)'
check "piped stdin reaches input() with -c" [ "$rc $(cat "$T/out")" = "0 hello alice 42" ]
printf 'import sys\nprint(sum(int(l) for l in sys.stdin))\n' > "$T/sum.py"
chmod 0644 "$T/sum.py"
seq 1 100 > "$T/nums"
sbx_in "$T/nums" run --json "$T/sum.py"
check "piped stdin reaches a FILE program; the result has its size and SHA-256" \
	[ "$(jget stdout | head -1) $(jget stdin.size) $(jget stdin.sha256)" = "5050 $(wc -c < "$T/nums") $(sha256sum < "$T/nums" | cut -d' ' -f1)" ]
check "the audit START record has the same size and SHA-256" \
	[ "$(audit_field "$(jget id)" start.stdin.size) $(audit_field "$(jget id)" start.stdin.sha256)" = "$(jget stdin.size) $(jget stdin.sha256)" ]
head -c 2000 /dev/zero > "$T/big"
sbx_in "$T/big" run --policy stops -c 'import sys; print(len(sys.stdin.buffer.read()))'
check "stdin over input_size (1K): exit 77 (refused by policy), one line naming the cap and the policy, nothing run" \
	sh -c '[ "$1" = 77 ] && grep -q "^sbx: stdin: more than policy stops.s input_size 1K" "$2" && [ ! -s "$3" ]' _ "$rc" "$T/err" "$T/out"
printf 'print("code from stdin")\n' > "$T/code.py"
sbx_in "$T/code.py" run --json -
check "with '-' stdin is the code, not the program's input (stdin null in the result)" \
	[ "$(jget stdout | head -1) $(jget stdin)" = "code from stdin null" ]
rm -f "$POL/stops.policy"
finish
