#!/bin/sh
# SPDX-License-Identifier: ISC
# Every command and subcommand of sbx and sbx-audit answers --help (usage,
# exit 0) and --version ("PROG VERSION" from the VERSION file, exit 0);
# the bash completion offers exactly the options each --help shows (so a
# new option, or a dropped one, fails here); the man pages render under
# groff, which `man` uses on Debian, without the bugs once found there
# (a literal \n, flags eaten by a preceding .Fl, lost quotes, a "BSD"
# footer) and say what they must (SECURITY CONSIDERATIONS, no "does not
# exist yet").
. "$(dirname "$0")/lib.sh"
plan 11
S=$SBX_SRCDIR
V=$(cat "$S/VERSION")
BC=/usr/share/bash-completion/bash_completion
M=$P/share/man

# 1. --help and --version everywhere
bad=
for c in "" run policies session "session ls" "session rm" changes apply mcp doctor; do
	# shellcheck disable=SC2086
	out=$(run_as sbxtest "$SBX" $c --help 2>&1) && echo "$out" | grep -qi '^usage: sbx' || bad="$bad [sbx $c --help]"
	# shellcheck disable=SC2086
	[ "$(run_as sbxtest "$SBX" $c --version 2>&1)" = "sbx $V" ] || bad="$bad [sbx $c --version]"
done
cmds=$("$AUDIT" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
for c in "" $cmds; do
	# shellcheck disable=SC2086
	out=$("$AUDIT" $c --help 2>&1) && echo "$out" | grep -qi '^usage: sbx-audit' || bad="$bad [sbx-audit $c --help]"
	# shellcheck disable=SC2086
	[ "$("$AUDIT" $c --version 2>&1)" = "sbx-audit $V" ] || bad="$bad [sbx-audit $c --version]"
done
diag "failing:${bad:- none}"
check "--help and --version on every command and subcommand (sbx, sbx-audit: $(echo $cmds | wc -w) commands)" [ -z "$bad" ]

# 2. completion against --help
# options: the long options a --help text defines: those of its usage lines
# and of the term column of its option lines (prose mentions do not count),
# plus --help and --version, which every command takes
options() {
	python3 -c '
import re, sys
out = {"--help", "--version"}
for line in sys.stdin:
    if re.match(r"(?i)\s*usage:|\s+(sbx|sbx-audit)\s", line):
        out.update(re.findall(r"[\[|(\s](--[a-zA-Z][\w-]*)", line))
    m = re.match(r"\s+(-\S.*?)(\s{2,}|$)", line)
    if m:
        out.update(re.findall(r"(?:^|[\s,])(--[a-zA-Z][\w-]*)", m.group(1)))
print("\n".join(sorted(out)))'
}
# complete FILE FUNC WORD...: what the completion offers for the last WORD
complete() {
	f=$1 fn=$2
	shift 2
	bash -c '. "$1"; . "$2"; fn=$3; shift 3
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" "$f" "$fn" "$@" | grep -E '^--[a-zA-Z]' | sort -u
}
cmp_opts() { # NAME HELPFILE COMPFILE: a diag line when they differ
	if ! diff "$2" "$3" >/dev/null; then
		echo "$1: help only: $(comm -23 "$2" "$3" | tr '\n' ' ')completion only: $(comm -13 "$2" "$3" | tr '\n' ' ')"
	fi
}
diffs=
for c in run policies changes apply mcp doctor "session ls"; do
	# shellcheck disable=SC2086
	"$SBX" $c --help 2>&1 | options >"$T/h"
	# shellcheck disable=SC2086
	complete "$S/packaging/completion/sbx" _sbx sbx $c -- >"$T/c"
	# one help for every session command: its options are those of ls and
	# start (live sessions) together
	[ "$c" = "session ls" ] &&
		complete "$S/packaging/completion/sbx" _sbx sbx session start -- >>"$T/c" && sort -u -o "$T/c" "$T/c"
	d=$(cmp_opts "sbx $c" "$T/h" "$T/c") && diffs="$diffs${d:+$d; }"
done
diag "sbx: ${diffs:-the same}"
check "sbx completion offers exactly each command's --help options (--jsonl, --fix, --max-attempts, --budget, --fix-timeout...)" [ -z "$diffs" ]
diffs=
"$AUDIT" --help 2>&1 | sed -n '/^options:/,$p' | options >"$T/g" # the global options
complete "$S/packaging/completion/sbx-audit" _sbx_audit sbx-audit -- >"$T/c"
d=$(cmp_opts "sbx-audit" "$T/g" "$T/c") && diffs="$diffs${d:+$d; }"
for c in $cmds; do
	{ "$AUDIT" "$c" --help 2>&1 | options; cat "$T/g"; } | sort -u >"$T/h"
	complete "$S/packaging/completion/sbx-audit" _sbx_audit sbx-audit "$c" -- >"$T/c"
	d=$(cmp_opts "sbx-audit $c" "$T/h" "$T/c") && diffs="$diffs${d:+$d; }"
done
diag "sbx-audit: ${diffs:-the same}"
check "sbx-audit completion offers exactly each command's --help options" [ -z "$diffs" ]
w=$(bash -c '. "$1"; . "$2"; COMP_WORDS=(sbx-audit ""); COMP_CWORD=1; COMP_LINE="sbx-audit "; COMP_POINT=10
	_sbx_audit sbx-audit "" sbx-audit; printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" "$S/packaging/completion/sbx-audit" | sort -u)
check "sbx-audit completion offers every command" sh -c 'for c in $1; do echo "$2" | grep -qx "$c" || exit 1; done' _ "$cmds" "$w"

# 3. man pages as groff renders them
render() { groff -mdoc -Tutf8 "$M/$1" 2>/dev/null | col -bx; }
render man1/sbx.1 | tr -s ' \n\t' '   ' >"$T/sbx.1" # one line: phrases may wrap
check "sbx(1): the MCP example keeps its \\n" grep -qF "printf '%s\\n'" "$T/sbx.1"
check "sbx(1): --keep-artifacts' default reads as words, not flags" grep -q "(a size as for --memory; default 256M; 0 keeps nothing)" "$T/sbx.1"
check "sbx(1): the --json example keeps its quotes" grep -qF '{"outcome": "sandbox_error", "error": {"code": "usage"' "$T/sbx.1"
check "sbx(1): doctor --json's status values each quoted" grep -q '(“ok” or “problem”)' "$T/sbx.1"
foot=
for p in man1/sbx.1 man1/sbx-audit.1 man5/sbx.conf.5 man5/sbx.policy.5 man8/sbx-helper.8; do
	render "$p" | tail -n 1 | grep -q "^sbx $V .* sbx $V\$" || foot="$foot $p"
done
check "every page's footer names sbx $V, not BSD${foot:+ (not:$foot)}" [ -z "$foot" ]
check "sbx.policy(5): max_attempts names the retry loop, which exists" sh -c '! render() { :; }; ! groff -mdoc -Tutf8 "$1" 2>/dev/null | col -bx | grep -q "does not exist yet"' _ "$M/man5/sbx.policy.5"
check "sbx-helper(8) has a SECURITY CONSIDERATIONS section" sh -c 'groff -mdoc -Tutf8 "$1" 2>/dev/null | col -bx | grep -q "^SECURITY CONSIDERATIONS"' _ "$M/man8/sbx-helper.8"
finish
