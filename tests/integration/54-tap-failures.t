#!/bin/sh
# SPDX-License-Identifier: ISC
# tools/tap-failures, which `make check` runs after a failing prove so that
# the end of a CI log says why a test failed, not only which.
. "$(dirname "$0")/lib.sh"
plan 6
TF=$SBX_SRCDIR/tools/tap-failures
cat >"$T/log" <<'LOG'
build/tests/test_a .. 
1..2
ok 1 - x
# a passing test's note
ok 2 - y
tests/integration/21-deb.t .. 
1..17
ok 14 - signing key
# sbx: the helper refused: something bad
#
not ok 15 - sbx run from the package
#   Failed test at line 3
not ok 16 - printed 42 3
not ok 17 - known # TODO not yet
tests/escape/01-x.t .. ok
LOG
"$TF" "$T/log" >"$T/out"; rc=$?
check "exit 0 when it printed failures" [ "$rc" = 0 ]
check "each failing test, named with its file" sh -c 'grep -qx "tests/integration/21-deb.t: not ok 15 - sbx run from the package" "$1" &&
	grep -qx "tests/integration/21-deb.t: not ok 16 - printed 42 3" "$1"' _ "$T/out"
check "the diagnostics before and after a failure go with it; empty ones and a passing test's do not" sh -c '
	[ "$(sed -n 3,4p "$1")" = "$(printf "  # sbx: the helper refused: something bad\n  #   Failed test at line 3")" ] &&
	! grep -q "passing test" "$1" && [ "$(wc -l <"$1")" = 5 ]' _ "$T/out"
check "a TODO test is not a failure" sh -c '! grep -q "known" "$1"' _ "$T/out"
"$TF" "$T/log" 3 >"$T/short"
check "MAX_LINES bounds the output and says what was left out" sh -c '[ "$(wc -l <"$1")" = 3 ] && tail -n 1 "$1" | grep -q "^\.\.\. 3 more lines in "' _ "$T/short"
printf 'x.t .. \nok 1\n' >"$T/pass"
check "nothing printed for a log without failures" sh -c '[ -z "$("$1" "$2")" ]' _ "$TF" "$T/pass"
finish
