#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 7: argument injection. sbx-helper is exec'd directly as the
# caller (not through sbx) with hostile argument vectors: argc 0, missing
# "run", leading dashes, values that are options, arguments of 128 KiB (a
# single argument above MAX_ARG_STRLEN, 128 KiB, is refused by execve(2)
# itself, so "1 MB" is eight arguments of 128 KiB), embedded newlines,
# shell metacharacters, path-like policy and language names, unknown and
# repeated options, numbers that overflow or wrap, fd numbers that are not
# open, and limits above the policy. Each must end with status 125 (77 for
# a limit above the policy: a refusal by policy, sbx(1) EXIT STATUS) and one
# line on stderr; nothing runs (no "RAN", no marker file: no shell is ever
# involved); refusals after the policy is loaded are audited as
# sandbox_error and leave no cgroup; accepted tightenings never exceed the
# policy.
#
# Defences checked by removing them: with the "given twice" check in
# helper/args.c removed and sbx_limits_tighten() (common/policy.c) applying
# a request above the policy instead of refusing it, the repeated options
# and the above-policy requests ran the code (the repeated --lang ran
# Python code under sh); tests 1-3, 5-7 and 10-12 failed.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 12
pwned=/tmp/sbx-escape-7-pwned-$$
python3 - "$T/cases.json" "$pwned" <<'PY'
import json, sys
out, pwned = sys.argv[1], sys.argv[2]
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds
big = "A" * (128 * 1024 - 1)
pre = {  # refused before any policy is read: not audited
    "argc0": ([], ["-0"]),
    "only-argv0": ([], []),
    "no-run": (["--lang", "python"] + fds, []),
    "dash-run": (["-run", "--lang", "python"] + fds, []),
    "value-is-option": (["run", "--lang", "--policy", "default"] + fds, []),
    "single-dash": (["run", "-lang", "python"] + fds, []),
    "triple-dash": (["run", "---lang", "python"] + fds, []),
    "double-dash": (["run", "--", "--lang", "python"] + fds, []),
    "dash-value": (["run", "--lang", "-python"] + fds, []),
    "lang-128k": (["run", "--lang", big] + fds, []),
    "unknown-128k": (["run", "--" + big[:-2]] + base[1:], []),
    "args-1m": (base + [big] * 8, []),
    "nl-session": (base + ["--session", "a\nb"], []),
    "nl-lang": (["run", "--lang", "python\n"] + fds, []),
    "nl-name": (base + ["--name", "x.py\nimport os"], []),
    "nl-policy": (base + ["--policy", "default\nx"], []),
    "shell-lang": (["run", "--lang", "python;touch " + pwned] + fds, []),
    "shell-session": (base + ["--session", "$(touch %s)" % pwned], []),
    "shell-name": (base + ["--name", "`touch %s`.py" % pwned], []),
    "path-policy": (base + ["--policy", "../../../../etc/passwd"], []),
    "abs-policy": (base + ["--policy", "/etc/passwd"], []),
    "path-lang": (["run", "--lang", "../python"] + fds, []),
    "dot-name": (base + ["--name", "../../etc/x"], []),
    "unknown-config": (base + ["--config", "/etc/shadow"], []),
    "unknown-cgroup": (base + ["--cgroup-root", "/"], []),
    "unknown-db": (base + ["--db", "/tmp/x.db"], []),
    "unknown-env": (base + ["--env", "LD_PRELOAD=/tmp/x.so"], []),
    "repeat-lang": (base + ["--lang", "sh"], []),
    "repeat-code-fd": (base + ["--code-fd", "3"], []),
    "repeat-memory": (base + ["--memory", "1048576", "--memory", "4294967296"], []),
    "repeat-policy": (base + ["--policy", "default", "--policy", "default"], []),
    "mem-2^64": (base + ["--memory", "18446744073709551616"], []),
    "mem-huge": (base + ["--memory", "9" * 40], []),
    "mem-neg": (base + ["--memory", "-1"], []),
    "mem-hex": (base + ["--memory", "0x100000"], []),
    "mem-exp": (base + ["--memory", "1e9"], []),
    "mem-space": (base + ["--memory", " 1048576"], []),
    "mem-trailing": (base + ["--memory", "1048576 "], []),
    "mem-below-1m": (base + ["--memory", "1048575"], []),
    "timeout-0": (base + ["--timeout", "0"], []),
    "timeout-2^40+1": (base + ["--timeout", str(2**40 + 1)], []),
    "pids-0": (base + ["--pids", "0"], []),
    "attempt-wrap": (base + ["--attempt", str(2**32 + 1)], []),
    "attempt-11": (base + ["--attempt", "11"], []),
    "fd-wrap": (["run", "--lang", "python", "--code-fd", str(2**32 + 3), "--result-fd", "4"], []),
    "fd-stdin": (["run", "--lang", "python", "--code-fd", "0", "--result-fd", "4"], []),
    "fd-not-open": (["run", "--lang", "python", "--code-fd", "9", "--result-fd", "4"], []),
    "fd-same": (["run", "--lang", "python", "--code-fd", "3", "--result-fd", "3"], []),
    "parent-upper": (base + ["--parent", "A" * 32], []),
    "missing-value": (base + ["--pids"], []),
}
post = {  # refused after the policy: audited as sandbox_error
    "above-memory": base + ["--memory", str(4 << 30)],
    "above-timeout": base + ["--timeout", "3600000"],
    "above-pids": base + ["--pids", "100000"],
}
cases = [{"name": k, "argv": a, "raw": r} for k, (a, r) in pre.items()]
cases += [{"name": k, "argv": a} for k, a in post.items()]
cases.append({"name": "tighter", "argv": base + ["--memory", str(256 << 20), "--timeout", "5000", "--pids", "8"]})
json.dump(cases, open(out, "w"))
print(" ".join(pre), file=open(out + ".pre", "w"))
PY
before=$(runs_count)
t0=$(date +%s)
drive "$T/cases.json"
pre=$(cat "$T/cases.json.pre")
diag "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l); print(d["name"], d["rc"], d["stderr"].strip()[:110])' "$T/drive.out")"
bad=
for c in $pre; do [ "$(dcol "$c" 2)" = 125 ] || bad="$bad $c"; done
check "every malformed argv: exit 125 ($bad)" [ -z "$bad" ]
bad=
for c in $pre above-memory above-timeout above-pids; do
	[ "$(dcol "$c" 4)" = one ] || bad="$bad $c"
done
check "every refusal: exactly one 'sbx-helper: ' line on stderr ($bad)" [ -z "$bad" ]
bad=
for c in $pre; do [ "$(dcol "$c" 5)" = 0 ] || bad="$bad $c"; done
check "nothing ran: no result frame from a malformed argv, RAN printed once (tighter) ($bad)" \
	[ -z "$bad" -a "$(grep -c RAN "$T/drive.out")" = 1 ]
check "no shell ever ran a metacharacter payload" [ ! -e "$pwned" ]
check "the repeated and overflowing cases name their fault" sh -c '
	grep "\"name\": \"repeat-memory\"" "$1" | grep -q "given twice" &&
	grep "\"name\": \"mem-2^64\"" "$1" | grep -q "invalid value" &&
	grep "\"name\": \"attempt-wrap\"" "$1" | grep -q "invalid value" &&
	grep "\"name\": \"fd-wrap\"" "$1" | grep -q "invalid value" &&
	grep "\"name\": \"argc0\"" "$1" | grep -q "usage"' _ "$T/drive.out"
bad=
for c in above-memory above-timeout above-pids; do
	[ "$(dcol $c 2) $(dcol $c 6)" = "77 sandbox_error" ] || bad="$bad $c"
done
check "limits above the policy refused (77, sandbox_error, nothing ran) ($bad)" [ -z "$bad" ]
bad=
for c in above-memory above-timeout above-pids; do
	id=$(dcol $c 7)
	[ "$(end_outcome "$id")" = sandbox_error ] && cg_gone "$id" || bad="$bad $c"
done
check "above-policy refusals audited as sandbox_error, no cgroup ($bad)" [ -z "$bad" ]
check "a tighter request runs with the tighter limits" [ "$(dget tighter rc) $(dget tighter result.limits.memory_bytes) $(dget tighter result.limits.wall_time_ms) $(dget tighter result.limits.pids)" = "0 268435456 5000 8" ]
check "the tighter run is audited (ok)" [ "$(end_outcome "$(dcol tighter 7)")" = ok ]
check "malformed argvs were not audited: only the 4 runs past the policy are" [ "$(runs_count)" = $((before + 4)) ]
diag "$(grep -c . "$T/drive.out") direct helper calls in $(( $(date +%s) - t0 )) s"
# the client refuses the same above-policy request before it spawns anything
sbx_run run --json --memory 4G -c 'print(1)'
check "sbx run --memory above the policy: 77, limit_above_policy" [ "$rc|$(jget error.code)" = "77|limit_above_policy" ]
check "and audited as sandbox_error" [ "$(end_outcome "$(last_id)")" = sandbox_error ]
finish
