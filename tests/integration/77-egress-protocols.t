#!/bin/sh
# SPDX-License-Identifier: ISC
# [network] mode = allow relays at the transport layer, so clients work as
# they would anywhere, without a proxy: psql (PostgreSQL's own client, in
# a shell run), the MySQL protocol (MariaDB's server, which speaks first,
# and PyMySQL) and HTTPS with TLS end to end (Python's ssl verifying the
# service's certificate for the pinned name, the service seeing the name
# the client sent as SNI: the relay neither terminates nor alters TLS).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/egress-lib.sh"
plan 8

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_pg_start || { echo "Bail out! PostgreSQL did not start"; exit 1; }
eg_my_start || { echo "Bail out! MariaDB did not start: $(tail -3 "$T/my-install.log" "$T/my.log")"; exit 1; }
# a CA and a certificate for svc.sbx.test, the HTTPS service's
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=sbx-test-ca -keyout "$T/ca.key" -out "$T/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE >/dev/null 2>&1 &&
openssl req -newkey rsa:2048 -nodes -subj /CN=svc.sbx.test -keyout "$T/srv.key" -out "$T/srv.csr" >/dev/null 2>&1 &&
printf 'subjectAltName=DNS:svc.sbx.test\n' > "$T/ext" &&
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 -extfile "$T/ext" \
	-out "$T/srv.pem" >/dev/null 2>&1 || { echo "Bail out! openssl"; exit 1; }
chmod 0644 "$T/srv.key" "$T/srv.pem" "$T/ca.pem"
cat > "$T/https.py" <<'EOF'
import http.server, ssl, sys
log = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello over tls\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[4], sys.argv[5])
def sni(sock, name, c):
    log.write("sni %s\n" % name)  # and None: go on with the handshake
ctx.sni_callback = sni
srv = http.server.HTTPServer((sys.argv[2], int(sys.argv[3])), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
log.write("ready\n")
srv.serve_forever()
EOF
: > "$T/tls.log"; chmod 0666 "$T/tls.log"
ip netns exec "$EG_NS" setpriv --reuid=sbxpg --regid=sbxpg --clear-groups \
	/usr/bin/python3 "$T/https.py" "$T/tls.log" "$EG_SRV" 8443 "$T/srv.pem" "$T/srv.key" &
EG_PIDS="$EG_PIDS $!"
for _ in $(seq 50); do grep -q '^ready' "$T/tls.log" && break; sleep 0.1; done
eg_policy proto "[network]
mode = allow
allow = pg.sbx.test:5432 svc.sbx.test:8443 svc.sbx.test:3306"

egress_sbx run --policy eg-proto --lang sh -c 'PGPASSWORD=s3cret psql -h pg.sbx.test -U analyst -d shop -Atc "select count(*), sum(amount) from sales"'
diag "$(cat "$T/out" "$T/err")"
check "psql in a shell run queries the database by its pinned name" [ "$(cat "$T/out")" = "300|67725.0" ]

cat > "$T/my.py" <<'EOF'
import pymysql
c = pymysql.connect(host="svc.sbx.test", port=3306, user="analyst", password="s3cret", database="shop",
                    connect_timeout=5)
with c.cursor() as cur:
    cur.execute("select count(*), sum(amount) from sales")
    print(*cur.fetchone())
    print(c.get_server_info())
c.close()
EOF
chmod 0644 "$T/my.py"
egress_sbx run --json --policy eg-proto "$T/my.py"
jget stdout > "$T/res"
diag "$(cat "$T/res")" "$(head -c 600 "$T/err")" "$(pj "$T/out" "d[\"stderr\"][-400:]")"
check "the MySQL protocol (MariaDB greets first, PyMySQL answers) by the pinned name" \
	sh -c '[ "$(head -1 "$1")" = "300 67725.00" ] && grep -q MariaDB "$1"' _ "$T/res"
"$AUDIT" show --json "$(jget id)" > "$T/rec.json"
check "END: the MySQL connection, closed by the client, with its bytes" \
	[ "$(pj "$T/rec.json" '[(c["port"], c["end"], c["bytes_out"] > 100, c["bytes_in"] > 100) for c in d["end"]["network_connections"]]')" = "[(3306, 'closed', True, True)]" ]

cat > "$T/tls.py" <<'EOF'
import ssl, urllib.request
ctx = ssl.create_default_context(cafile="/in/ca.pem")
with urllib.request.urlopen("https://svc.sbx.test:8443/", context=ctx, timeout=10) as r:
    print(r.status, r.read().decode().strip())
try:
    # the same service under a name its certificate does not hold: refused by TLS itself
    urllib.request.urlopen("https://SRV:8443/", context=ctx, timeout=10)
    print("no-verify")
except Exception as e:
    print("verify", type(e).__name__)
EOF
sed -i "s/SRV/$EG_SRV/" "$T/tls.py"
chmod 0644 "$T/tls.py"
egress_sbx run --json --policy eg-proto --input "$T/ca.pem" "$T/tls.py"
jget stdout > "$T/res"
diag "$(cat "$T/res")" "$(head -c 600 "$T/err")" "$(pj "$T/out" "d[\"stderr\"][-400:]")"
check "HTTPS to the pinned name, certificate verified for it" grep -qx "200 hello over tls" "$T/res"
check "the service saw the name the client sent (SNI): TLS end to end" grep -qx "sni svc.sbx.test" "$T/tls.log"
check "the same certificate under the address is refused by the client's TLS, not by sbx" grep -qx "verify URLError" "$T/res"
id=$(jget id)
"$AUDIT" show --json "$id" > "$T/rec.json"
check "END: the TLS connections with their bytes" [ "$(pj "$T/rec.json" 'len([c for c in d["end"]["network_connections"] if c["port"] == 8443 and c["bytes_in"] > 500])')" = 2 ]
check "the run is audited (outcome ok)" [ "$(pj "$T/rec.json" 'd["end"]["outcome"]')" = ok ]
finish
