#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 14: predictable paths. Every path sbx-helper creates or
# opens by name (helper/*.c, auditlog/auditlog.c):
#   <cgroup root>/<controller>/sbx and .../sbx/run-<128 random bits>
#     (cgroup.c; the run directories are flock()ed and mode 0700, umask 077)
#   /proc/<pid>/{setgroups,uid_map,gid_map} of its own unreaped child
#     (main.c; the pid cannot be recycled while unreaped)
#   $LOCALSTATEDIR/lib/sbx/audit.db and SQLite's -wal/-shm/-journal
#     (recorder, as _sbx; directory _sbx:sbx-audit 2750)
#   /tmp of a new mount namespace, where the sandbox's root is built
#     (mounts.c NEWROOT; a fresh tmpfs is mounted on it first)
#   $RUNSTATEDIR/sbx/cgroup, read on cgroup v2 hosts without cgroup_root
#     (cgplace.c; the same root-owned walk as sbx.conf; its attacks are in
#     tests/vm/delegation.t, here only that the attacker cannot create it)
# No temporary files, sockets or lock files by name otherwise (sockets are
# socketpairs, code and artifacts memfds). SQLite temporary files would go
# to /var/tmp or /tmp with random names opened O_EXCL; the audit appends do
# not need any.
# The attacker (sbxtest, in group sbx) pre-creates what it can: in the
# host's /tmp, the names the new root uses (etc, dev, proc, code, out, usr,
# tmp) as symlinks, a fifo and directories it owns: the run is unaffected
# and nothing lands in the attacker's directories. Everywhere else the test
# asserts that the attacker cannot pre-create or open the path at all,
# including flock()ing a live run's cgroup directory (a lock held by the
# attacker would make the stale-cgroup reaper treat the run as abandoned
# once the attacker lets go, or never reap a dead one).
#
# Defences checked by removing them:
# - the tmpfs mounted on NEWROOT (mounts.c setup_mounts): every run failed
#   (pivot_root needs a mount point) after its set-up had written the new
#   root's skeleton into the host's /tmp as the caller (removed by hand);
#   tests 4-8 and 10 failed.
# - the run directory's mode (a chmod 0755 after mkdir in create_v1): the
#   attacker opened the live run's directory in the pids hierarchy, whose
#   sbx/ parent an earlier root `mkdir -p` had left 0755 (test 5 failed;
#   its flock only failed because the supervisor already held the lock, so
#   in the window between mkdir and flock the attacker would have won).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 12
att() { run_as sbxtest sh -c "$1" >/dev/null 2>&1; }
created=
cleanup() { for x in $created; do rm -rf "/tmp/$x"; done; rm -rf "$T"; }
trap cleanup EXIT

bad=
for h in /sys/fs/cgroup/*/; do
	[ -d "$h/sbx" ] || { att "mkdir $h/sbx" && bad="$bad ${h}sbx"; continue; }
	att "mkdir $h/sbx/run-0123456789abcdef0123456789abcdef" && bad="$bad ${h}sbx/run-*"
	att "ln -s / $h/sbx/run-x" && bad="$bad ${h}sbx symlink"
done
check "the attacker cannot create cgroup directories or links ($bad)" [ -z "$bad" ]
check "the attacker cannot create a top-level sbx cgroup" sh -c '! setpriv --reuid=sbxtest --regid=sbxtest --init-groups mkdir /sys/fs/cgroup/memory/sbx-escape-$1 2>/dev/null' _ $$
rmdir /sys/fs/cgroup/memory/sbx-escape-$$ 2>/dev/null
V=$P/var/lib/sbx
sbx_run run -c 'pass' # the log exists from here on
bad=
for f in audit.db-wal audit.db-shm audit.db-journal audit.db.tmp; do
	att "ln -s /dev/null $V/$f" && bad="$bad $f"
	att "mkfifo $V/$f" && bad="$bad fifo:$f"
done
att "echo x >> $V/audit.db" && bad="$bad audit.db-writable"
check "the attacker cannot pre-create or write the audit log's files ($bad)" [ -z "$bad" ]
check "the attacker cannot create the cgroup v2 marker" \
	sh -c '! setpriv --reuid=sbxtest --regid=sbxtest --init-groups sh -c "mkdir -p $1/run/sbx && echo /sys/fs/cgroup/x > $1/run/sbx/cgroup" 2>/dev/null' _ "$P"

# a live run's cgroup directory
name=live-$$
printf 'echo started\nsleep 3\n' > "$T/$name.sh"; chmod 0644 "$T/$name.sh"
(run_as sbxtest "$SBX" run --lang sh "$T/$name.sh" > "$T/live.out" 2>&1) &
lp=$!
for i in $(seq 400); do grep -q started "$T/live.out" && break; sleep 0.05; done # 20 s: a loaded machine
id=$(ids_for "$name.sh")
dirs=$(ls -d /sys/fs/cgroup/*/sbx/run-"$id" 2>/dev/null)
diag "live run $id: $(echo $dirs)"
check "the live run's cgroup directories exist" [ -n "$id" -a -n "$dirs" ]
cat > "$T/lock.py" <<'PY'
import fcntl, os, sys
for d in sys.argv[1:]:
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        print("locked", d)
    except OSError as e:
        print("refused", d, e.strerror)
PY
chmod 0644 "$T/lock.py"
run_as sbxtest /usr/bin/python3 "$T/lock.py" $dirs > "$T/lock.out" 2>&1
diag "$(cat "$T/lock.out")"
check "the attacker can neither open nor flock a run's cgroup directory" \
	sh -c '[ "$(grep -c "^refused .* Permission denied$" "$1")" = "$(grep -c . "$1")" ] && grep -q refused "$1"' _ "$T/lock.out"
wait $lp
check "the live run ended normally, audited, no cgroup left" sh -c '[ "$1" = ok ] && ! ls -d /sys/fs/cgroup/*/sbx/run-$2 2>/dev/null | grep -q .' _ "$(end_outcome "$id")" "$id"

# The host's /tmp: whatever the attacker leaves there must not matter.
A=$T/att
mkdir -p "$A/etc" "$A/out" "$A/usr" "$A/proc" "$A/code"
ln -s /etc/shadow "$A/code/main.py"
chown -R sbxtest "$A"
plant() { # NAME KIND: as the attacker, only where nothing exists yet
	[ -e "/tmp/$1" ] || [ -L "/tmp/$1" ] && return
	case $2 in
	link) att "ln -s $A/$1 /tmp/$1" ;;
	fifo) att "mkfifo /tmp/$1" ;;
	dir) att "mkdir /tmp/$1 && ln -s /etc/shadow /tmp/$1/passwd && chmod 0777 /tmp/$1" ;;
	esac
	created="$created $1"
}
plant etc link; plant out link; plant proc link; plant dev fifo; plant code dir; plant usr dir
diag "planted in /tmp:$created"
cat > "$T/probe.py" <<'PY'
import os
print(open("/etc/passwd").readline().split(":")[0])
print(sorted(os.listdir("/code")), os.path.islink("/etc/passwd"), os.path.isdir("/usr/bin"))
open("/out/result.txt", "w").write("ok")
print(len([p for p in os.listdir("/proc") if p.isdigit()]))
PY
chmod 0644 "$T/probe.py"
sbx_run run --json "$T/probe.py"
diag "$(jget stdout)" "$(cat "$T/err")"
check "run with the attacker's /tmp entries: ok" [ "$rc $(jget outcome)" = "0 ok" ]
check "the sandbox's /etc, /code, /usr and /proc are its own" \
	[ "$(jget stdout | grep . | tr '\n' '|')" = "sbxtest|['probe.py'] False True|2|" ]
check "nothing landed in the attacker's directories" [ -z "$(find "$A" -mindepth 2 ! -name main.py)" ]
check "run audited (ok), no cgroup left" sh -c '[ "$1" = ok ] && ! ls -d /sys/fs/cgroup/*/sbx/run-$2 2>/dev/null | grep -q .' _ "$(end_outcome "$(jget id)")" "$(jget id)"
check "the attacker's /tmp entries are untouched (the host's /tmp was never written)" \
	sh -c 'for x in $1; do [ -e "/tmp/$x" ] || [ -L "/tmp/$x" ] || exit 1; done; [ -z "$(ls -A /tmp/code 2>/dev/null | grep -v passwd)" ]' _ "$created"
finish
