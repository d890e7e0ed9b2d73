#!/bin/sh
# SPDX-License-Identifier: ISC
# The licence is ISC everywhere it is stated: LICENSE, the SPDX identifier
# first in every source file (after a shebang), debian/copyright (DEP-5),
# the RPM's License and %license, package.json. That the built packages
# ship it is checked where they are built: 21-deb.t
# (/usr/share/doc/sbx/copyright) and 22-rpm.t (%license LICENSE).
. "$(dirname "$0")/lib.sh"
plan 6
S=$SBX_SRCDIR
cd "$S" || exit 1

# Data and documents that take no comment or are not code: JSON, Markdown,
# Debian's changelog/control/copyright formats, test data and corpora,
# configuration files shipped as data, tool configuration.
files=$( (git ls-files -co --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*' ! -path './build*' | sed 's|^\./||') |
	grep -Ev '(^|/)(LICENSE|\.gitignore|\.clang-tidy)$|\.(md|json|policy|bin|txt)$|^tests/unit/data/|^tests/fuzz/corpus/' |
	grep -Ev '^packaging/debian/(changelog|control|copyright|source/format)$|^policies/sbx\.conf$|^tools/cppcheck\.(cfg|supp)$|^VERSION$')
missing=
for f in $files; do
	[ -f "$f" ] || continue
	case $f in
	*.c | *.h) want='/* SPDX-License-Identifier: ISC */' ;;
	man/*) want='.\" SPDX-License-Identifier: ISC' ;;
	*.mjs | *.js | *.go) want='// SPDX-License-Identifier: ISC' ;;
	*) want='# SPDX-License-Identifier: ISC' ;;
	esac
	if head -n 1 "$f" | grep -q '^#!'; then line=$(sed -n 2p "$f"); else line=$(sed -n 1p "$f"); fi
	[ "$line" = "$want" ] || missing="$missing $f"
done
diag "files checked: $(echo $files | wc -w)${missing:+; without the identifier first:$missing}"
check "SPDX-License-Identifier: ISC first in every source file" [ -z "$missing" ]
check "LICENSE is the ISC licence" sh -c 'head -n 1 LICENSE | grep -q "ISC" || grep -q "Permission to use, copy, modify, and/or distribute this software for any" LICENSE'
check "debian/copyright: DEP-5, License: ISC for every file" sh -c '
	head -n 1 packaging/debian/copyright | grep -qx "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" &&
	[ "$(grep -c "^License: " packaging/debian/copyright)" = "$(grep -c "^License: ISC$" packaging/debian/copyright)" ] &&
	! grep -qi "proprietary\|not for redistribution" packaging/debian/copyright'
check "RPM: License: ISC, %license LICENSE in both packages" sh -c '
	grep -qx "License: *ISC" packaging/rpm/sbx.spec.in && [ "$(grep -c "^%license LICENSE$" packaging/rpm/sbx.spec.in)" = 2 ] &&
	! grep -q LicenseRef packaging/rpm/sbx.spec.in'
check "package.json: ISC" python3 -c 'import json,sys; sys.exit(json.load(open("tests/mcp/package.json"))["license"] != "ISC")'
check "no other licence named anywhere (MIT, GPL, proprietary) in sources" sh -c '
	! git grep -nE "SPDX-License-Identifier: (MIT|GPL|BSD|Apache|LicenseRef)" -- . ":!tests/integration/51-licence.t" 2>/dev/null | grep -q .'
finish
