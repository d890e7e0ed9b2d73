#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 27: an artifact list cut short by the caller and reported
# complete. The collector copies /out as the caller (whose files these
# are), so the caller may SIGKILL it mid-copy (tests/escape/
# collector_kill.py); the recorder took the artifact channel's EOF for the
# end of /out: the result said outcome ok with a part of the 1000 files,
# "skipped": [] and the END record no word of it. The collector's last
# message is now SBX_COLLECT_DONE (common/proto.h), the supervisor sends it
# itself where no collector is due (/out empty), and the recorder reports
# a list without it incomplete: a skipped entry "." with reason
# "incomplete", skipped_reasons.incomplete, and the END record's
# artifacts_incomplete and artifacts_skipped.
# A collector the caller stops (SIGSTOP) instead, in a --workspace run,
# would never finish: the supervisor's 30 s wait for it ends in SIGKILL
# (helper/util.c wait_timeout), the run has no changeset (the result's
# changeset.missing, END's changeset_missing) and no changeset directory
# is left behind (tests 8-11).
#
# Defences checked by removing them:
# - the "incomplete" skip at the artifact channel's EOF in collect_one
#   (recorder/recorder.c): the killed run said ok with a part of the 1000
#   artifacts, "skipped": [] and no artifacts_incomplete in END: tests 2-4
#   failed.
# - the SIGKILL in wait_timeout (helper/util.c): the stopped collector
#   outlived its run, holding the upper layer's tmpfs: test 8 failed.
# A collector binary the caller can read would run dumpable (exec of a
# readable file; common/proto.h "collector"), so the supervisor refuses
# to start one not mode 0711-like (tests 12-13): without the mode check
# in start_collector (helper/main.c) the run returned its artifacts from
# a collector the caller could have ptraced, and test 12 failed.
. "$(dirname "$0")/lib.sh"
plan 13

cp "$ESC/collector_kill.py" "$T/collector_kill.py"
chmod 0644 "$T/collector_kill.py"
code='for i in range(1000):
    open("/out/f%04d.bin" % i, "wb").write(b"x" * 32768)
print("WROTE")'
killed=
for try in 1 2 3 4 5; do
	run_as sbxtest python3 "$T/collector_kill.py" "$SBX" "$T/out" "$code" > "$T/kill" 2>&1
	keep_results "$T/out"
	grep -q '^KILLED' "$T/kill" && [ "$(pj "$T/out" 'len(d["artifacts"])')" != 1000 ] && { killed=1; break; }
done
id=$(jget id)
diag "try $try: $(cat "$T/kill"); $(pj "$T/out" 'd["outcome"], len(d["artifacts"]), d["skipped_reasons"], d["skipped"][-1:]')"
check "the caller killed the collector mid-copy" [ -n "$killed" ]
check "the result says the artifacts are incomplete (skipped '.' incomplete)" \
	[ "$(pj "$T/out" '[s for s in d["skipped"] if s["reason"] == "incomplete"]')" = "[{'path': '.', 'reason': 'incomplete'}]" ]
check "skipped_reasons counts it, artifacts_skipped too" \
	[ "$(pj "$T/out" 'd["skipped_reasons"].get("incomplete"), d["artifacts_skipped"] >= 1')" = "(1, True)" ]
"$AUDIT" show --json "$id" > "$T/show" 2>&1
check "the END record says why the list is incomplete" \
	[ "$(pj "$T/show" '[r.get("artifacts_incomplete") for r in (d if isinstance(d, list) else d.get("records", [d])) if r.get("artifacts_incomplete")]')" = "['the collector ended before it had walked /out']" ]

# nothing killed: the same run is complete, with nothing said of it
sbx_run run --json -c "$code"
check "not killed: all 1000 artifacts, nothing skipped" \
	[ "$(pj "$T/out" 'len(d["artifacts"]), d["artifacts_skipped"], d["skipped"]')" = "(1000, 0, [])" ]
# /out empty: no collector is forked, and the list is complete
sbx_run run --json -c 'print(1)'
check "/out empty (no collector forked): complete, nothing skipped" \
	[ "$(jget outcome) $(jget artifacts_skipped) $(pj "$T/out" 'd["skipped"]')" = "ok 0 []" ]
audited_unchanged() { audited "$id" ok && host_unchanged; }
check "the killed run is audited (ok), the host unchanged" audited_unchanged
# a stopped collector of a --workspace run: killed at the supervisor's 30 s
X=$T/state
W=$T/ws
mkdir -p "$X" "$W"
chown -R sbxtest:sbxtest "$X" "$W"
chmod 0700 "$X"
code='for i in range(1000):
    open("/work/f%04d.bin" % i, "wb").write(b"x" * 32768)'
stopped=
for try in 1 2 3 4 5; do
	t0=$(date +%s)
	run_as sbxtest env XDG_STATE_HOME="$X" python3 "$T/collector_kill.py" --stop "$SBX" "$T/out" "$code" \
		--workspace "$W" > "$T/kill" 2>&1
	keep_results "$T/out"
	grep -q '^STOPPED' "$T/kill" && { stopped=1; break; }
done
id=$(jget id)
diag "try $try: $(cat "$T/kill") after $(($(date +%s) - t0)) s; changeset $(jget changeset)"
check "the stopped collector was killed by the supervisor (gone after its run)" grep -q '^STOPPED [0-9]* GONE$' "$T/kill"
grep -q '^STOPPED [0-9]* ALIVE$' "$T/kill" && kill -KILL "$(cut -d' ' -f2 "$T/kill")"
check "the result has no changeset, and says why" \
	[ "$(jget changeset.sha256) $(jget changeset.missing)" = "null no changeset: the collector ended before it sent one" ]
check "no changeset directory is left behind" sh -c '[ -z "$(ls -A "$1/sbx/changesets")" ]' _ "$X"
"$AUDIT" show --json "$id" > "$T/show" 2>&1
check "END says the changeset is missing, and why" \
	[ "$(pj "$T/show" '[r.get("changeset_missing") for r in d["records"] if r.get("kind") == "end"]')" = "['no changeset: the collector ended before it sent one']" ]
# sbx-collector installed readable by others: not started, the list incomplete
C=$P/libexec/sbx/sbx-collector
chmod 0755 "$C"
code='open("/out/a.txt", "w").write("x")'
sbx_run run --json -c "$code"
chmod 0711 "$C"
check "a readable sbx-collector is not started: no artifact, the list incomplete" \
	[ "$(pj "$T/out" 'len(d["artifacts"]), d["skipped_reasons"].get("incomplete")')" = "(0, 1)" ]
sbx_run run --json -c "$code"
check "mode 0711 again: the artifact is returned" [ "$(pj "$T/out" 'len(d["artifacts"])')" = "1" ]
finish
