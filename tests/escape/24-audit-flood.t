#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 24: the audit log filled by one user (issue 11, finding 5).
# The log is _sbx's, so no user's disk quota applies, and a full log makes
# every user's runs fail closed. The caller floods the helper with requests
# that carry 200 KB of code each and are refused after the code is read
# (an --input-fd that is not a memfd), then runs accepted code past the
# day's budget. With max_requests_per_minute = 5 and audit_code_per_day =
# 300K in sbx.conf: five refusals are recorded, by size and digest, never
# by text (the log grows by kilobytes, not by the 2.4 MB sent, and the
# code search index finds none of it); the rest are refused with one line
# and only counted, the count (since boot) showing in the user's next
# record; the run
# past the code budget is refused with one line and recorded by size; the
# doctor reports the space left.
#
# Defences checked by removing them:
# - quota_request() (helper/quota.c) not called in prepare(): all twelve
#   requests were recorded: tests 2 and 3 failed;
# - the recorder storing a refused run's code text (main before protocol
#   v2 recorded the full code of every refusal that got as far as reading
#   it, FTS-indexed): tests 4 and 5 failed (the log grew by 2.4 MB).
. "$(dirname "$0")/lib.sh"
plan 10
CONF=$P/etc/sbx/sbx.conf
DB=$P/var/lib/sbx/audit.db
STATE=$P/run/sbx/users/$(id -u sbxtest)
cp -p "$CONF" "$T/conf.save"
trap 'cp -p "$T/conf.save" "$CONF"; rm -f "$STATE"; rm -rf "$T"' EXIT
sbx_run run -c pass # the audit log exists from here on
sed -i '/^max_requests_per_minute *=/d; /^audit_code_per_day *=/d
	s/^\[sbx\]$/[sbx]\nmax_requests_per_minute = 5\naudit_code_per_day = 300K/' "$CONF"
# the user's counters start afresh, as at boot (no run of sbxtest is going)
rm -f "$STATE"
# a whole minute window of CLOCK_BOOTTIME (/proc/uptime) for the flood
s=$(cut -d. -f1 /proc/uptime)
[ $((s % 60)) -lt 30 ] || sleep $((60 - s % 60))

cat > "$T/flood.py" <<'PY'
# flood.py HELPER N: N requests with 200 KB of code refused after the code
# is read (--input-fd /dev/null, not a memfd); one JSON line each
# (the helper's messages: frames on the result socket, or fd 2 before it)
import fcntl, json, os, socket, subprocess, sys
import sbxframes as F
helper, n = sys.argv[1], int(sys.argv[2])
code = b"# esc24-flood-marker\n" + b"x = 1\n" * 33330
for i in range(n):
    m = os.memfd_create("c", os.MFD_ALLOW_SEALING)
    os.write(m, code)
    fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    res, peer = socket.socketpair()
    nul = os.open("/dev/null", os.O_RDONLY)
    fds = {3: m, 4: peer.fileno(), 6: nul}
    argv = [helper, "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4",
            "--input-fd", "6", "--input-name", "x"]
    def setup():
        F.place_fds(fds)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=setup, close_fds=False, env={})
    peer.close(); os.close(m); os.close(nul)
    data = F.read_all(res, 30)
    out, err = p.communicate(timeout=30)
    res.close()
    msgs = err.decode(errors="replace") + "".join(x + "\n" for x in F.messages(data))
    print(json.dumps({"rc": p.returncode, "stderr": msgs}), flush=True)
PY
chmod 0644 "$T/flood.py"
# refused after the policy is loaded, a request is a run with START and END
runs() { "$AUDIT" list --limit 0 2>/dev/null | awk 'NR > 1' | wc -l; }
before=$(runs)
# the database and its write-ahead log together (checkpointed every 64
# pages, so new records may sit in the -wal file)
logsize() { echo $(( $(stat -c %s "$DB") + $(stat -c %s "$DB-wal" 2>/dev/null || echo 0) )); }
size0=$(logsize)
run_as sbxtest /usr/bin/python3 "$T/flood.py" "$P/libexec/sbx/sbx-helper" 12 > "$T/flood" 2>&1
diag "$(sort "$T/flood" | uniq -c | cut -c1-300)"
check "every request of the flood refused (125)" [ "$(grep -c '"rc": 125' "$T/flood")" = 12 ]
check "five recorded as refusals, no more" [ "$(runs)" = "$((before + 5))" ]
check "seven refused with one line naming the user, the bound and the key, not recorded" \
	[ "$(grep -c 'user sbxtest made 5 requests this minute, the most sbx.conf allows (max_requests_per_minute); this one is refused and only counted in the audit log; wait a minute' "$T/flood")" = 7 ]
size1=$(logsize)
diag "audit log: $size0 -> $size1 bytes"
check "the log grew by kilobytes, not by the 2.4 MB of code sent" [ $((size1 - size0)) -lt 400000 ]
"$AUDIT" search --code-contains esc24-flood-marker > "$T/search" 2>&1
check "no refused code in the log or its search index" sh -c '! grep -q "^[0-9a-f]\{32\} " "$1"' _ "$T/search"
id=$("$AUDIT" list --limit 1 | awk 'NR == 2 { print $1 }')
"$AUDIT" show --json "$id" > "$T/ref.json" 2>&1
check "a refusal is recorded by the code's size and SHA-256" python3 -c 'import json, sys, hashlib
d = json.load(open(sys.argv[1]))
r = d["start"]
code = b"# esc24-flood-marker\n" + b"x = 1\n" * 33330
sys.exit(0 if r.get("code_bytes") == len(code) and r.get("refused_code_sha256") == hashlib.sha256(code).hexdigest()
         and r.get("code_sha256") == hashlib.sha256(b"").hexdigest() else 1)' "$T/ref.json"

# the next minute: the count of what went unrecorded is in the next record
s=$(cut -d. -f1 /proc/uptime)
sleep $((60 - s % 60))
sbx_run run --json -c 'print("x" * 10)'
id=$(jget id)
"$AUDIT" show --json "$id" > "$T/start.json" 2>&1
check "the next record says seven requests went unrecorded before it" python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["start"].get("unrecorded_refusals") == 7 else 1)' "$T/start.json"

# the day's code budget: 200 KB goes, the next 200 KB does not
python3 -c 'print("# esc24-budget\n" + "y = 2\n" * 33330)' > "$T/big.py"
chmod 0644 "$T/big.py"
sbx_run run "$T/big.py"
check "code within the day's budget runs" [ "$rc" = 0 ]
sbx_run run "$T/big.py"
check "code past audit_code_per_day: refused (77, policy_denied) with one line naming the key" sh -c '[ "$1" = 77 ] &&
	grep -q "user sbxtest.s runs put .* of code into the audit log today and this one has $3 bytes: over the 300K sbx.conf allows (audit_code_per_day)" "$2"' _ "$rc" "$T/err" "$(stat -c %s "$T/big.py")"
run_as sbxtest "$SBX" doctor > "$T/doctor" 2>&1
check "sbx doctor reports the space left for the audit log" grep -q "audit-space.* free of .* on the file system of $P/var/lib/sbx" "$T/doctor"
finish
