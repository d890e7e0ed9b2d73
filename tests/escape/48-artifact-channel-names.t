#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 48: a file name in /out that is a word of the artifact
# channel. The collector sends each regular file of /out as its path with
# a memfd (common/proto.h "collector -> recorder"), and the manifest of a
# --workspace run as the single byte SBX_COLLECT_CHANGESET (0x04) with a
# memfd. A file the payload names $'\x04' was sent as exactly that: the
# recorder (collect_one) took it for the manifest, before it checked the
# name as an artifact's. So the file was neither returned nor listed as
# skipped in a list reported complete (tests 1-2), and in a --workspace
# run whose real manifest was not sent (here: the caller's changeset
# directory already holds "files", so the collector sends only a note)
# the payload's bytes became the changeset signed into END, with the
# payload's entry count, which sbx apply's check then calls verified
# (tests 3-5).
. "$(dirname "$0")/lib.sh"
plan 6

# a plain run: $'\x04' and $'\x05' are both names the recorder refuses
sbx_run run --json -c 'open("/out/\x04", "wb").write(b"sbx-changeset 1\nentry x\n")
open("/out/\x05", "w").write("y")
open("/out/a.txt", "w").write("hi")'
diag "artifacts $(pj "$T/out" '[a["name"] for a in d["artifacts"]]') skipped $(pj "$T/out" 'd["skipped"]')"
check "the file named \\x04 is listed as skipped (bad_name), like \\x05" \
	[ "$(pj "$T/out" 'sorted(s["path"] for s in d["skipped"] if s["reason"] == "bad_name")')" = "['\\x04', '\\x05']" ]
check "a.txt is returned, the two others counted as skipped" \
	[ "$(pj "$T/out" '[a["name"] for a in d["artifacts"]], d["artifacts_skipped"]')" = "(['a.txt'], 2)" ]

# a --workspace run through the helper itself, the changeset directory
# already holding "files": no real manifest is sent
W=$T/ws
C=$T/cs
mkdir -p "$W" "$C/files"
chown -R sbxtest:sbxtest "$W" "$C"
cat > "$T/forge.py" <<'PY'
# forge.py HELPER WS CS: the payload writes a forged manifest to /out/\x04
import hashlib, json, os, socket, subprocess, sys
import sbxframes as F
helper, ws, cs = sys.argv[1:4]
forged = b"sbx-changeset 1\nrun forged\nentry - f:" + b"0" * 64 + b" 0644 0 forged.txt\nend complete\n"
code = ("open('/work/real.txt', 'w').write('real change')\n"
        "open('/out/\\x04', 'wb').write(%r)\n" % forged).encode()
m = F.memfd(code)
res, peer = socket.socketpair()
wfd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
cfd = os.open(cs, os.O_RDONLY | os.O_DIRECTORY)
fds = {3: m, 4: peer.fileno(), 5: wfd, 6: cfd}
def setup():
    F.place_fds(fds)
p = subprocess.Popen([helper, "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4",
                      "--workspace-fd", "5", "--changeset-fd", "6"], stdin=subprocess.DEVNULL,
                     preexec_fn=setup, close_fds=False, env={})
peer.close()
data = F.read_all(res, 60)
p.wait(timeout=60)
r = F.result(data) or {}
print(json.dumps({"forged": hashlib.sha256(forged).hexdigest(), "id": r.get("id"),
                  "changeset": r.get("changeset"), "skipped": r.get("skipped"),
                  "messages": F.messages(data)}))
PY
chmod 0644 "$T/forge.py"
run_as sbxtest /usr/bin/python3 "$T/forge.py" "$P/libexec/sbx/sbx-helper" "$W" "$C" > "$T/forge" 2> "$T/forge.err"
diag "$(cat "$T/forge" "$T/forge.err")"
id=$(pj "$T/forge" 'd["id"]')
forged=$(pj "$T/forge" 'd["forged"]')
check "the result's changeset is not the payload's forged manifest" \
	[ "$(pj "$T/forge" '(d["changeset"] or {}).get("sha256")')" != "$forged" ]
"$AUDIT" show --json "$id" > "$T/show" 2>&1
check "END signs no changeset digest the payload chose" \
	[ "$(pj "$T/show" '[r.get("changeset_sha256") for r in d["records"] if r.get("kind") == "end"]')" != "['$forged']" ]
check "END says the changeset is missing (the directory could not be written)" \
	[ "$(pj "$T/show" '[r.get("changeset_missing") for r in d["records"] if r.get("kind") == "end"]')" = "['the changeset directory could not be written']" ]
audited_unchanged() { audited "$id" ok && host_unchanged; }
check "the run is audited (ok), the host unchanged" audited_unchanged
finish
