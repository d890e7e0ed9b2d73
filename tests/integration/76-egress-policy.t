#!/bin/sh
# SPDX-License-Identifier: ISC
# [network] mode = allow, the administrator's and the caller's side: bad
# entries, an empty list, names that do not resolve when the run starts
# (each one line naming the policy file, its line and why, exit 125),
# --allow narrowing the list and never widening it, every pinned address
# of a name, what sbx policies and --dry-run show, and a policy that is
# not root's granting nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/egress-lib.sh"
plan 26

eg_net_up || { echo "Bail out! cannot create the test network"; exit 1; }
eg_listen ns "$T/srv.log" "$EG_SRV:7000" "$EG_SRV:7001" "$EG_SRV2:7000" || { echo "Bail out! listener"; exit 1; }
printf '%s\ttwo.sbx.test\n%s\ttwo.sbx.test\n' "$EG_SRV" "$EG_SRV2" >> "$T/hosts"

# one line on stderr naming FILE:LINE and the reason, exit 125
one_line() { [ "$rc" = "${2:-125}" ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qF -e "$1" "$T/err"; }

eg_policy port0 "[network]
mode = allow
allow = svc.sbx.test:7000 svc.sbx.test:0"
egress_sbx run --policy eg-port0 -c pass
check "port 0: refused with the file, the line and why" \
	one_line "$EG_POL/eg-port0.policy:9: allow: 'svc.sbx.test:0': port 0 is not a port (1 to 65535)"
eg_policy empty "[network]
mode = allow"
egress_sbx run --policy eg-empty -c pass
check "mode = allow with no service: refused, naming the mode line" \
	one_line "$EG_POL/eg-empty.policy:8: mode = allow needs at least one service: allow = HOST:PORT ..."
eg_policy noport "[network]
mode = allow
allow = svc.sbx.test"
egress_sbx run --policy eg-noport -c pass
check "an entry without a port: refused" one_line "eg-noport.policy:9: allow: 'svc.sbx.test': no port (write HOST:PORT)"
eg_policy v6bare "[network]
mode = allow
allow = 2001:db8::1:443"
egress_sbx run --policy eg-v6bare -c pass
check "an IPv6 address without brackets: refused" one_line "allow: '2001:db8::1:443': an IPv6 address is written [ADDRESS]:PORT"

eg_policy unres "[network]
mode = allow
allow = svc.sbx.test:7000
allow_more_is_no_key = 1"
egress_sbx run --policy eg-unres -c pass
check "an unknown key in [network]: refused" one_line "eg-unres.policy:10: unknown key 'allow_more_is_no_key' in [network]"
eg_policy gone "[network]
mode = allow
allow = svc.sbx.test:7000 nothere.sbx.test:5432"
before=$("$AUDIT" list --limit 0 2>/dev/null | wc -l)
egress_sbx run --json --policy eg-gone -c 'print("ran")'
check "a name that does not resolve when the run starts: exit 125" [ "$rc" = 125 ]
check "... the message names the policy file, the line and the name" \
	sh -c 'grep -qF "$1:9: allow: '"'"'nothere.sbx.test'"'"' does not resolve" "$2"' _ "$EG_POL/eg-gone.policy" "$T/out"
check "... nothing ran" sh -c '! grep -q "\"stdout\": \"ran" "$1"' _ "$T/out"
check "... and the attempt is audited (sandbox_error)" sh -c '
	id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"id\"])" "$1") &&
	"$2" show "$id" | grep -Eq "^  outcome +sandbox_error"' _ "$T/out" "$AUDIT"

eg_policy two "[network]
mode = allow
allow = svc.sbx.test:7000 svc.sbx.test:7001 two.sbx.test:7000
connections = 5
bytes_out = 1M
bytes_in = 2M"
cat > "$T/probe.py" <<EOF
import socket, sys
print(open("/etc/hosts").read().strip().replace("\t", " "))
for a in ("svc.sbx.test:7000", "svc.sbx.test:7001", "$EG_SRV2:7000"):
    h, p = a.rsplit(":", 1)
    try:
        s = socket.create_connection((h, int(p)), timeout=5)
        s.sendall(b"hi\n")
        print(a, s.recv(64).decode().strip())
    except OSError as e:
        print(a, type(e).__name__)
EOF
chmod 0644 "$T/probe.py"
egress_sbx run --policy eg-two "$T/probe.py"
check "all three services reachable without --allow" sh -c '[ "$(grep -c "echo:hi" "$1")" = 3 ]' _ "$T/out"
check "every address of a name is pinned" sh -c 'grep -qx "$2 two.sbx.test" "$1" && grep -qx "$3 two.sbx.test" "$1"' _ \
	"$T/out" "$EG_SRV" "$EG_SRV2"
egress_sbx run --policy eg-two --allow svc.sbx.test:7001 "$T/probe.py"
check "--allow: the one service picked is reachable" grep -q "^svc.sbx.test:7001 echo:hi" "$T/out"
check "--allow: the policy's other port of that host is refused" grep -q "^svc.sbx.test:7000 ConnectionRefusedError" "$T/out"
check "--allow: another entry of the policy is unreachable" grep -q "^$EG_SRV2:7000 OSError" "$T/out"
check "--allow: the names left out are not pinned" sh -c '! grep -q two.sbx.test "$1"' _ "$T/out"
egress_sbx run --policy eg-two --allow svc.sbx.test:7002 -c pass
check "--allow cannot add a service: refused by policy (77), named" \
	one_line "--allow: svc.sbx.test:7002 is not in the allow list of policy 'eg-two'" 77
egress_sbx run --allow svc.sbx.test:7000 -c pass
check "--allow under a policy without network: refused" \
	one_line "--allow: policy 'default' allows no network services (its [network] mode is none)" 77
egress_sbx run --policy eg-two --allow 'svc.sbx.test:99999' -c pass
check "--allow with a bad port: refused by sbx itself" sh -c '[ "$1" = 125 ] && grep -q "^sbx: --allow: .*the port is not a number from 1 to 65535" "$2"' _ "$rc" "$T/err"

egress_sbx run --dry-run --policy eg-two --allow svc.sbx.test:7000 -c pass
check "dry-run: the network mode, the services and the limits" sh -c '
	grep -qx "network: allow" "$1" && grep -qx "network_allow: svc.sbx.test:7000" "$1" &&
	[ "$(grep -c "^network_allow:" "$1")" = 1 ] && grep -qx "network_connections: 5" "$1" &&
	grep -qx "network_bytes_out: 1048576" "$1" && grep -qx "network_bytes_in: 2097152" "$1"' _ "$T/out"
egress_sbx run --dry-run --json --policy eg-two -c pass
check "dry-run --json: the services as a list" [ "$(jget network_allow.2)" = "two.sbx.test:7000" ]
egress_sbx policies
check "sbx policies: the mode and the services" sh -c 'grep -Eq "^ eg-two .* allow " "$1" && grep -Eq "^ +allow: svc.sbx.test:7000 svc.sbx.test:7001 two.sbx.test:7000$" "$1"' _ "$T/out"
egress_sbx policies --json
check "sbx policies --json: allow" sh -c 'python3 -c "
import json,sys
d=[p for p in json.load(open(sys.argv[1])) if p[\"name\"]==\"eg-two\"][0]
sys.exit(d[\"network\"] != \"allow\" or d[\"allow\"] != [\"svc.sbx.test:7000\",\"svc.sbx.test:7001\",\"two.sbx.test:7000\"])" "$1"' _ "$T/out"

# only a root-owned policy grants anything: the caller's own file does not
cp "$EG_POL/eg-two.policy" "$EG_POL/eg-mine.policy"
chown sbxtest "$EG_POL/eg-mine.policy"
egress_sbx run --policy eg-mine -c pass
check "a policy owned by the caller is refused" sh -c '[ "$1" = 125 ] && grep -q "must be owned by root" "$2"' _ "$rc" "$T/err"
check "nothing reached the server host but the runs that were allowed" sh -c '
	[ "$(grep -c "^conn $2:7000" "$1")" = 1 ] && [ "$(grep -c "^conn $2:7001" "$1")" = 2 ] &&
	[ "$(grep -c "^conn $3:7000" "$1")" = 1 ]' _ "$T/srv.log" "$EG_SRV" "$EG_SRV2"
egress_sbx doctor
check "sbx doctor checks _sbxnet and sbx-relay" sh -c 'grep -q "^ok: accounts: users _sbx, _sbxsign and _sbxnet" "$1" &&
	grep -q "^ok: relay: .*/libexec/sbx/sbx-relay is root mode 0755" "$1"' _ "$T/out"
check "no relay of this prefix is left running" [ -z "$(eg_relays)" ]
finish
