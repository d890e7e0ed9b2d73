#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx quickstart, the README's first command, for a fresh Debian 12 machine,
# as root (or through sudo): installs what building and running sbx needs
# plus the curated interpreter set (tools/install-deps run: python3 with
# numpy, pandas and matplotlib; not the test toolchain, which the README's
# second command installs), builds and installs sbx into /usr/local, puts
# USER into group sbx, and runs the main job as USER: a sandboxed Python
# program (examples/plot.py) whose result and audit record it prints.
# Idempotent.
#
# Usage: ./quickstart.sh [USER]
# USER: the account that will use sbx; default the one that called sudo
# ($SUDO_USER), else the one logged in on this terminal (logname), else a
# demo account "sbxdemo" created for the purpose.
set -eu
cd "$(dirname "$0")"
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 && exec sudo "$0" "$@"
	echo "quickstart.sh: run it as root (it installs packages and a setuid helper): su -c ./quickstart.sh" >&2
	exit 1
fi

user=${1:-${SUDO_USER:-}}
if [ -z "$user" ] || [ "$user" = root ]; then
	user=$(logname 2>/dev/null || true)
fi
if [ -z "$user" ] || [ "$user" = root ]; then
	user=sbxdemo
	getent passwd $user >/dev/null || useradd --create-home --shell /bin/bash $user
fi
getent passwd "$user" >/dev/null || { echo "quickstart.sh: no user '$user'" >&2; exit 1; }

echo "== installing the build and runtime dependencies (tools/install-deps run)"
tools/install-deps run
echo "== building and installing sbx into /usr/local"
make -s -j"$(nproc)"
make -s install
# cgroup v2 under systemd (Debian 12's default): the helper needs the
# delegated subtree sbx-cgroup.service holds (sbx-helper(8), Cgroups)
if [ -d /run/systemd/system ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	systemctl daemon-reload
	systemctl enable --now sbx-cgroup.service
fi
usermod -a -G sbx "$user"

# The main job, as the user (setpriv gives it the new group at once).
work=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups mktemp -d /tmp/sbx-demo.XXXXXX)
install -m 0644 examples/plot.py "$work/plot.py"
echo "== sbx run --json plot.py --artifacts $work/out   (as $user)"
cd "$work"
rc=0
setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
	sbx run --json plot.py --artifacts "$work/out" >"$work/result.json" || rc=$?
python3 - "$work/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sys.stdout.write(r.get("stdout") or "")
sys.stderr.write(r.get("stderr") or "")
if r.get("error"):
    print("== error: %s" % (r["error"].get("message"),))
print("== outcome: %s, exit %s, %s ms wall, %s ms cpu, peak memory %s bytes"
      % (r["outcome"], r["exit_code"], r["wall_ms"], r["cpu_ms"], r["memory_peak_bytes"]))
for a in r.get("artifacts", []):
    print("== artifact: %s (%s, %s bytes, sha256 %s)" % (a.get("path", a["name"]), a["media_type"], a["size"], a["sha256"]))
open(sys.argv[1] + ".id", "w").write(r.get("id") or "")
PY
if [ -s "$work/result.json.id" ]; then
	echo "== audit record (sbx-audit show $(cat "$work/result.json.id"))"
	sbx-audit show "$(cat "$work/result.json.id")"
fi
echo
echo "== done. $user is now in group sbx: log in again (or run: newgrp sbx) before"
echo "   your first sbx run; until then the shell you have does not have the group."
echo "   Try: sbx run -c 'print(6*7)'; sbx doctor checks the host. Tests: see README."
exit $rc
