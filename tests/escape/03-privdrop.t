#!/bin/sh
# SPDX-License-Identifier: ISC
# Class 3, incomplete privilege drop. While a payload and its child run,
# every process in the run's cgroup is read from the host (/proc/PID/status)
# and from inside (/proc/self/status): all four uids and gids the caller's,
# no supplementary groups, every Cap* set empty, NoNewPrivs 1, Seccomp 2.
# The recorder (_sbx) and the artifact collector (the caller, seen at its
# pause point in the hooked helper) hold no capability and have
# no_new_privs; the supervisor is the run's only root process and the
# caller cannot signal it.
#
# Defence removed -> this test failed (checked by hand, see the report):
#   setresuid(0, 0, 0)/setresgid in prepare() (helper/main.c) removed: the
#     supervisor keeps the caller as real uid -> tests 5, 8, 9, 13 fail (the
#     caller's SIGSTOP/SIGTERM reach the supervisor and end the run)
#   cap_set_proc(none) in drop_privileges() (helper/sandbox.c) removed
#     -> tests 3 and 4 fail: CapPrm/CapEff non-zero in the sandbox
#   PR_SET_NO_NEW_PRIVS in drop_to() (helper/util.c) removed
#     -> test 7 fails: recorder NoNewPrivs 0
. "$(dirname "$0")/lib.sh"
plan 13
cu=$(id -u sbxtest); cg=$(id -g sbxtest); su=$(id -u _sbx)

cat > "$T/ids.py" <<'PY'
import json, os, time
def st(pid):
    return dict((k, v.strip()) for k, v in (l.split(":", 1) for l in open("/proc/%s/status" % pid).read().splitlines()))
child = os.fork()
if child == 0:
    time.sleep(3)
    os._exit(0)
time.sleep(0.05)
keys = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
print(json.dumps({p: {k: st(p)[k] for k in keys} for p in ("self", str(child), "1") if os.access("/proc/%s/status" % p, os.R_OK)}), flush=True)
time.sleep(1.2)  # the host looks at us meanwhile
os.kill(child, 9)
PY
chmod 644 "$T/ids.py"
run_as sbxtest "$SBX" run --json "$T/ids.py" > "$T/out" 2>"$T/err" &
bg=$!
procs 3 > "$T/procs.json"; prc=$?
sup=$(pj "$T/procs.json" 'd["supervisor"]["pid"]')
# the caller tries to signal the supervisor (0: the permission check only)
run_as sbxtest python3 -c 'import os, signal, sys
for s in (0, signal.SIGSTOP, signal.SIGTERM):
    try:
        os.kill(int(sys.argv[1]), s); print("sent", s)
    except OSError as e:
        print("refused", s, e.errno)' "$sup" > "$T/kill" 2>&1
grep -q '^sent 19' "$T/kill" && kill -CONT "$sup"
wait $bg
jget stdout > "$T/inside.json"
diag "$(cat "$T/kill")" "$(pj "$T/procs.json" '[(p["pid"], p["status"]["Uid"], p["status"]["CapEff"]) for p in d["children"] + d["sandbox"]]')"

check "found the run's processes (supervisor, cgroup with 3 processes)" [ "$prc" = 0 ]
# fs FILE KEYS PROCS: the distinct values of the /proc status fields KEYS
# (space separated) over the processes PROCS (a Python expression in d),
# one "K=V ..." line each
fs() { pj "$1" '"\n".join(sorted(set(" ".join(k + "=" + "_".join(p["status"][k].split()) for k in "'"$2"'".split()) for p in '"$3"')))'; }
check "host view: every sandboxed process has all four uids and gids of the caller" \
	[ "$(fs "$T/procs.json" "Uid Gid" 'd["sandbox"]')" = "Uid=${cu}_${cu}_${cu}_${cu} Gid=${cg}_${cg}_${cg}_${cg}" ]
caps="Groups= CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2"
check "host view: no supplementary groups, every Cap* 0, NoNewPrivs 1, Seccomp 2 (init, payload, child)" \
	[ "$(fs "$T/procs.json" "Groups CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp" 'd["sandbox"]')" = "$caps" ]
check "inside view: the same for init, the payload and its child" \
	[ "$(fs "$T/inside.json" "Uid Gid Groups CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp" '[{"status": v} for v in d.values() if len(d) == 3]')" = "Uid=${cu}_${cu}_${cu}_${cu} Gid=${cg}_${cg}_${cg}_${cg} $caps" ]
check "the supervisor is root in all four uids" [ "$(pj "$T/procs.json" 'd["supervisor"]["status"]["Uid"].split()')" = "['0', '0', '0', '0']" ]
check "it is the run's only process with a root uid or gid" \
	[ "$(pj "$T/procs.json" '[p["pid"] for p in d["children"] + d["sandbox"] if "0" in p["status"]["Uid"].split() + p["status"]["Gid"].split()]')" = "[]" ]
check "recorder: all uids _sbx, no capability, no_new_privs" \
	[ "$(fs "$T/procs.json" "Uid CapInh CapPrm CapEff CapAmb NoNewPrivs" '[p for p in d["children"] if p["status"]["Uid"].split()[0] == "'"$su"'"]')" = "Uid=${su}_${su}_${su}_${su} CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1" ]
check "the caller cannot signal the supervisor (0, SIGSTOP, SIGTERM: EPERM)" \
	[ "$(cat "$T/kill" | tr '\n' ' ')" = "refused 0 1 refused 19 1 refused 15 1 " ]
check "the run was not disturbed" [ "$(jget outcome)" = ok ]
id1=$(jget id)

# the collector lives a few milliseconds: look at it paused, in the hooked helper
run_as sbxtest "$BIN/phase-attack" "$HOOKED" > "$T/attack" 2>&1
col() { sed -n "s/^STATUS collector-dropped role=collector pid=[0-9]* $1 //p" "$T/attack"; }
check "collector: all uids and gids the caller's, no groups" [ "$(col Uid)|$(col Gid)|$(col Groups)" = "$cu $cu $cu $cu|$cg $cg $cg $cg|-" ]
check "collector: no capability, no_new_privs" [ "$(col CapInh) $(col CapPrm) $(col CapEff) $(col CapAmb) $(col NoNewPrivs)" = "0000000000000000 0000000000000000 0000000000000000 0000000000000000 1" ]
check "host unchanged" host_unchanged
both_audited() { audited "$id1" ok && audited "$(sed -n 's/^ID //p' "$T/attack")" ok; }
check "both runs audited" both_audited
finish
