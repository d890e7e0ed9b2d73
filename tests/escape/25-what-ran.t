#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 25: what ran, bound into the record (issue 11, finding 6).
# The recorded code is a one-line loader; what it runs comes from an input
# file and from the session directory. An auditor holding the START record
# must be able to tell exactly what ran: every input's name, size and
# SHA-256 (the sandbox's copy: changing the file afterwards changes
# nothing), and the session directory's identity (device and inode of the
# directory mounted at /work, which the --session label alone does not
# give: a label can name any directory, and the same label a new one).
#
# Defences checked by removing them: the START fields inputs (audit,
# record v2) and session_dir (recorder/startfacts.c, written from the
# session directory's fstat by the supervisor): with session_dir not
# written (main before this change), test 4 failed; without inputs (main
# before record v2), tests 2 and 3 failed.
. "$(dirname "$0")/lib.sh"
plan 6
X=$T/xdg
mkdir -p "$X" && chown sbxtest "$X" && chmod 0700 "$X"
srun() {
	run_as sbxtest env XDG_DATA_HOME="$X" "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
printf 'import hashlib\nprint("stage2", hashlib.sha256(open("/in/stage2.py", "rb").read()).hexdigest())\n' > "$T/stage2.py"
chmod 0644 "$T/stage2.py"
LOADER='exec(open("/in/stage2.py").read())'
srun run --json --session s1 --input "$T/stage2.py" -c "$LOADER"
diag "$(cat "$T/err")"
check "the loader ran stage 2 from its input" [ "$rc $(jget stdout | cut -d' ' -f1)" = "0 stage2" ]
id=$(jget id)
ran=$(jget stdout | cut -d' ' -f2 | tr -d '\n')
"$AUDIT" show --json "$id" > "$T/show.json"
field() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["start"]
print(eval(sys.argv[2]))' "$T/show.json" "$1"; }
check "START binds the input's name and size" [ "$(field 'd["inputs"][0]["name"], d["inputs"][0]["size"]')" = "('stage2.py', $(stat -c %s "$T/stage2.py"))" ]
check "START's input digest is the digest of what the payload read" [ "$(field 'd["inputs"][0]["sha256"]')" = "$ran" ]
dir=$X/sbx/sessions/s1
check "START binds the session directory's identity (device, inode)" \
	[ "$(field 'd["session_dir"]["dev"], d["session_dir"]["ino"]')" = "($(stat -c '%d, %i' "$dir"))" ]
# the same label, a new directory: the record tells them apart
mv "$dir" "$dir.old"
srun run --json --session s1 --input "$T/stage2.py" -c "$LOADER"
"$AUDIT" show --json "$(jget id)" > "$T/show.json"
check "the same label on another directory: another identity in START" \
	[ "$(field 'd["session_dir"]["ino"]')" = "$(stat -c %i "$dir")" ]
check "and not the old one's" [ "$(field 'd["session_dir"]["ino"]')" != "$(stat -c %i "$dir.old")" ]
finish
