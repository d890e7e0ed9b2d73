#!/bin/sh
# SPDX-License-Identifier: ISC
# Reports and searches across the hosts of a central store (issue 21
# item 3): `report --hosts DIR --keyring FILE` gives each host's report,
# each archive verified with its own host's key (text: a heading per host;
# json: {"hosts": [...]}; --html: an overview of the hosts and a view of
# each), `search --hosts DIR` one output over every archive. A tampered
# archive shows as not verified; without the keyring nothing claims to be.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fleet.sh"
plan 10
fleet_setup 3
sbx_run run -c 'print(114)'
sbx_run run -c 'raise SystemExit(2)'
export_a "$T/a1"; export_b "$T/b1"
imp "$HA" "$T/a1"; imp "$HB" "$T/b1"
"$AUDIT" report --hosts "$STORE" --keyring "$RING" >"$T/r" 2>&1; rc=$?
diag "$(grep -E '^(hosts|===|verify)' "$T/r")"
check "report --hosts: exit 0, 2 hosts, a heading for each, in order of origin" \
	sh -c "[ $rc = 0 ] && grep -qx 'hosts: 2 ($STORE)' '$T/r' && [ \"\$(grep '^=== host' '$T/r' | sed 's/=== host //; s/ ===//' | tr '\n' ' ')\" = \"\$(printf '%s\n' '$HA' '$HB' | sort | tr '\n' ' ')\" ]"
check "each host's archive verified with its own key (two 'verify: OK')" [ "$(grep -c '^verify: OK' "$T/r")" = 2 ]
"$AUDIT" report --hosts "$STORE" --keyring "$RING" --format json >"$T/j"; rc=$?
python3 - "$T/j" "$HA" "$HB" >"$T/jo" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = {x["origin"]: x for x in d["hosts"]}
assert set(h) == {sys.argv[2], sys.argv[3]}, h.keys()
for o, x in h.items():
    assert x["report"]["provenance"]["verified"] is True, o
    assert x["report"]["provenance"]["origin"] == o
print(h[sys.argv[2]]["report"]["summary"]["runs"], h[sys.argv[3]]["report"]["summary"]["runs"])
PY
jrc=$?; diag "$(cat "$T/jo")"
check "--format json: {hosts: [{origin, archive, report}]}, both verified" sh -c "[ $rc = 0 ] && [ $jrc = 0 ]"
check "host B's report counts its 3 runs" [ "$(cut -d' ' -f2 "$T/jo")" = 3 ]
"$AUDIT" report --hosts "$STORE" --keyring "$RING" --html "$T/r.html"; rc=$?
python3 - "$T/r.html" "$HA" "$HB" >"$T/ho" 2>&1 <<'PY'
import html.parser, sys
ids, text = [], []
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id": ids.append(v)
    def handle_data(self, d): text.append(d)
P().feed(open(sys.argv[1]).read())
t = "".join(text)
assert len(ids) == len(set(ids)), "duplicate ids"
assert "hosts" in ids and "h0" in ids and "h1" in ids, ids
assert "h0-summary" in ids and "h1-summary" in ids, ids
assert "Host " + sys.argv[2] in t and "Host " + sys.argv[3] in t
print(len(ids))
PY
hrc=$?; diag "$(cat "$T/ho")"
check "--html: an overview of the hosts, a view of each (ids unique, per-host sections)" sh -c "[ $rc = 0 ] && [ $hrc = 0 ]"
"$AUDIT" search --hosts "$STORE" --format jsonl >"$T/s"; rc=$?
hosts=$(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["host"] for l in open(sys.argv[1])})))' "$T/s")
diag "hosts in the search: $hosts"
check "search --hosts: runs of both hosts in one output (exit 0)" \
	sh -c "[ $rc = 0 ] && echo ' $hosts ' | grep -q ' hostb.example ' && [ \$(echo $hosts | wc -w) = 2 ]"
"$AUDIT" search --hosts "$STORE" --format json --failed >"$T/s"; rc=$?
check "search --hosts --format json --failed: one JSON array over both archives" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (sys.argv[2] == "0" and len(d) >= 1 and all(r["outcome"] != "ok" for r in d)))' "$T/s" "$rc"
"$AUDIT" search --hosts "$STORE" --format csv >"$T/c"
check "search --hosts --format csv: one header" [ "$(grep -c '^id,' "$T/c")" = 1 ]
"$AUDIT" report --hosts "$STORE" >"$T/r" 2>&1
check "without --keyring: nothing claims to be verified" sh -c "! grep -q '^verify: OK' '$T/r' && grep -q 'no key in the keyring' '$T/r'"
B_DB=$(archive "$HB")
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("update records set user=\"mallory\" where seq=1"); c.commit()' "$B_DB"
"$AUDIT" report --hosts "$STORE" --keyring "$RING" --format json >"$T/j"
check "a tampered archive: its host shows verified false, the other stays true" \
	python3 -c 'import json,sys; h={x["origin"]: x["report"]["provenance"]["verified"] for x in json.load(open(sys.argv[1]))["hosts"]}; sys.exit(not (h[sys.argv[2]] is False and h[sys.argv[3]] is True))' "$T/j" "$HB" "$HA"
finish
