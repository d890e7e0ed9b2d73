#!/bin/sh
# SPDX-License-Identifier: ISC
# Figures and streaming (sbx.conf(5) "The shipped Python"):
# - plt.show() in the sandbox saves each open figure as /out/figure-N.png,
#   returned as an artifact, as notebook front ends return figures; a figure
#   never shown or saved is returned at exit; one saved in /out is not
#   returned twice;
# - a figure saved outside /out (savefig("chart.png"), cwd /tmp) gets one
#   stderr line saying it is not returned and where to save it;
# - output is unbuffered: three prints 0.8 s apart arrive as three --jsonl
#   events, each within 200 ms of its print (CLOCK_MONOTONIC is the same
#   inside: the sandbox has no time namespace).
. "$(dirname "$0")/lib.sh"
plan 8
PNG="$SBX_SRCDIR/tests/integration/pngcheck.py"

sbx_run run --json --artifacts "$T/a1" -c 'import matplotlib.pyplot as plt
plt.figure(figsize=(4, 3), dpi=100)
plt.plot([1, 3, 2, 5], color="C1"); plt.fill_between([0, 1, 2, 3], [1, 2, 1, 3], alpha=0.4)
plt.title("shown")
plt.show()
print("after show", len(plt.get_fignums()))'
diag "$(jget stdout)" "$(ls "$T/a1" 2>&1)"
check "plt.show() returns the figure as a PNG artifact (figure-1.png, image/png)" \
	[ "$(jget outcome) $(jget artifacts.0.name) $(jget artifacts.0.media_type)" = "ok figure-1.png image/png" ]
check "the PNG is a real 400x300 image, not blank" python3 "$PNG" "$T/a1/figure-1.png" 400 300
check "shown figures are closed, as in a notebook" [ "$(jget stdout)" = "after show 0" ]

sbx_run run --json -c 'import matplotlib.pyplot as plt
fig = plt.figure(); plt.plot([1, 2]); fig.savefig("/out/kept.png")
plt.figure(); plt.plot([2, 1])
plt.figure()'
check "at exit: a figure never shown or saved comes back, a saved one is not repeated, an empty one is not saved" \
	[ "$(python3 -c 'import json,sys; print(" ".join(sorted(a["name"] for a in json.load(open(sys.argv[1]))["artifacts"])))' "$T/out")" = "figure-1.png kept.png" ]

sbx_run run -c 'import matplotlib.pyplot as plt
plt.plot([1, 2, 3]); plt.savefig("chart.png"); print("saved")'
check "savefig outside /out: one line saying it is not returned and where to save it" \
	[ "$(cat "$T/err")" = "sbx: /tmp/chart.png is outside /out and is not returned; save it as /out/chart.png" ]
check "and the program's own output is unchanged" [ "$(cat "$T/out")" = saved ]
sbx_run run --artifacts "$T/a3" -c 'import matplotlib.pyplot as plt
plt.plot([1]); plt.savefig("/out/x.svg"); plt.savefig("/out/sub.png")'
diag "$(cat "$T/err")"
check "savefig into /out: no line" [ ! -s "$T/err" ]

# --jsonl: events as written
run_as sbxtest "$SBX" run --jsonl -c 'import time
for i in range(3):
    print("tick", i, time.monotonic())
    time.sleep(0.8)' </dev/null 2>"$T/err" | /usr/bin/python3 -c 'import json, sys, time
buf = ""
for line in sys.stdin:
    e = json.loads(line)
    if e.get("event") == "stdout":
        buf += e["data"]
        while chr(10) in buf:  # print() may write its words one by one
            done, buf = buf.split(chr(10), 1)
            print("%.3f %s" % (time.monotonic(), done))' > "$T/ticks"
diag "$(cat "$T/ticks")"
check "three prints 0.8 s apart: three stdout events, each within 200 ms of its print" python3 -c 'import sys
t = [l.split() for l in open(sys.argv[1])]
late = [float(x[0]) - float(x[3]) for x in t]
sys.exit(0 if [x[2] for x in t] == ["0", "1", "2"] and all(-0.05 <= d <= 0.2 for d in late) else 1)' "$T/ticks"
finish
