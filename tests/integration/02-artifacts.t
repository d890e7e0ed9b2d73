#!/bin/sh
# SPDX-License-Identifier: ISC
# A numpy + matplotlib plot written to /out comes back as a real PNG, with
# its digest in the result and in the audit record.
. "$(dirname "$0")/lib.sh"
plan 7

cp "$SBX_SRCDIR/examples/plot.py" "$T/plot.py"
chmod 644 "$T/plot.py"
sbx_run run --json --artifacts "$T/art" "$T/plot.py"
diag "$(head -c 2000 "$T/err")"
check "plot.py ok" [ "$(jget outcome)" = ok ]
check "plot.png saved" [ -f "$T/art/plot.png" ]
check "it is a PNG" sh -c 'file -b "$1" | grep -q "^PNG image data"' _ "$T/art/plot.png"
check "saved file owned by the caller" [ "$(stat -c %U "$T/art/plot.png")" = sbxtest ]
check "media type image/png" [ "$(jget artifacts.0.media_type)" = image/png ]
check "sha256 in the result matches the file" [ "$(jget artifacts.0.sha256)" = "$(sha256sum < "$T/art/plot.png" | cut -d' ' -f1)" ]
check "sha256 in the audit record" sh -c '"$1" show "$2" | grep -q "$3"' _ "$AUDIT" "$(jget id)" "$(jget artifacts.0.sha256)"
finish
