#!/bin/sh
# SPDX-License-Identifier: ISC
# Every run says which environment it ran in: the result's "environment"
# and the signed START record carry the image and its digest (or "host" and
# the host's package-set digest, recomputed here with dpkg-query as
# docs/image-digest.md says), the interpreter resolved in that tree with its
# package and version, the kernel and the sbx version; sbx-audit search
# finds runs by image digest; report --environments shows the same code
# giving two outcomes under two environments.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-image.sh"
plan 25

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

finish
