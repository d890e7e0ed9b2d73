#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 8: a hostile environment and process state at the helper's
# entry. Through the client (whose own process may load what it likes) and
# directly (tests/escape/drive.py with bin/rawexec): LD_PRELOAD,
# LD_LIBRARY_PATH, LD_AUDIT, GCONV_PATH with CHARSET (the pkexec vector),
# GLIBC_TUNABLES, MALLOC_*, SQLITE_TMPDIR, TMPDIR, LOCPATH/LC_ALL/LANGUAGE,
# NLSPATH, entries without '=', an entry starting with '=', duplicates, a
# near-ARG_MAX environment (1.9 MB), fds 0-2 closed at entry, and caller
# rlimits (RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_AS, RLIMIT_STACK,
# RLIMIT_CORE; soft ones too low are raised, hard ones too low refuse the
# run in one line). Nothing may load the attacker's library as root or in
# the sandbox, the payload sees only the policy's environment (with what sbx.conf and the
# CPU count add) and limits,
# SQLite puts nothing in the attacker's temp directory, and the audit log
# stays verifiable.
#
# Defences checked by removing them:
# - clearenv() in sanitize.c removed and exec_payload() passing `environ`
#   instead of the policy's envp: the payload saw CHARSET, FOO,
#   GLIBC_TUNABLES, SQLITE_TMPDIR... (tests 3 and 5 failed; glibc's secure
#   mode still dropped LD_PRELOAD, GCONV_PATH, TMPDIR, MALLOC_CHECK_ for the
#   setuid helper itself, a second layer).
# - raise_rlimits() not called (main.c prepare): a soft RLIMIT_NOFILE of 12
#   failed the run ("pipes: Too many open files"), a soft RLIMIT_FSIZE of 0
#   made the START record fail ("disk I/O error"), a 64 KiB soft stack
#   crashed the helper (SIGSEGV), hard limits were no longer named (tests
#   4, 6, 10-12, 14, 15 failed).
# - the helper's own reopening of closed fds 0-2 removed: nothing changed,
#   because glibc reopens them for AT_SECURE (setuid) programs before main
#   (csu/check_fds.c); the fds-closed case guards both layers. The payload
#   writes 'O' bytes (REC_KILL_OUTPUT) so a stdout that ended up on the
#   recorder's control socket would show as a wrong outcome.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 16
uid=$(id -u sbxtest)
mark=/tmp/sbx-evil-loaded-$$
trap 'rm -rf "$T" "$mark"' EXIT

# A constructor that notes every process that loads it, also as a gconv
# module.
cat > "$T/evil.c" <<C
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void note(void) {
	char exe[256] = ""; FILE *f = fopen("$mark", "a");
	if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) < 0) exe[0] = 0;
	if (f) { fprintf(f, "%s uid=%d euid=%d\n", exe, (int)getuid(), (int)geteuid()); fclose(f); }
	dprintf(2, "EVIL-LOADED %s\n", exe);
}
int gconv_init(void *s) { (void)s; return 0; }
int gconv(void *s) { (void)s; return 0; }
C
cc -shared -fPIC -o "$T/evil.so" "$T/evil.c"
mkdir -p "$T/gconv" "$T/sqltmp" "$T/locale/xx_XX.UTF-8"
cp "$T/evil.so" "$T/gconv/EVIL.so"
printf 'module INTERNAL EVIL// EVIL 1\nmodule EVIL// INTERNAL EVIL 1\n' > "$T/gconv/gconv-modules"
chmod -R a+rX "$T"
chmod 0777 "$T/sqltmp"
touch "$mark"; chmod 0666 "$mark"

# Through the client (moved here from tests/integration/06-refusals.t).
# (ASAN_OPTIONS: a SANITIZE=1 client otherwise refuses to start with a preload)
run_as sbxtest env ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD="$T/evil.so" LD_LIBRARY_PATH="$T" \
	GCONV_PATH="$T/gconv" CHARSET=EVIL MALLOC_CHECK_=3 SQLITE_TMPDIR="$T/sqltmp" TMPDIR="$T/sqltmp" \
	LC_ALL=xx_XX.UTF-8 LOCPATH="$T/locale" FOO=leak "$SBX" run -c 'import os; print(" ".join(sorted(os.environ)))' \
	>"$T/out" 2>"$T/err"
# the policy's [env], what sbx.conf adds for Python (search_path, env) and
# the CPU-count variables (common/runenv.h), nothing else
policy_env="BLIS_NUM_THREADS HOME LANG MKL_NUM_THREADS MPLBACKEND MPLCONFIGDIR NUMEXPR_NUM_THREADS OMP_NUM_THREADS OPENBLAS_NUM_THREADS PATH PIP_DISABLE_PIP_VERSION_CHECK PIP_NO_INDEX PIP_RETRIES PYTHONHASHSEED PYTHONPATH PYTHON_CPU_COUNT"
check "client with a hostile environment: the run still works" [ "$(wc -l < "$T/out")" = 1 ]
check "no root or sandboxed process loaded the preload (only the client did)" \
	sh -c '! grep -Eq "euid=0|sbx-helper|python" "$1"' _ "$mark"
check "the sandbox sees only the policy's environment" [ "$(cat "$T/out")" = "$policy_env" ]
: > "$mark"

# Directly, with what a shell cannot pass.
python3 - "$T/cases.json" "$T" <<'PY'
import json, sys
out, t = sys.argv[1], sys.argv[2]
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds
code = """import os, resource as r
print(" ".join(sorted(os.environ)))
print(*(r.getrlimit(getattr(r, "RLIMIT_" + k)) for k in ("NOFILE", "FSIZE", "CORE", "CPU")))
import sys; sys.stdout.write("O" * 100000); sys.stderr.write("O" * 100000)
print("\\nRAN")"""
hostile = ["LD_PRELOAD=%s/evil.so" % t, "LD_LIBRARY_PATH=" + t, "LD_AUDIT=%s/evil.so" % t,
           "GCONV_PATH=%s/gconv" % t, "CHARSET=EVIL", "GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.mmap_threshold=1",
           "MALLOC_CHECK_=3", "MALLOC_PERTURB_=165", "MALLOC_ARENA_MAX=1", "SQLITE_TMPDIR=%s/sqltmp" % t,
           "TMPDIR=%s/sqltmp" % t, "LOCPATH=%s/locale" % t, "LC_ALL=xx_XX.UTF-8", "LANGUAGE=xx",
           "NLSPATH=%s/%%N" % t, "HOSTALIASES=%s/h" % t, "RES_OPTIONS=debug", "PATH=%s:/usr/bin" % t,
           "NOEQUALS", "LD_PRELOAD", "=startswithequals", "PATH=/evil", "FOO=leak", "IFS=/"]
E = []
for h in hostile:
    E += ["-e", h]
cases = [
    {"name": "hostile", "argv": base, "raw": E, "code": code},
    {"name": "huge-env", "argv": base, "raw": ["-B", str(1900 * 1024)] + E, "code": code},
    {"name": "fds-closed", "argv": base, "raw": ["-c"] + E, "code": code},
    {"name": "nofile-soft", "argv": base, "raw": ["-r", "NOFILE:12:4096"], "code": code},
    {"name": "nofile-hard", "argv": base, "raw": ["-r", "NOFILE:10:10"], "code": code},
    {"name": "fsize-soft", "argv": base, "raw": ["-r", "FSIZE:0:inf"], "code": code},
    {"name": "fsize-hard", "argv": base, "raw": ["-r", "FSIZE:1024:1024"], "code": code},
    {"name": "as-soft", "argv": base, "raw": ["-r", "AS:%d:inf" % (64 << 20)], "code": code},
    {"name": "stack-soft", "argv": base, "raw": ["-r", "STACK:%d:inf" % (64 << 10)], "code": code},
    {"name": "core-cpu", "argv": base, "raw": ["-r", "CORE:hard:hard", "-r", "CPU:1:inf"], "code": code},
]
json.dump(cases, open(out, "w"))
PY
before=$(runs_count)
drive "$T/cases.json"
diag "$(cut -f1-6 "$T/drive.tsv")"
rget() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["name"] == sys.argv[2]:
        r = d["result"] or {}; o = (r.get("stdout") or "").splitlines()
        print({"env": o[0] if o else "", "limits": o[1] if len(o) > 1 else "", "ran": o[-1:] == ["RAN"],
               "out": r.get("stdout_bytes"), "err": r.get("stderr_bytes"), "stderr": d["stderr"]}[sys.argv[3]])' "$T/drive.out" "$1" "$2"; }
pol_limits="(256, 256) (67108864, 67108864) (0, 0) (31, 32)"
# A SANITIZE=1 build cannot start under any finite RLIMIT_AS (ASan reserves
# terabytes of shadow address space before main): as-soft is left out there.
cases="hostile huge-env fds-closed nofile-soft fsize-soft as-soft stack-soft core-cpu"; nruns=8
case ${SBX_MAKEFLAGS:-} in *SANITIZE=1*) cases=$(echo "$cases" | sed 's/ as-soft//'); nruns=7 ;; esac
bad=
for c in $cases; do
	[ "$(dcol $c 2) $(dcol $c 6) $(rget $c ran)" = "0 ok True" ] || bad="$bad $c"
done
check "hostile env, huge env, closed fds, low soft rlimits: the run works ($bad)" [ -z "$bad" ]
bad=
for c in hostile huge-env fds-closed; do [ "$(rget $c env)" = "$policy_env" ] || bad="$bad $c"; done
check "the payload sees only the policy's environment ($bad)" [ -z "$bad" ]
bad=
for c in $cases; do
	[ "$(rget $c limits)" = "$pol_limits" ] || bad="$bad $c:$(rget $c limits)"
done
check "the payload's rlimits are the policy's, not the caller's ($bad)" [ -z "$bad" ]
check "the preload was loaded by no process of the run" sh -c '! grep -q . "$1" && ! grep -q EVIL-LOADED "$2"' _ "$mark" "$T/drive.out"
check "SQLite put nothing in the attacker's SQLITE_TMPDIR/TMPDIR" [ -z "$(ls -A "$T/sqltmp")" ]
check "fds 0-2 closed: output still captured in full" \
	[ "$(rget fds-closed out) $(rget fds-closed err)" = "$(rget hostile out) 100000" ]
check "hard RLIMIT_NOFILE / RLIMIT_FSIZE too low: 125, one line naming the limit" sh -c '
	[ "$(awk -F"\t" "\$1 == \"nofile-hard\" || \$1 == \"fsize-hard\" {print \$2, \$4}" "$1" | tr "\n" " ")" = "125 one 125 one " ] &&
	grep "nofile-hard" "$2" | grep -q "RLIMIT_NOFILE hard limit 10" && grep "fsize-hard" "$2" | grep -q "RLIMIT_FSIZE hard limit 1024"' \
	_ "$T/drive.tsv" "$T/drive.out"
bad=
for c in $cases; do
	[ "$(end_outcome "$(dcol $c 7)")" = ok ] && cg_gone "$(dcol $c 7)" || bad="$bad $c"
done
check "every run audited (ok), no cgroup left ($bad)" [ -z "$bad" ]
check "refused entries were not audited ($nruns runs recorded)" [ "$(runs_count)" = $((before + nruns)) ]
"$AUDIT" checkpoint --write --key "$P/var/lib/sbx/audit.key" >/dev/null # else the tail warns (exit 2)
"$AUDIT" verify >"$T/v" 2>&1; vrc=$?
check "the audit log verifies after the closed-fd and low-FSIZE runs" [ "$vrc" = 0 ]

# rlimits set by the shell before exec (moved from 06-refusals.t)
run_as sbxtest sh -c "ulimit -t 1; exec $SBX run -c 'print(1)'" >"$T/out" 2>"$T/err"; rc=$?
check "hard RLIMIT_CPU from the caller: refused with 125" [ "$rc" = 125 ]
check "the error names the limit" grep -q "RLIMIT_CPU hard limit" "$T/err"
run_as sbxtest sh -c "ulimit -S -t 1; exec $SBX run -c 'x = 0
for i in range(2 * 10**7): x += i
print(x > 0)'" >"$T/out" 2>"$T/err"; rc=$?
check "soft RLIMIT_CPU from the caller is not inherited by the payload" [ "$rc $(cat "$T/out")" = "0 True" ]
finish
