#!/bin/sh
# SPDX-License-Identifier: ISC
# Real analyst programs under the default policy (tests/integration/analyst/:
# pandas, numpy, scipy, matplotlib, scikit-learn with n_jobs=-1, statsmodels,
# sympy, openpyxl, sqlite3, multiprocessing, joblib, the standard library,
# an input file). Each must end ok, print its RESULT line, and return the
# files it left in /out as artifacts. Their wall time and memory peak are
# printed as diagnostics (figures, not assertions).
. "$(dirname "$0")/lib.sh"
A=$(cd "$(dirname "$0")/analyst" && pwd)
progs="pandas_clean numpy_linalg scipy_stats matplotlib_plots sklearn_forest statsmodels_ols sympy_calc
 openpyxl_sheet sqlite_query multiprocessing_pools joblib_parallel stdlib_report input_data"
plan $(( $(echo $progs | wc -w) * 2 ))
printf 'sensor,value\na,1\na,3\nb,10\nb,20\nb,30\n' > "$T/measurements.csv"
want() {
	case $1 in
	pandas_clean) echo "RESULT 880.0 ['East', 'North', 'South']|pivot.csv" ;;
	numpy_linalg) echo "RESULT 3.0 2.0 True|walk.npy" ;;
	scipy_stats) echo "RESULT True 2.5 1.3 [1.0, -2.0]|" ;;
	matplotlib_plots) echo "RESULT saved and shown|figure-1.png figure-2.png sine.png" ;;
	sklearn_forest) echo "RESULT True True|" ;;
	statsmodels_ols) echo "RESULT 1.5 2.0 True|ols.txt" ;;
	sympy_calc) echo "RESULT [2, 3] sqrt(pi) 1|" ;;
	openpyxl_sheet) echo "RESULT 18.0 4|report.xlsx" ;;
	sqlite_query) echo "RESULT [('ada', 15.5), ('bob', 7.25)]|shop.db" ;;
	multiprocessing_pools) echo "RESULT True 8 [(0, 0), (1, 1), (2, 4)] b'hello'|" ;;
	joblib_parallel) echo "RESULT 200 True|" ;;
	stdlib_report) echo "RESULT {'mean': 21.75, 'stdev': 13.205, 'money': '0.3'}|bundle.zip days.csv summary.json" ;;
	input_data) echo "RESULT 5 11.0|by_sensor.csv" ;;
	esac
}
for p in $progs; do
	cp "$A/$p.py" "$T/$p.py"
	chmod 0644 "$T/$p.py" "$T/measurements.csv"
	extra=
	[ "$p" = input_data ] && extra="--input $T/measurements.csv"
	sbx_run run --json $extra "$T/$p.py"
	got="$(jget stdout | grep '^RESULT')|$(python3 -c 'import json,sys; print(" ".join(sorted(a["name"] for a in json.load(open(sys.argv[1]))["artifacts"])))' "$T/out")"
	diag "$p: $(jget outcome), wall $(jget wall_ms) ms, cpu $(jget cpu_ms) ms, memory peak $(( $(jget memory_peak_bytes) >> 20 )) MiB"
	[ "$(jget outcome)" = ok ] || diag "$(jget stderr | tail -5)" "$(head -c 600 "$T/err")"
	check "$p: outcome ok under the default policy" [ "$(jget outcome) $rc" = "ok 0" ]
	[ "$got" = "$(want $p)" ] || diag "got: $got" "$(jget stderr | tail -5)"
	check "$p: its result and artifacts ($(want $p))" [ "$got" = "$(want $p)" ]
done
finish
