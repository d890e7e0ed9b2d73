#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 18: the caller's RLIMIT_NOFILE against the helper's own
# processes (issue 11, finding 7). The recorder holds every artifact's
# memfd and every input at once; under a low hard limit recvmsg(2) drops
# the descriptors it cannot install (MSG_CTRUNC) and, before the fix, the
# recorder stopped reading and END said "artifacts_skipped 0" though
# files were lost. The caller (run directly, tests/escape/drive.py with
# bin/rawexec -r) sets a hard RLIMIT_NOFILE of 64, the issue's value, and
# of HELPER_NOFILE - 1, and the payload leaves 74 files in /out (more than
# the 64 descriptors the helper budgets for artifacts in flight: the
# recorder takes each file as it comes, issue 12): refused before anything
# runs, with one line that names the limit, what sbx needs and the ulimit
# to raise it. At exactly HELPER_NOFILE (160) the run is accepted and the
# budget holds with every input (32, through the client) and 74 files: all
# 74 artifacts arrive (the policy's artifact count cap is 1024), none is
# skipped, none is lost unreported.
#
# Defence checked by removing it: the RLIMIT_NOFILE need of raise_rlimits
# (helper/rlimits.c) back at 64 as on main: the hard limit of 64 was
# accepted, the payload left 74 files in /out, the result listed 53
# artifacts and "artifacts_skipped": 0; RLIMIT_NOFILE 159 was accepted:
# tests 1-4 failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 7

python3 - "$T/cases.json" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds
code = """for i in range(74):
    open("/out/f%02d.txt" % i, "w").write("x" * i)
print("RAN")"""
json.dump([{"name": "nofile-64", "argv": base, "raw": ["-r", "NOFILE:64:64"], "code": code},
           {"name": "nofile-159", "argv": base, "raw": ["-r", "NOFILE:159:159"], "code": code},
           {"name": "nofile-160", "argv": base, "raw": ["-r", "NOFILE:160:160"], "code": code}],
          open(sys.argv[1], "w"))
PY
before=$(runs_count)
drive "$T/cases.json"
diag "$(cut -f1-6 "$T/drive.tsv")" "$(dget nofile-64 stderr)"
check "hard RLIMIT_NOFILE 64: refused (125) with one line" [ "$(dcol nofile-64 2) $(dcol nofile-64 4)" = "125 one" ]
check "the line names the limit, what sbx needs and how to raise it" \
	sh -c 'echo "$1" | grep -qF "RLIMIT_NOFILE hard limit 64 set by the caller is too low for sbx (it needs 160): raise it (ulimit -H -n 160) and retry"' _ "$(dget nofile-64 stderr)"
check "one below the need (159): refused too, nothing recorded" \
	[ "$(dcol nofile-159 2) $(runs_count)" = "125 $((before + 1))" ]
# arts NAME: how many artifacts the result of case NAME lists
arts() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["name"] == sys.argv[2]: print(len((d["result"] or {}).get("artifacts") or []))' "$T/drive.out" "$1"; }
bad=
for c in nofile-64 nofile-159 nofile-160; do
	[ "$(dcol $c 2)" = 125 ] || [ $(($(arts $c) + $(dget $c result.artifacts_skipped))) = 74 ] ||
		bad="$bad $c:$(arts $c)+$(dget $c result.artifacts_skipped)"
done
check "no accepted run lost a file unreported: delivered + skipped = 74 ($bad)" [ -z "$bad" ]
check "at the need (160): all 74 artifacts delivered, none skipped" \
	[ "$(dcol nofile-160 6) $(arts nofile-160) $(dget nofile-160 result.artifacts_skipped)" = "ok 74 0" ]

# the whole budget at once, through the client: 32 inputs and 74 files
mkdir "$T/in"
for i in $(seq 32); do echo "input $i" > "$T/in/i$i.txt"; done
chmod -R a+rX "$T/in"
args=
for i in $(seq 32); do args="$args --input $T/in/i$i.txt"; done
mkdir -m 0777 "$T/arts"
run_as sbxtest sh -c "ulimit -n 160; exec $SBX run --json $args --artifacts $T/arts -c '
import os
for i in range(74): open(\"/out/f%02d.txt\" % i, \"w\").write(\"x\" * i)
print(len(os.listdir(\"/in\")))'" > "$T/out" 2>"$T/err"
diag "$(head -c 300 "$T/err")"
check "RLIMIT_NOFILE 160 with 32 inputs and 74 files: 32 inputs in, 74 artifacts out, none skipped" \
	[ "$(jget outcome) $(jget stdout | tr -d '\n') $(ls "$T/arts" | wc -l) $(jget artifacts_skipped)" = "ok 32 74 0" ]
both_audited() { audited "$1" ok && audited "$2" ok; }
check "the accepted runs are audited" both_audited "$(dcol nofile-160 7)" "$(jget id)"
finish
