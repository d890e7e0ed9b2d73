#!/bin/sh
# SPDX-License-Identifier: ISC
# [network] mode = allow against a real PostgreSQL: an analyst's program
# (pandas.read_sql through psycopg2, a plot to /out) reaches the database
# by its pinned name, and the same run reaches nothing else: not another
# port of that host, not its other address, not the host's end of the
# test network or the host's loopback, and no DNS. Each refusal is
# immediate (ECONNREFUSED or ENETUNREACH, never a timeout). The server
# runs as sbxpg in a network namespace the test creates (egress-lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/egress-lib.sh"
plan 16

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_pg_start || { cat "$T/initdb.log" "$T/pg/log" 2>/dev/null | sed 's/^/# /'; echo "Bail out! PostgreSQL did not start"; exit 1; }
LOPORT=$((20000 + EG_ID % 10000))
eg_listen ns "$T/srv.log" "$EG_SRV:5433" || { echo "Bail out! listener"; exit 1; }
eg_listen host "$T/lo.log" "127.0.0.1:$LOPORT" "$EG_HOST:5432" || { echo "Bail out! listener"; exit 1; }
check "the host itself reaches the database's other address (so only the sandbox is kept off it)" \
	sh -c 'PGPASSWORD=s3cret psql -h "$1" -U analyst -d shop -Atc "select 1" >/dev/null' _ "$EG_SRV2"
eg_policy pg "[network]
mode = allow
allow = pg.sbx.test:5432
[limits]
wall_time = 60s
memory = 1G"

cat > "$T/report.py" <<EOF
import errno, json, socket, time
import matplotlib
matplotlib.use("Agg")
import pandas as pd
import psycopg2

res = {}
conn = psycopg2.connect(host="pg.sbx.test", dbname="shop", user="analyst", password="s3cret", connect_timeout=5)
df = pd.read_sql("SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region ORDER BY region", conn)
conn.close()
res["rows"] = int(df["n"].sum())
res["regions"] = list(df["region"])
ax = df.plot.bar(x="region", y="total", legend=False)
ax.figure.savefig("/out/sales.png")

def probe(host, port, fam=socket.AF_INET):
    t = time.monotonic()
    s = socket.socket(fam)
    s.settimeout(20)
    try:
        s.connect((host, port))
        r = "connected"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e))
    return [r, round(time.monotonic() - t, 3)]

res["other_port"] = probe("$EG_SRV", 5433)
res["other_addr"] = probe("$EG_SRV2", 5432)
res["host_side"] = probe("$EG_HOST", 5432)
res["host_lo"] = probe("127.0.0.1", $LOPORT)
for name in ("deb.debian.org", "other.sbx.test"):
    t = time.monotonic()
    try:
        socket.getaddrinfo(name, 443)
        res[name] = ["resolved", 0]
    except OSError as e:
        res[name] = [type(e).__name__, round(time.monotonic() - t, 3)]
res["pinned"] = socket.gethostbyname("pg.sbx.test")
res["resolv"] = open("/etc/resolv.conf").read()
print(json.dumps(res))
EOF
chmod 0644 "$T/report.py"
egress_sbx run --json --policy eg-pg --artifacts "$T/art" "$T/report.py"
diag "$(head -c 3000 "$T/err")" "$(head -c 3000 "$T/out")"
check "the run succeeds" [ "$rc" = 0 ]
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stdout"])' "$T/out" > "$T/res" 2>/dev/null
diag "$(cat "$T/res")"
r() { pj "$T/res" "$1"; }
check "pandas.read_sql through psycopg2 returns the rows" [ "$(r 'd["rows"]')" = 300 ]
check "... grouped by region" [ "$(r '",".join(d["regions"])')" = "east,north,south" ]
check "the plot reached the artifacts directory" python3 "$(dirname "$0")/pngcheck.py" "$T/art/sales.png" 640 480
check "the pinned name resolves to the database's address" [ "$(r 'd["pinned"]')" = "$EG_SRV" ]
# each refusal within a second: the kernel answers, nothing waits for a timeout
fast() { [ "$(r "d['$1'][0]")" = "$2" ] && [ "$(r "d['$1'][1] < 1")" = True ]; }
check "another port of the database host: ECONNREFUSED at once" fast other_port ECONNREFUSED
check "the database host's other address: ENETUNREACH at once" fast other_addr ENETUNREACH
check "the host's end of the test network: ENETUNREACH at once" fast host_side ENETUNREACH
check "the host's loopback: ECONNREFUSED at once (the sandbox's own lo)" fast host_lo ECONNREFUSED
check "a name outside the policy does not resolve, at once" fast deb.debian.org gaierror
check "a name the host resolves but the policy does not pin: not resolved" fast other.sbx.test gaierror
check "the sandbox has no resolver" [ "$(r 'len(d["resolv"].strip())')" = 0 ]
check "nothing reached the database host's other port" sh -c '! grep -q "^conn" "$1"' _ "$T/srv.log"
check "nothing reached the host's loopback or its end of the test network" sh -c '! grep -q "^conn" "$1"' _ "$T/lo.log"
id=$(jget id)
check "the run is audited" sh -c '"$1" show "$2" | grep -q "^END"' _ "$AUDIT" "$id"
finish
