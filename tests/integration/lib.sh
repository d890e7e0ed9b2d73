# SPDX-License-Identifier: ISC
# Shared by the TAP integration tests (sourced). Runs the installed client
# as the unprivileged user sbxtest against the setuid install in
# $SBX_CHECK_PREFIX (see setup.sh).
set -u
P=${SBX_CHECK_PREFIX:?run through make check-integration}
SBX=$P/bin/sbx
AUDIT=$P/bin/sbx-audit
T=$(mktemp -d /tmp/sbx-t.XXXXXX)
chmod 0777 "$T"
# Every result a test leaves in $T (sbx run --json, the result and
# attempt events of --jsonl) is kept in $SBX_RESULTS (setup.sh empties it)
# for 59-result-schema.t, which validates them all against the schema.
SBX_RESULTS=${SBX_RESULTS:-$P/results}
keep_results() {
	[ -d "$SBX_RESULTS" ] && [ -w "$SBX_RESULTS" ] || return 0
	python3 - "$SBX_RESULTS" "$(basename "$0" .t)" "$@" <<'PY' 2>/dev/null || true
import json, os, sys
out, test, files = sys.argv[1], sys.argv[2], sys.argv[3:]
def results(text):
    try:
        docs = [json.loads(text)]
    except ValueError:
        docs = []
        for line in text.splitlines():
            try:
                docs.append(json.loads(line))
            except ValueError:
                pass
    for d in docs:
        if isinstance(d, dict) and d.get("event") in ("result", "attempt") and isinstance(d.get("result"), dict):
            d = d["result"]
        # a result, not an audit record (sbx-audit show/export: start_seq at the top)
        if isinstance(d, dict) and "outcome" in d and "start_seq" not in d and \
                ("stdout_truncated" in d or d.get("outcome") == "sandbox_error"):
            yield d
for f in files:
    try:
        text = open(f, errors="replace").read(1 << 24)
    except OSError:
        continue
    for i, d in enumerate(results(text)):
        name = "%s-%s-%d-%d.json" % (test, os.path.basename(f), os.getpid(), i)
        with open(os.path.join(out, name), "w") as o:
            json.dump(d, o)
PY
}
lib_exit() { keep_results $(find "$T" -maxdepth 2 -type f -size -16M 2>/dev/null); rm -rf "$T"; }
trap 'lib_exit' EXIT
# the protocol for tests that drive the helper directly (import sbxframes)
cp "${SBX_SRCDIR:-$(dirname "$0")/../..}/tests/sbxframes.py" "$T/sbxframes.py"
chmod 0644 "$T/sbxframes.py"
n=0
fails=0

plan() { echo "1..$1"; }
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
check() { desc=$1; shift; if "$@"; then ok 0 "$desc"; else ok 1 "$desc"; fi; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# run_as USER CMD...: a clean login-like environment, the user's groups
run_as() {
	u=$1; shift
	(cd "$T" && setpriv --reuid="$u" --regid="$u" --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent "$@")
}
# sbx_run ARGS...: stdout to $T/out, stderr to $T/err, status in $rc
sbx_run() {
	run_as sbxtest "$SBX" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	keep_results "$T/out"
}
# jq-free JSON field access for the result document in $T/out
jget() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print("null" if d is None else (str(d).lower() if isinstance(d, bool) else d))' "$T/out" "$1"; }

# The audit record of run ID, as sbx-audit prints it (root reads the log).
audit_show() { "$AUDIT" show "$1"; }
audit_field() { "$AUDIT" show --json "$1" | python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[int(k)] if isinstance(d, list) else d.get(k)
print("null" if d is None else d)' "$2"; }

# No run-* cgroup may survive a run: the last JSON result's run when there
# is one (other runs may be going on), else any.
# no_cgroup_of ID...: none of these runs left a cgroup (other runs on the
# host, such as a parallel test suite, may have theirs). Fails on no ID.
no_cgroup_of() {
	[ $# -gt 0 ] || return 1
	for id; do
		case $id in [0-9a-f]*) ;; *) return 1 ;; esac
		! ls -d /sys/fs/cgroup/*/sbx/run-"$id" /sys/fs/cgroup/sbx/run-"$id" 2>/dev/null | grep -q . || return 1
	done
}
no_cgroups_left() {
	id=$(jget id 2>/dev/null) || id=
	case $id in
	[0-9a-f]*) ! ls -d /sys/fs/cgroup/*/sbx/run-"$id" /sys/fs/cgroup/sbx/run-"$id" 2>/dev/null | grep -q . ;;
	*) ! find /sys/fs/cgroup -path '*/sbx/run-*' -maxdepth 4 -type d 2>/dev/null | grep -q . ;;
	esac
}

# npm_cache DIR MARKER NAME [NPM-CI-ARGS]: the packages of DIR's
# package-lock.json (tests/mcp: the official MCP TypeScript SDK, a client
# nobody here wrote; tests/mcp-versions: its older releases and the
# Inspector) installed once per lock file into a cache, and DIR's
# client.mjs copied there: sets cache (that directory, NAME-HASH; MARKER
# is the path under node_modules that says it is complete) or why (the
# reason to skip: node or npm missing, or npm cannot reach its registry;
# an npm failure with the registry reachable is a diag, and the caller's
# SDK checks then fail).
npm_cache() {
	src="$SBX_SRCDIR/$1"
	why=
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		why="node or npm not installed (tools/install-deps installs them)"
		return
	fi
	key=$(sha256sum <"$src/package-lock.json" | cut -c1-16)
	cache=${SBX_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/sbx-mcp-test}/$3$key
	if [ ! -d "$cache/node_modules/$2" ]; then
		rm -rf "$cache" && mkdir -p "$cache" && cp "$src/package.json" "$src/package-lock.json" "$cache/"
		if ! (cd "$cache" && shift 3 && npm ci --no-audit --no-fund "$@" >"$T/npm.log" 2>&1); then
			if (cd "$cache" && timeout 30 npm ping >/dev/null 2>&1); then
				diag "npm ci failed with the registry reachable:" "$(tail -5 "$T/npm.log")"
			else
				why="npm cannot reach its registry"
			fi
			rm -rf "$cache"
		fi
	fi
	[ -n "$why" ] || cp "$src/client.mjs" "$cache/client.mjs"
}
mcp_sdk() { npm_cache tests/mcp @modelcontextprotocol/sdk ""; }

finish() { [ "$fails" = 0 ]; exit $?; }
