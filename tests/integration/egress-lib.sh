# SPDX-License-Identifier: ISC
# Shared by the egress tests (tests/integration/75-79, tests/escape/31-34;
# sourced after lib.sh). A test network that lives only as long as the
# test: a network namespace "the server host" joined to the host by a veth
# pair, with two addresses, a listener that logs what reaches it, and
# optionally PostgreSQL run as the unprivileged test user sbxpg. Names are
# pinned for the run in a private mount namespace (egress_sbx), so the
# host's /etc/hosts is never touched. Everything is removed on exit.
# the system interpreter (the one with psycopg2), not a version manager's shim
python3() { /usr/bin/python3 "$@"; }
EG_ID=$$
EG_NS=sbxeg$EG_ID
EG_IF=sbxe$EG_ID
# a /24 picked from the pid, in 10.200.0.0/16 (not an outside address)
EG_NET=10.200.$((EG_ID % 250 + 1))
EG_HOST=$EG_NET.1     # the host's end of the veth
EG_SRV=$EG_NET.2      # the server host
EG_SRV2=$EG_NET.3     # a second address of the server host
EG_POL=$P/etc/sbx/policies.d
EG_LIB=$SBX_SRCDIR/tests/integration
EG_PIDS=
eg_cleanup() {
	for p in $EG_PIDS; do kill "$p" 2>/dev/null; done
	[ -n "${EG_PG:-}" ] && [ -d "$EG_PG" ] &&
		ip netns exec "$EG_NS" setpriv --reuid=sbxpg --regid=sbxpg --clear-groups \
			"$EG_PGBIN/pg_ctl" -D "$EG_PG/data" -m immediate stop >/dev/null 2>&1
	ip netns del "$EG_NS" 2>/dev/null
	ip link del "$EG_IF"a 2>/dev/null
	rm -f "$EG_POL"/eg-*.policy
	rm -rf "$T"
}
trap eg_cleanup EXIT

# eg_net_up: the namespace, the veth pair, both addresses
eg_net_up() {
	ip netns add "$EG_NS" &&
	ip link add "$EG_IF"a type veth peer name "$EG_IF"b &&
	ip link set "$EG_IF"b netns "$EG_NS" &&
	ip addr add "$EG_HOST/24" dev "$EG_IF"a && ip link set "$EG_IF"a up &&
	ip -n "$EG_NS" addr add "$EG_SRV/24" dev "$EG_IF"b &&
	ip -n "$EG_NS" addr add "$EG_SRV2/24" dev "$EG_IF"b &&
	ip -n "$EG_NS" link set "$EG_IF"b up && ip -n "$EG_NS" link set lo up &&
	# the server host's listeners run as sbxpg, on DNS's port too
	ip netns exec "$EG_NS" sysctl -qw net.ipv4.ip_unprivileged_port_start=0
}

# eg_net6_up: IPv6 on the same veth pair (fd77:N::1 the host, ::2 the server host)
EG_SRV6=fd77:$((EG_ID % 250 + 1))::2
EG_HOST6=fd77:$((EG_ID % 250 + 1))::1
eg_net6_up() {
	ip addr add "$EG_HOST6/64" dev "$EG_IF"a nodad && ip -n "$EG_NS" addr add "$EG_SRV6/64" dev "$EG_IF"b nodad
}

# eg_listen WHERE LOG ADDR:PORT...: a listener (egress-listen.py) that logs
# what reaches it to LOG; WHERE is "ns" (the server host, as sbxpg), "host"
# (as sbxpg) or "caller" (the host, as sbxtest: the payload's own uid)
eg_listen() {
	where=$1 log=$2; shift 2
	: > "$log"
	chmod 0666 "$log"
	u=sbxpg
	[ "$where" = caller ] && u=sbxtest
	if [ "$where" = ns ]; then
		ip netns exec "$EG_NS" setpriv --reuid=$u --regid=$u --clear-groups \
			/usr/bin/python3 "$EG_LIB/egress-listen.py" "$log" "$@" &
	else
		setpriv --reuid=$u --regid=$u --clear-groups /usr/bin/python3 "$EG_LIB/egress-listen.py" "$log" "$@" &
	fi
	EG_PIDS="$EG_PIDS $!"
	for _ in $(seq 50); do grep -q '^ready' "$log" && return 0; sleep 0.1; done
	return 1
}

# eg_pg_start: PostgreSQL on $EG_SRV:5432 and $EG_SRV2:5432 in the server
# host, run as sbxpg; database shop, table sales, role analyst (password
# "s3cret", scram-sha-256 over TCP)
eg_pg_start() {
	EG_PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -x "$EG_PGBIN/postgres" ] || return 1
	EG_PG=$T/pg
	install -d -o sbxpg -g sbxpg -m 0700 "$EG_PG" "$T/pgsock"
	pgrun() { ip netns exec "$EG_NS" setpriv --reuid=sbxpg --regid=sbxpg --clear-groups env -i PATH=/usr/bin:/bin "$@"; }
	pgrun "$EG_PGBIN/initdb" -D "$EG_PG/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
		>"$T/initdb.log" 2>&1 || return 1
	# the test network's clients (the relay connects from the host's end)
	echo "host all all $EG_NET.0/24 scram-sha-256" >> "$EG_PG/data/pg_hba.conf"
	pgrun "$EG_PGBIN/pg_ctl" -D "$EG_PG/data" -l "$EG_PG/log" -w -t 30 \
		-o "-c listen_addresses=$EG_SRV,$EG_SRV2 -c port=5432 -k $T/pgsock -c fsync=off" start >/dev/null || return 1
	pgrun psql -q -h "$T/pgsock" -U postgres -d postgres -v ON_ERROR_STOP=1 >/dev/null <<-EOF || return 1
	CREATE ROLE analyst LOGIN PASSWORD 's3cret';
	CREATE DATABASE shop OWNER analyst;
	\connect shop
	CREATE TABLE sales (day date, region text, amount numeric);
	INSERT INTO sales SELECT date '2026-01-01' + (i % 30), (ARRAY['north','south','east'])[1 + i % 3], i * 1.5
	  FROM generate_series(1, 300) AS i;
	GRANT SELECT ON sales TO analyst;
	CREATE TABLE blob (b bytea);
	GRANT SELECT, INSERT ON blob TO analyst;
	EOF
}

# eg_policy NAME BODY: a root-owned policy eg-NAME (removed on exit): the
# shipped default's files and environment, then BODY
eg_policy() {
	printf '[policy]\ndescription = egress test\n[filesystem]\n%s\n[env]\n%s\n%s\n' \
		"$(grep '^ro = ' "$SBX_SRCDIR/policies/default.policy")" \
		"$(grep '^set = ' "$SBX_SRCDIR/policies/default.policy")" "$2" > "$EG_POL/eg-$1.policy"
	chmod 0644 "$EG_POL/eg-$1.policy"
}

# egress_sbx ARGS...: sbx run as sbxtest with the test names pinned (the
# test's own /etc/hosts and a resolver that answers nothing, in a private
# mount namespace); stdout to $T/out, stderr to $T/err, status in $rc
printf '127.0.0.1\tlocalhost\n%s\tpg.sbx.test svc.sbx.test\n%s\tother.sbx.test\n' "$EG_SRV" "$EG_SRV2" > "$T/hosts"
printf 'nameserver 127.0.0.1\noptions attempts:1 timeout:1\n' > "$T/resolv.conf"
chmod 0644 "$T/hosts" "$T/resolv.conf"
egress_sbx() {
	unshare -m --propagation private sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf &&
		shift 2 && cd "$0" && exec setpriv --reuid=sbxtest --regid=sbxtest --init-groups \
		env -i PATH=/usr/bin:/bin HOME=/nonexistent "$@"' "$T" "$T/hosts" "$T/resolv.conf" "$SBX" "$@" \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# pj FILE EXPR: EXPR evaluated with d = the JSON document in FILE (as tests/escape/lib.sh)
command -v pj >/dev/null 2>&1 ||
	pj() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@" 2>/dev/null; }
