#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 16: the caller's per-user kernel state seen from inside
# (issue 11, finding 8). The caller joins a session keyring of its own and
# puts three keys in the way a desktop session would: "aws-prod-token"
# with the add_key(2) default permissions (possessor all, user view), a
# possessor-only key (no user bits), and one in its user keyring. It also
# holds a SysV shared memory segment and an flock(2) on the host. The
# payload then reads /proc/keys, /proc/key-users, /proc/sysvipc/* and
# /proc/locks and lists /proc. Nothing of the caller's may show; the
# payload's session keyring must be a fresh, empty one (seen from the host,
# as the caller: "keyring sbx-run-ID: empty" while the run lives, ID the
# run's id); the run is audited.
#
# Defences checked by removing them:
# - on main before the fix (no mask, no new session keyring): the payload
#   printed all three keys with type, description and size (USR_VIEW lets
#   the same uid view a key it does not possess) and the caller's
#   /proc/key-users line: test 2 failed; no sbx-run-ID keyring: test 3
#   failed.
# - mask_proc() (helper/mounts.c) not called, the new keyring kept: the
#   user-view key and the user keyring's key showed, the possessor-only key
#   did not (the sandbox no longer possesses the caller's keyring): test 2
#   failed.
# - new_session_keyring() (helper/sandbox.c) not called, the mask kept:
#   /proc/keys stayed empty inside, but no fresh keyring showed on the host
#   (the payload held the caller's): test 3 failed.
# The IPC and pid namespaces hide the shm segment, the lock and the host's
# processes (tests 4 and 5; without CLONE_NEWIPC the segment showed, see
# 10-kernel-objects.t).
. "$(dirname "$0")/lib.sh"
plan 7

cat > "$T/keys.py" <<'PY'
# keys.py OUT CMD...: as the caller, a session keyring with three keys, a
# SysV segment and a lock, then CMD; the user keyring's key and the
# segment are removed afterwards (they outlive the process otherwise)
import ctypes, fcntl, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL, SHMGET = 248, 250, 29
def add(desc, ring):
    k = libc.syscall(ADD_KEY, b"user", desc.encode(), b"s3cret", 6, ctypes.c_int(ring))
    if k < 0: sys.exit("add_key %s: errno %d" % (desc, ctypes.get_errno()))
    return k
libc.syscall(KEYCTL, 1, b"caller-session")                    # KEYCTL_JOIN_SESSION_KEYRING
add("aws-prod-token:sbxtest", -3)                              # KEY_SPEC_SESSION_KEYRING
libc.syscall(KEYCTL, 5, add("possessed-only:sbxtest", -3), 0x3f000000)  # KEYCTL_SETPERM
ukey = add("user-ring-key:sbxtest", -4)                        # KEY_SPEC_USER_KEYRING
shm = libc.syscall(SHMGET, 0x5b7e57, 4096, 0o1600)     # IPC_CREAT | 0600
lock = open(sys.argv[1] + ".lock", "w"); fcntl.flock(lock, fcntl.LOCK_EX)
with open(sys.argv[1] + ".host", "w") as f:
    f.write(open("/proc/keys").read()); f.write("shm %d\n" % shm)
rc = subprocess.call(sys.argv[2:])
libc.syscall(KEYCTL, 3, ukey)                                  # KEYCTL_REVOKE
libc.syscall(31, shm, 0, None)                                 # shmctl IPC_RMID
sys.exit(rc)
PY
chmod 0644 "$T/keys.py"
probe='cat /proc/keys /proc/key-users; echo "ipc:"; cat /proc/sysvipc/shm; echo "locks:"; cat /proc/locks
echo "pids: $(ls /proc | grep -E "^[0-9]+$" | tr "\n" " ")"; sleep 2'
# keyrings of other runs of the same user (a live session, a parallel
# test) are visible too: wait for one that was not there before
run_as sbxtest cat /proc/keys | grep -o 'sbx-run-[0-9a-f]*' > "$T/before" || true
run_as sbxtest /usr/bin/python3 "$T/keys.py" "$T/k" "$SBX" run --json --lang sh -c "$probe" > "$T/out" 2>"$T/err" &
job=$!
# while the payload sleeps: the caller's view of its keys on the host
for i in $(seq 50); do
	run_as sbxtest cat /proc/keys > "$T/during"
	grep -o 'sbx-run-[0-9a-f]*' "$T/during" | grep -qvxFf "$T/before" && break
	sleep 0.1
done
wait $job
id=$(jget id)
jget stdout > "$T/inside"
diag "inside:" "$(cat "$T/inside")" "host, during the run:" "$(cat "$T/during")"

check "the caller's keys and segment are really there on the host" \
	sh -c 'grep -q aws-prod-token "$1" && grep -q possessed-only "$1" && grep -q user-ring-key "$1" && ! grep -q "^shm -" "$1"' _ "$T/k.host"
check "no key, key user or keyring of the caller's in /proc/keys or /proc/key-users inside" \
	sh -c 'grep -q "^ipc:" "$1" && [ -z "$(sed "/^ipc:/,\$d" "$1")" ]' _ "$T/inside"
check "the payload's session keyring is a fresh, empty one named after the run" \
	grep -Eq "keyring +sbx-run-$id: empty\$" "$T/during"
check "the caller's SysV segment and lock are not visible inside" \
	sh -c '! sed -n "/^ipc:/,/^pids:/p" "$1" | grep -Eq "^ *[0-9]+ |FLOCK"' _ "$T/inside"
check "/proc/locks is masked inside (it lists every user's locks on the host, run slots among them)" \
	sh -c '[ -z "$(sed -n "/^locks:/,/^pids:/p" "$1" | sed "1d;\$d")" ]' _ "$T/inside"
check "only the sandbox's processes in /proc" \
	sh -c 'for p in $(sed -n "s/^pids: //p" "$1"); do [ "$p" -lt 16 ] || exit 1; done; grep -q "^pids: 1 " "$1"' _ "$T/inside"
check "the run is audited" audited "$id" ok
finish
