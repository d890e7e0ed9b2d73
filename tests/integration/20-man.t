#!/bin/sh
# SPDX-License-Identifier: ISC
# Man pages: installed by `make install` with the install's paths, clean
# under `mandoc -Tlint`, and naming every option each program's --help
# shows (so a new option without documentation fails here); `make help`
# names only targets the Makefile has, and every one a user runs.
. "$(dirname "$0")/lib.sh"
M=$P/share/man
pages="man1/sbx.1 man1/sbx-audit.1 man5/sbx.policy.5 man5/sbx.conf.5 man8/sbx-helper.8 man8/sbx-image.8"
plan 15

missing=
for p in $pages; do [ -f "$M/$p" ] || missing="$missing $p"; done
diag "missing:${missing:- none}"
check "make install installed the six pages" [ -z "$missing" ]

# mandoc -Tlint resolves cross-references only in /usr/share/man, so until
# the pages are installed there (the package test checks them there) the
# references to each other are STYLE messages; so are those to base-system
# pages that minimal images leave out. Those, and only those, are tolerated,
# with the footer's ".Os sbx VERSION": mandoc prefers a bare .Os, which
# groff (what man uses on Debian) renders as "BSD".
(cd "$M" && mandoc -Tlint $pages) >"$T/lint" 2>&1; lrc=$?
xr='(sbx|sbx-audit|env|timeout|sqlite3|rm|chmod|mkfs.erofs|mmdebstrap|diff) 1|(seccomp|rename|flock|statx|sched_getaffinity|openat2) 2|(syslog) 3|(sbx.conf|sbx.policy|systemd.resource-control) 5|(cgroups|namespaces) 7|(sbx-helper|sbx-image|ausearch|mount) 8'
grep -E '^mandoc: man[0-9]/' "$T/lint" |
	grep -Ev "STYLE: referenced manual not found: Xr ($xr)( \\([0-9]+ times\\))?\$" |
	grep -Ev "STYLE: operating system explicitly specified: Os sbx \\(NetBSD\\)$" >"$T/findings"
diag "$(grep -v 'outdated mandoc.db' "$T/lint")"
check "mandoc -Tlint: no findings" [ ! -s "$T/findings" ]
check "mandoc -Tlint: no error or warning (exit status < 2)" [ "$lrc" -lt 2 ]

check "installed pages name the install's helper path" grep -q "$P/libexec/sbx/sbx-helper" "$M/man8/sbx-helper.8"
check "installed pages name the install's config path" grep -q "$P/etc/sbx/sbx.conf" "$M/man5/sbx.conf.5"
(cd "$M" && grep -ohE '[^ ]*/(libexec|lib|etc)/sbx' $pages) | grep -v "^$P/" | sort -u >"$T/paths"
diag "paths outside the install: $(cat "$T/paths")"
check "installed pages name no path outside the install's" [ ! -s "$T/paths" ]

render() { mandoc -Tascii "$M/$1" | col -bx; }
# options OUTPUT: every --long and -x short option in a --help text
options() { grep -Eo '(^|[ ,[(|])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[ ,[(|]//' | sort -u; }
# undocumented PAGE < HELP: the options of HELP that PAGE does not show
undocumented() {
	render "$1" >"$T/page"
	options | while read -r o; do grep -qe "$o\\b" "$T/page" || echo "$o"; done
}

{ "$SBX" --help; "$SBX" run --help; "$SBX" mcp --help; "$SBX" doctor --help; } >"$T/help" 2>&1
u=$(undocumented man1/sbx.1 <"$T/help"); diag "sbx.1 lacks: ${u:-nothing}"
check "sbx --help and sbx run --help show options" grep -q -- '--json' "$T/help"
check "sbx(1) documents every option of sbx --help, sbx run --help, sbx mcp --help and sbx doctor --help" [ -z "$u" ]

"$AUDIT" --help >"$T/help" 2>&1
cmds=$(sed -n '/^commands:/,/^$/p' "$T/help" | awk 'NF > 1 { print $1 }')
for c in $cmds; do "$AUDIT" "$c" --help; done >>"$T/help" 2>&1
u=$(undocumented man1/sbx-audit.1 <"$T/help"); diag "sbx-audit.1 lacks: ${u:-nothing}"
check "sbx-audit --help lists commands" [ -n "$cmds" ]
check "sbx-audit(1) documents every option of sbx-audit and its commands" [ -z "$u" ]
render man1/sbx-audit.1 >"$T/page"
u=$(for c in $cmds; do grep -Eq "^ +$c( |$)" "$T/page" || echo "$c"; done); diag "commands lacking: ${u:-none}"
check "sbx-audit(1) has an entry for every command" [ -z "$u" ]

"$P/libexec/sbx/sbx-helper" >"$T/help" 2>&1
u=$(undocumented man8/sbx-helper.8 <"$T/help"); diag "sbx-helper.8 lacks: ${u:-nothing}"
check "sbx-helper(8) documents the arguments of its usage line" [ -z "$u" ]
{ "$P/sbin/sbx-image" --help; "$P/sbin/sbx-image" build --help; } >"$T/help" 2>&1
u=$(undocumented man8/sbx-image.8 <"$T/help"); diag "sbx-image.8 lacks: ${u:-nothing}"
check "sbx-image(8) documents every option of its usage" [ -z "$u" ]
render man8/sbx-image.8 >"$T/page"
u=$(for c in build ls show rm mount verify; do grep -Eq "^ +$c( |$)" "$T/page" || echo "$c"; done); diag "commands lacking: ${u:-none}"
check "sbx-image(8) has an entry for every command" [ -z "$u" ]

# make help: the targets it names exist (make's database), and every
# .PHONY target is named but the ones other targets use.
(cd "$SBX_SRCDIR" && make -s help) >"$T/mhelp" 2>&1
sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' "$T/mhelp" | sort -u >"$T/named"
(cd "$SBX_SRCDIR" && make -pRrq -f Makefile : 2>/dev/null) >"$T/db"
sed -n 's/^\([a-z][a-z-]*\):.*/\1/p' "$T/db" | sort -u >"$T/targets"
sed -n 's/^\.PHONY: //p' "$T/db" | tr ' ' '\n' | grep -Ev '^(FORCE|postinst|escape-bins|install-files|install-systemd|install-man|install-completion)?$' |
	sort -u >"$T/phony"
unknown=$(comm -23 "$T/named" "$T/targets" | tr '\n' ' '); left=$(comm -23 "$T/phony" "$T/named" | tr '\n' ' ')
diag "make help names unknown targets: ${unknown:-none}; leaves out: ${left:-none}"
check "make help names the Makefile's targets, all of them" sh -c '[ -s "$1" ] && [ -z "$2" ]' _ "$T/named" "$unknown$left"
finish
