#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 15: signals. The caller sends SIGKILL, SIGTERM and SIGSTOP
# to the client right after it starts, mid-run and while the payload
# writes output; closes the client's terminal (SIGHUP through a pty); kills
# the client's whole session; and signals the helper's processes: SIGSTOP
# and SIGKILL to the sandbox's init (the caller's uid, so allowed), STOP,
# TERM and KILL to the supervisor (root) and the recorder (_sbx), which
# must be refused (EPERM). The payload ignores SIGTERM/SIGHUP/SIGINT and
# leaves a double-forked child in its own session. tests/escape/signals.py
# runs the 14 scenarios at once. Afterwards: no process of any of them is
# left on the host (found by the marker in their command line), no cgroup
# of theirs is left, and each run that started is recorded with START and
# END and the expected outcome (a client killed within 20 ms of its start
# may die before it has started the helper: then nothing ran and nothing
# is recorded). The supervisor cannot be signalled by the caller at all
# (ruid = euid = suid = 0), so "START reported incomplete and later
# reaped" cannot be provoked by the caller; tests/integration/08-stale-
# cgroup.t covers a supervisor that root killed.
#
# Defences checked by removing them (both at once; each shows in its own
# test):
# - the supervisor's reaction to the control fd's EOF (main.c supervise:
#   kill_sandbox "client") disabled: after SIGKILL of the client or of its
#   session the sandbox ran on to the wall limit (outcome timeout instead
#   of signal): test 7 failed.
# - the 2 s grace after a forwarded SIGTERM (main.c supervise) disabled:
#   SIGTERM to the client and its terminal closing left the SIGTERM-proof
#   payload running to the wall limit: test 8 failed.
# Nothing survived the wall limit even then, which the other tests show.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 12
mark=sig$$
cp "$SBX_SRCDIR/tests/escape/signals.py" "$T/signals.py"
python3 "$T/signals.py" "$SBX" "$HELPER" "$T" "$mark" > "$T/sig" 2>"$T/sig.err"
diag "$(cat "$T/sig" "$T/sig.err")"
# the sandboxes may need a moment to go after the last client did
for i in $(seq 50); do [ -z "$(marked "$mark-")" ] && break; sleep 0.1; done
left=$(marked "$mark-")
[ -n "$left" ] && diag "left: $(ps -o pid,user,args -p "$(echo $left | tr ' ' ,)")"
runs_by_code "$mark-" > "$T/runs"
diag "$(cat "$T/runs")"
field() { awk -v n="$mark-$1.sh" -v c="$2" '$1 == n {print $c}' "$T/runs"; }

check "every scenario ran to its end" [ "$(grep -c . "$T/sig")" = 14 -a -z "$(grep -E ' (lost|alive)' "$T/sig")" ]
check "no process of any scenario left on the host" [ -z "$left" ]
bad=
while read -r file id outcome wall; do
	cg_gone "$id" || bad="$bad $file"
done < "$T/runs"
check "no cgroup left by any run ($bad)" [ -z "$bad" ]
check "no run left without its END record" [ -z "$(awk '$3 == "incomplete"' "$T/runs")" ]
bad=
for s in kill-client-mid kill-client-output term-client-mid stop-client-mid stop-client-output hup-pty-mid \
	hup-pty-output kill-session-output stop-init-mid kill-init-mid helper-signals-mid; do
	[ "$(awk -v n="$mark-$s.sh" '$1 == n' "$T/runs" | grep -c .)" = 1 ] || bad="$bad $s"
done
check "each mid-run scenario recorded exactly one run ($bad)" [ -z "$bad" ]
bad=
for s in kill-client-start term-client-start kill-session-start; do
	cnt=$(awk -v n="$mark-$s.sh" '$1 == n' "$T/runs" | grep -c .)
	[ "$cnt" -le 1 ] || bad="$bad $s"
done
check "a client killed at its start: at most one run, recorded in full ($bad)" [ -z "$bad" ]
bad=
for s in kill-client-mid kill-client-output kill-session-output; do
	[ "$(field $s 3)" = signal ] || bad="$bad $s:$(field $s 3)"
done
check "client or session SIGKILLed: the sandbox is killed at once (outcome signal) ($bad)" [ -z "$bad" ]
bad=
for s in term-client-mid hup-pty-mid hup-pty-output; do
	w=$(field $s 4)
	[ "$(field $s 3)" = signal ] && [ "${w:-99999}" -lt 4500 ] || bad="$bad $s:$(field $s 3):$w"
done
check "SIGTERM or a closed terminal: the SIGTERM-proof payload is killed after the grace, before the wall limit ($bad)" [ -z "$bad" ]
check "client stopped: the run still ends at the wall limit (timeout)" \
	[ "$(field stop-client-mid 3) $(field stop-client-output 3)" = "timeout timeout" ]
check "sandbox init stopped by the caller: timeout; killed: sandbox_error" \
	[ "$(field stop-init-mid 3) $(field kill-init-mid 3)" = "timeout sandbox_error" ]
check "the caller cannot STOP, TERM or KILL the supervisor or the recorder" \
	[ "$(awk '$1 == "helper-signals-mid" {print $3}' "$T/sig")" = "EPERM,EPERM,EPERM,EPERM,EPERM,EPERM" ]
check "... and that run went on to its wall limit, recorded" [ "$(field helper-signals-mid 3)" = timeout ]
finish
