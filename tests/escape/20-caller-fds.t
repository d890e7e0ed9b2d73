#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 20: root pinned by the caller's own descriptors, and how
# many helpers a caller may hold (issue 11, finding 4). The caller runs
# sbx-helper directly (tests/escape/pin.py) with fd 2, fd 1 or both a pipe
# that is already full and that it does not read, and a result socket it
# does not read either, and asks for what makes the helper talk: a usage
# error (fd 2, before the result socket is checked), a refused run (START
# and END recorded, then the supervisor's own error line), --dry-run and
# --check (fd 1). Every helper must exit within seconds, leave no root
# process behind, and what it had to say must still arrive once the
# caller reads (fd 1 and 2: written by a child that has become the
# caller; protocol v2: frames on the result socket). Then, with
# max_runs_per_user = 3 in sbx.conf: three concurrent runs go, a fourth is
# refused with one line and nothing is recorded, a slot comes back when
# its run ends, even when root SIGKILLs the supervisor.
#
# Defences checked by removing them:
# - root writing to fd 1 or 2 itself (main before the fix, msg_as_caller
#   in helper/msg.c now forks a child that becomes the caller): the usage
#   error, the refused run and --dry-run stayed blocked in write(2) until
#   pin.py gave up after 8 s and read the pipe: test 1 failed (main's
#   --check wrote nothing before its output was complete, then blocked,
#   and lost it to the timeout: test 3 failed). With the child killed after
#   its second instead of left to finish (wait_timeout for wait_or_leave),
#   the usage line and --check's output were lost: test 3 failed.
# - take_run_slot() not called in prepare() (helper/main.c), the key
#   still parsed: the fourth run went ahead: test 6 failed. (Main itself
#   refuses the unknown key, so every run of that part fails there.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 8
cp "$ESC/pin.py" "$T/pin.py"
chmod 0644 "$T/pin.py"

python3 - "$T/cases.json" <<'PY'
import json, sys
fds = ["--code-fd", "3", "--result-fd", "4"]
base = ["run", "--lang", "python"] + fds
json.dump([
    {"name": "usage", "argv": ["run", "--no-such-option"], "full": ["2"]},
    {"name": "refused", "argv": base + ["--timeout", "999999999"], "full": ["2"]},
    {"name": "dry-run", "argv": base + ["--dry-run"], "full": ["1", "2"]},
    {"name": "check", "argv": ["--check"], "full": ["1", "2"]},
], open(sys.argv[1], "w"))
PY
chmod 0644 "$T/cases.json"
before=$(runs_count)
run_as sbxtest /usr/bin/python3 "$T/pin.py" "$HELPER" "$T/cases.json" > "$T/pin.out"
diag "$(cat "$T/pin.out")"
# supervisors: root sbx-helper processes of this install whose parent is not one
supervisors() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$HELPER" ] && [ "$(stat -c %u "$p")" = 0 ] || continue
		pp=$(awk '{print $4}' "$p/stat")
		[ "$(readlink "/proc/$pp/exe" 2>/dev/null)" = "$HELPER" ] || echo "${p#/proc/}"
	done
}
pin() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["name"] == sys.argv[2]: print(eval(sys.argv[3]))' "$T/pin.out" "$1" "$2"; }
bad=
for c in usage refused dry-run check; do [ "$(pin $c 'd["exited"] and d["seconds"] < 4')" = True ] || bad="$bad $c"; done
check "full stdout/stderr pipes: every helper exited within 4 s ($bad)" [ -z "$bad" ]
check "no root process of this install left" [ -z "$(supervisors)" ]
bad=
[ "$(pin usage 'd["out"]["2"].startswith("sbx-helper: ") and "--no-such-option" in d["out"]["2"]')" = True ] || bad="$bad usage"
[ "$(pin refused '"wall" in d["out"]["sock"] or "timeout" in d["out"]["sock"]')" = True ] || bad="$bad refused"
[ "$(pin dry-run '"default" in d["out"]["sock"]')" = True ] || bad="$bad dry-run"
[ "$(pin check '"ok: helper-root" in d["out"]["1"]')" = True ] || bad="$bad check"
check "what the helper had to say arrived once the caller read ($bad)" [ -z "$bad" ]
check "the refused run is recorded (START and END), the others are not" \
	[ "$(runs_count) $(pin refused 'd["rc"]')" = "$((before + 1)) 77" ]

# max_runs_per_user
CONF=$P/etc/sbx/sbx.conf
cp -p "$CONF" "$T/conf.save"
trap 'cp -p "$T/conf.save" "$CONF"; rm -rf "$T"' EXIT
sed -i '/^max_runs_per_user *=/d; s/^\[sbx\]$/[sbx]\nmax_runs_per_user = 3/' "$CONF"
for i in 1 2 3; do
	run_as sbxtest "$SBX" run --json -c 'import time; time.sleep(3); print("done")' > "$T/slot.$i" 2>&1 &
done
for i in $(seq 50); do [ "$(supervisors | wc -l)" -ge 3 ] && break; sleep 0.1; done
sbx_run run -c 'print("fourth")'
check "three runs go at once" [ "$(supervisors | wc -l)" = 3 ]
check "a fourth: refused (125) with one line naming the user, the bound and the key" \
	[ "$rc $(cat "$T/err")" = "125 sbx-helper: user sbxtest already has 3 runs going, the most sbx.conf allows (max_runs_per_user); wait for one to end" ]
wait
check "the three runs were not disturbed" sh -c 'for i in 1 2 3; do grep -q "\"stdout\": *\"done" "$0/slot.$i" || exit 1; done' "$T"
# a supervisor root kills with SIGKILL gives its slot back
for i in 1 2 3; do run_as sbxtest "$SBX" run -c 'import time; time.sleep(5)' > /dev/null 2>&1 & done
for i in $(seq 50); do [ "$(supervisors | wc -l)" -ge 3 ] && break; sleep 0.1; done
victim=$(supervisors | head -1)
kill -KILL "$victim"
for i in $(seq 50); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
sleep 0.5 # its recorder writes END and exits
sbx_run run -c 'print("after")'
check "a slot comes back when root SIGKILLs a supervisor" [ "$rc $(cat "$T/out")" = "0 after" ]
wait
finish
