#!/bin/sh
# SPDX-License-Identifier: ISC
# sbx quickstart, for a fresh Debian 12 machine (run as root or with sudo):
# installs the dependencies, builds and installs sbx, puts you (SUDO_USER,
# or a demo user "sbxdemo" when run as plain root) into group sbx, runs
# examples/plot.py in the sandbox as that user, and shows the saved PNG and
# the run's audit record. Idempotent.
set -eu
cd "$(dirname "$0")"
if [ "$(id -u)" != 0 ]; then exec sudo "$0" "$@"; fi

tools/install-deps
make -s
make -s install
# cgroup v2 under systemd (Debian 12's default): the helper needs the
# delegated subtree sbx-cgroup.service holds (sbx-helper(8), Cgroups)
if [ -d /run/systemd/system ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	systemctl daemon-reload
	systemctl enable --now sbx-cgroup.service
fi

user=${SUDO_USER:-}
if [ -z "$user" ] || [ "$user" = root ]; then
	user=sbxdemo
	getent passwd $user >/dev/null || useradd --create-home --shell /bin/sh $user
fi
usermod -a -G sbx "$user"

work=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups mktemp -d /tmp/sbx-demo.XXXXXX)
install -m 0644 examples/plot.py "$work/plot.py"
echo "== sbx run examples/plot.py --artifacts $work/out   (as $user)"
cd "$work"
setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
	sbx run --json plot.py --artifacts "$work/out" > "$work/result.json" || true
python3 - "$work/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sys.stdout.write(r.get("stdout") or "")
sys.stderr.write(r.get("stderr") or "")
print("== outcome: %s, exit %s, %s ms wall, %s ms cpu, peak memory %s bytes"
      % (r["outcome"], r["exit_code"], r["wall_ms"], r["cpu_ms"], r["memory_peak_bytes"]))
for a in r.get("artifacts", []):
    print("== artifact: %s (%s, %s bytes, sha256 %s)" % (a.get("path", a["name"]), a["media_type"], a["size"], a["sha256"]))
open(sys.argv[1] + ".id", "w").write(r["id"])
PY
echo "== audit record (sbx-audit show)"
sbx-audit show "$(cat "$work/result.json.id")"
