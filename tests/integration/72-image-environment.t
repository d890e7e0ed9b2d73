#!/bin/sh
# SPDX-License-Identifier: ISC
# Every run says which environment it ran in: the result's "environment"
# and the signed START record carry the image and its digest (or "host" and
# the host's package-set digest, recomputed here with dpkg-query as
# docs/image-digest.md says), the interpreter resolved in that tree with its
# package and version, the kernel and the sbx version; sbx-audit search
# finds runs by image digest; report --environments shows the same code
# giving two outcomes under two environments; and sbx-image rm of an image
# a run is using (refused while a policy names it; --force: the run keeps
# it until it ends).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-image.sh"
plan 32

ensure_image tiny
img_policy tiny tiny
dig=$(img_digest tiny)
hostdig=sha256:$(dpkg-query -W -f '${db:Status-Abbrev}\t${Package}\t${Version}\t${Architecture}\n' |
	sed -n 's/^ii \t//p' | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
marker=env-$$-$(date +%s)
code="import tabulate; print('$marker')"

# --- with the image ------------------------------------------------------
sbx_run run --json --policy tiny -c "$code"
check "run with the image: ok" [ "$rc:$(jget outcome)" = 0:ok ]
id_img=$(jget id)
check "environment.image is the image's name" [ "$(jget environment.image)" = tiny ]
check "environment.digest is the image's digest" [ "$(jget environment.digest)" = "$dig" ]
check "environment.interpreter is resolved in the image" [ "$(jget environment.interpreter)" = /usr/bin/python3.11 ]
want=$(awk -F'\t' '$1 == "python3.11-minimal" { print $2 }' "$STORE/tiny/manifest")
check "environment.interpreter_package and _version: the image's python3.11-minimal" \
	[ "$(jget environment.interpreter_package) $(jget environment.interpreter_version)" = "python3.11-minimal $want" ]
check "environment.kernel is uname -r" [ "$(jget environment.kernel)" = "$(uname -r)" ]
check "environment.sbx_version is sbx's" sh -c "'$SBX' --version 2>&1 | grep -qF \"\$1\"" _ "$(jget environment.sbx_version)"

audit_show "$id_img" >"$T/show"
diag "$(grep -E '^ *(image|interpreter|kernel|sbx version)' "$T/show")"
check "sbx-audit show prints the image" grep -Eq '^ *image +tiny$' "$T/show"
check "sbx-audit show prints its digest" grep -Eq "^ *image digest +${dig#sha256:}\$" "$T/show"
check "sbx-audit show prints the interpreter version" grep -qF "interp version $want" "$T/show"
check "START record (show --json): image, digest, interpreter path in the image" \
	[ "$(audit_field "$id_img" start.image) $(audit_field "$id_img" start.image_digest) $(audit_field "$id_img" start.interpreter_path)" = "tiny ${dig#sha256:} /usr/bin/python3.11" ]

# --- the host's /usr -----------------------------------------------------
sbx_run run --json -c "$code"
check "the same code on the host: error (no tabulate there)" [ "$(jget outcome)" = error ]
id_host=$(jget id)
check "environment.image is host" [ "$(jget environment.image)" = host ]
check "environment.digest is the host's package-set digest (dpkg-query recomputation)" [ "$(jget environment.digest)" = "$hostdig" ]
check "environment.interpreter_version is the host's python3.11-minimal" \
	[ "$(jget environment.interpreter_version)" = "$(dpkg-query -W -f '${Version}' python3.11-minimal)" ]
sbx_run run --json -c 'print(1)'
check "a second host run: the same digest (the cache)" [ "$(jget environment.digest)" = "$hostdig" ]
check "the host cache belongs to _sbx" [ "$(stat -c %U "$P/var/lib/sbx/hostenv")" = _sbx ]

# --- search --------------------------------------------------------------
"$AUDIT" search --image-digest "$dig" --format csv >"$T/s1" 2>&1; s1=$?
check "search --image-digest sha256:...: finds the image run" sh -c "[ $s1 = 0 ] && grep -q '^$id_img,' '$T/s1'"
check "... and not the host run" sh -c "! grep -q '^$id_host,' '$T/s1'"
"$AUDIT" search --image-digest "${dig#sha256:}" --format csv >"$T/s2" 2>&1
check "search --image-digest HEX: the same runs" cmp -s "$T/s1" "$T/s2"
"$AUDIT" search --image host --format csv >"$T/s3" 2>&1
check "search --image host: the host run, not the image run" sh -c "grep -q '^$id_host,' '$T/s3' && ! grep -q '^$id_img,' '$T/s3'"
"$AUDIT" search --image-digest sha256:abc >"$T/s4" 2>&1; s4=$?
check "search --image-digest with a bad digest: usage (2), one line" sh -c "[ $s4 = 2 ] && [ \$(wc -l <'$T/s4') = 1 ] && grep -q 'not 64 hex digits' '$T/s4'"

# --- report --environments ----------------------------------------------
codesha=$(printf '%s' "$code" | sha256sum | cut -d' ' -f1)
"$AUDIT" report --environments --format json >"$T/rep" 2>&1
check "report --environments: the code that changed outcome, under both environments" python3 - "$T/rep" "$codesha" "$dig" "$hostdig" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
rows = [r for r in rep["environment_changes"] if r["code_sha256"] == sys.argv[2]]
seen = {(r["image"], r["digest"], r["outcomes"]) for r in rows}
want = {("tiny", sys.argv[3], "ok"), ("host", sys.argv[4], "error")}
if not want <= seen:
    print("# rows:", rows)
    sys.exit(1)
PY
check "... and runs per environment, tiny among them" python3 -c '
import json, sys
rep = json.load(open(sys.argv[1]))
assert any(r["image"] == "tiny" and r["digest"] == sys.argv[2] and r["runs"] >= 1 for r in rep["environments"])
' "$T/rep" "$dig"
"$AUDIT" verify >"$T/verify" 2>&1
check "sbx-audit verify: no tampering found in the log with the new fields" grep -Eq '^OK: |\(0 tampering' "$T/verify"

# --- rm while a run uses the image: refused while a policy names it, and
# with --force the run keeps its image until it ends (last, as it removes
# the image the other image tests reuse) ----------------------------------
ino=$(stat -c %i "$STORE/tiny/image.erofs")
run_as sbxtest "$SBX" run --policy tiny -c 'import time; print("started"); time.sleep(4); import tabulate; print("kept", open("/usr/lib/os-release").read().count("\n") > 0)' \
	>"$T/bg.out" 2>"$T/bg.err" </dev/null &
bg=$!
# the run has its image once its code prints (up to 60 s on a loaded machine)
i=0; while [ $i -lt 600 ] && ! grep -qx started "$T/bg.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check "precondition: the background run started" grep -qx started "$T/bg.out"
img rm tiny
check "rm of an image a policy names: exit 4, names the policy" sh -c "[ $rc = 4 ] && grep -q \"named by policy tiny\" '$T/img.err'"
img rm --force tiny
check "rm --force: removed, says running runs keep it" sh -c "[ $rc = 0 ] && grep -q 'runs already started keep it until they end' '$T/img.out'"
check "... gone from the store at once" [ ! -e "$STORE/tiny" ]
sbx_run run --policy tiny -c 'print(1)'
check "... a new run is refused: does not exist" sh -c "[ $rc = 125 ] && grep -q \"image 'tiny' of policy 'tiny' does not exist\" '$T/err'"
wait $bg; bgrc=$?
diag "background run: $bgrc $(cat "$T/bg.out" "$T/bg.err")"
check "... the run that had started finished with its image" sh -c "[ $bgrc = 0 ] && grep -qx 'kept True' '$T/bg.out'"
# the loop device goes with the last mount of the image (the run's), which
# the kernel drops just after the run's processes exit
i=0; while [ $i -lt 100 ] && losetup -a | grep -q ":$ino "; do sleep 0.1; i=$((i + 1)); done
check "... and then its loop device went" sh -c "! losetup -a | grep -q ':$ino '"
rm -f "$POLICIES/tiny.policy"

finish
