#!/bin/sh
# SPDX-License-Identifier: ISC
# `sbx session rm` against a payload that races it (security review: the
# old nftw-based rm deleted and chmod'ed the caller's files outside the
# session when the payload swapped a directory for a symlink mid-walk).
#
# Part 1 runs the race payload (after /tmp/rev/race_payload.py and
# race2.py, shortened to ~5 s) in a session and keeps trying `sbx session
# rm` meanwhile: rm must refuse (exit 75, one line) and the caller's victim
# directory outside the session must stay intact. Part 2 removes the
# session after the run, with links to the victim planted at every level.
#
# Verified to fail on the old code: with the sbx client built from 1b5151b
# (session_rm() as nftw + chmod()/unlink() by full path, no lock; that
# binary copied over $P/bin/sbx), checks 2-4 fail: every rm attempt ran
# during the payload instead of being refused, and the walk, sent through
# the swapped-in symlink, deleted the caller's victim files (two runs: 2,618
# and 2,966 of 3,000 deleted); the later checks fail with it (no in-use
# state, no lock). The remover alone, racing without the lock, is tested in
# tests/unit/test_rmtree.c.
. "$(dirname "$0")/lib.sh"
plan 16
X=$T/xdg
V=$T/victim
mkdir -p "$X" "$V/sub" && chown -R sbxtest "$X" "$V" && chmod 0700 "$X" "$V" "$V/sub"
python3 -c 'import sys
for i in range(3000): open("%s/f%d" % (sys.argv[1], i), "w").close()' "$V"
chown -R sbxtest "$V"
S=$X/sbx/sessions/race
srun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
victim_intact() {
	[ "$(find "$V" -mindepth 1 | wc -l)" = 3001 ] && [ "$(stat -c %a "$V")" = 700 ] &&
		[ "$(stat -c %a "$V/sub")" = 700 ] && [ "$(stat -c %U "$V")" = sbxtest ]
}

# --- part 1: rm while the payload runs ---
cat > "$T/race.py" <<EOF
import ctypes, os, time
V = "$V"
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("/work/d")
for i in range(3000):
    open("/work/d/f%d" % i, "w").close()
os.mkdir("/work/x")
for i in range(100):
    os.mkdir("/work/x/d%d" % i); os.chmod("/work/x/d%d" % i, 0o777)
    os.symlink(V, "/work/x/l%d" % i)
print("ready", flush=True)
t = time.time(); swapped = False
while time.time() - t < 5:
    if not swapped and len(os.listdir("/work/d")) < 3000:   # rm has started on d
        os.rename("/work/d", "/work/d-moved"); os.symlink(V, "/work/d"); swapped = True
        print("swapped", flush=True)
    for i in range(100):                                     # as race2.py
        libc.renameat2(-100, b"/work/x/d%d" % i, -100, b"/work/x/l%d" % i, 2)
print("done", flush=True)
time.sleep(1)  # the run, and its hold on the session, goes on: rm's last try cannot race the end
EOF
chmod 644 "$T/race.py"
run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" run --session race "$T/race.py" >"$T/race.out" 2>"$T/race.err" </dev/null &
RACE=$!
for _ in $(seq 100); do grep -q ready "$T/race.out" 2>/dev/null && break; sleep 0.1; done
check "payload: set up and racing" grep -q ready "$T/race.out"
tries=0 refused=0 other=
while kill -0 "$RACE" 2>/dev/null && ! grep -q done "$T/race.out" && [ "$tries" -lt 20 ]; do
	srun session rm race
	tries=$((tries + 1))
	if [ "$rc" = 75 ] && [ "$(cat "$T/err")" = "sbx: session rm: race is in use by a running sbx run" ]; then
		refused=$((refused + 1))
	else
		other="$other rc=$rc:$(head -c 200 "$T/err")"
	fi
	sleep 0.2
done
wait "$RACE"
rrc=$?
diag "rm attempted $tries times while the payload ran, refused $refused" ${other:+"other:$other"}
check "rm while the run holds the session: every attempt refused, exit 75, one line" \
	sh -c '[ "$1" -gt 0 ] && [ "$2" = "$1" ]' _ "$tries" "$refused"
diag "victim after part 1: $(find "$V" -mindepth 1 | wc -l) of 3001 entries, mode $(stat -c %a "$V"), sub $(stat -c %a "$V/sub")"
check "rm while running: the victim outside the session is intact (3000 files, 0700)" victim_intact
check "rm while running: the session is still there" [ -d "$S/x" ]
check "the run itself finished normally" sh -c '[ "$1" = 0 ] && grep -q done "$2"' _ "$rrc" "$T/race.out"

# --- part 2: rm after the run, links to the victim planted everywhere ---
ln -s "$V" "$S/plant"
ln -s "$V/f0" "$S/x/plantfile"
mkdir "$S/ro" && ln -s "$V" "$S/ro/plant" && ln "$V/f1" "$S/ro/hard" && chmod 0500 "$S/ro"
mkdir -p "$S/shut/in" && ln -s "$V/sub" "$S/shut/in/plant" && chmod 0000 "$S/shut/in" "$S/shut"
chown -h -R sbxtest "$S" 2>/dev/null
srun session ls
check "session ls: the idle session is not in use" sh -c '! grep -q "in use" "$1"' _ "$T/out"
srun session rm race
check "rm after the run: exit 0, nothing printed" sh -c '[ "$1" = 0 ] && [ ! -s "$2" ]' _ "$rc" "$T/err"
check "rm after the run: the session is gone" sh -c '[ ! -e "$1" ] && [ ! -L "$1" ]' _ "$S"
check "rm after the run: the victim is intact (links are removed, never followed)" victim_intact
check "rm after the run: the hard-linked file keeps its content and one link" \
	[ "$(stat -c %h "$V/f1")" = 1 ]
check "rm after the run: other sessions' directory intact" [ -d "$X/sbx/sessions" ]

# --- the lock, without a sandbox: flock(1) stands in for a run ---
mkdir -p "$X/sbx/sessions/held" && chown sbxtest "$X/sbx/sessions/held" && chmod 0700 "$X/sbx/sessions/held"
run_as sbxtest flock -s "$X/sbx/sessions/held" sleep 3 &
HOLD=$!
sleep 0.5
srun session ls
check "session ls: a session locked by a run shows as in use" grep -Eq "^held .* in use" "$T/out"
srun session ls --json
check "session ls --json: in_use true" [ "$(jget 0.in_use)" = true ]
srun session rm held
check "rm of a held session: 75, says it is in use" \
	sh -c '[ "$1" = 75 ] && grep -qx "sbx: session rm: held is in use by a running sbx run" "$2"' _ "$rc" "$T/err"
wait "$HOLD"
# an exclusive holder (as rm is) makes a run wait, not fail
run_as sbxtest flock -x "$X/sbx/sessions/held" sleep 2 &
HOLD=$!
sleep 0.5
start=$(date +%s)
srun run --session held -c 'print("ran")'
end=$(date +%s)
wait "$HOLD"
check "run while rm holds the session: waits for it, then runs" \
	sh -c '[ "$1" = 0 ] && [ "$(cat "$2")" = ran ] && [ $(($4 - $3)) -ge 1 ]' _ "$rc" "$T/out" "$start" "$end"
srun session rm held
check "rm once the holder is gone: removed" sh -c '[ "$1" = 0 ] && [ ! -e "$2" ]' _ "$rc" "$X/sbx/sessions/held"
finish
