#!/usr/bin/env bash
# relay_pgbouncer: okno-relay through PgBouncer in transaction pooling mode
# (Debian's pgbouncer, on a private Unix socket, auth trust), where LISTEN
# cannot work: with --wait=server it waits in CALL okno_wait, one autocommit
# statement, and 20 creates made directly on the server, each in a
# transaction of its own, arrive within seconds although --poll is 30, each
# exactly once.  SIGTERM during the wait is forwarded as a cancel by
# PgBouncer, and the relay exits 0 at once.  Skipped when pgbouncer is not
# installed and cannot be (not root).
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

PGBOUNCER=/usr/sbin/pgbouncer
if [ ! -x "$PGBOUNCER" ]; then
	# Debian's package, through tools/lib.sh's ensure_packages (as root)
	(top=$PWD PACKAGES=pgbouncer && . tools/lib.sh && ensure_packages relay_pgbouncer) >&2
fi
if [ ! -x "$PGBOUNCER" ]; then
	echo "ok - # SKIP pgbouncer is not installed (apt-get install pgbouncer)"
	exit 0
fi

db=okno_relay_pgbouncer
new_db "$db"
if [ "$(q "$db" "SELECT pg_catalog.to_regprocedure('public.okno_wait(integer,boolean)') IS NOT NULL")" != t ]; then
	echo "ok - # SKIP the installed okno has no okno_wait (install this checkout's okno first)"
	exit 0
fi

# --- PgBouncer on a Unix socket of its own ------------------------------------
# (it refuses to run as root: as the postgres user, like the server)
pgb=$work/pgbouncer
mkdir -p "$pgb"
bport=6432
server_dir=$PGHOST
case "$server_dir" in /*) ;; *) server_dir=$(cd "$server_dir" && pwd) ;; esac
cat >"$pgb/pgbouncer.ini" <<EOF
[databases]
$db = host=$server_dir port=$PGPORT dbname=$db

[pgbouncer]
listen_addr =
listen_port = $bport
unix_socket_dir = $pgb
auth_type = trust
auth_file = $pgb/userlist.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 50
logfile = $pgb/pgbouncer.log
pidfile = $pgb/pgbouncer.pid
EOF
echo "\"${PGUSER:-postgres}\" \"\"" >"$pgb/userlist.txt"
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$pgb"
	runuser -u postgres -- "$PGBOUNCER" -d "$pgb/pgbouncer.ini" >"$work/pgbouncer.start" 2>&1
else
	"$PGBOUNCER" -d "$pgb/pgbouncer.ini" >"$work/pgbouncer.start" 2>&1
fi
wait_until 10 test -S "$pgb/.s.PGSQL.$bport"
if [ ! -S "$pgb/.s.PGSQL.$bport" ]; then
	not_ok "pgbouncer starts" "$(cat "$work/pgbouncer.start" "$pgb/pgbouncer.log" 2>/dev/null | tail -n 5)"
	exit 1
fi
ok "pgbouncer $("$PGBOUNCER" --version | sed -n '1s/^PgBouncer //p') listens on its own socket, pool_mode transaction"
stop_pgbouncer() {
	local p
	p=$(cat "$pgb/pgbouncer.pid" 2>/dev/null)
	[ -n "$p" ] && kill -INT "$p" 2>/dev/null
	wait_until 10 exited "$p" 2>/dev/null
}
trap 'stop_pgbouncer; cleanup' EXIT

via="host=$pgb port=$bport dbname=$db"
check "a session through pgbouncer reaches the database" "$db" \
	"$("$PGBIN/psql" -X -At -d "$via" -c "SELECT current_database()")"

# --- the relay through pgbouncer ------------------------------------------------
# the relay's wait, seen on the server: state|wait_event|xmin is null
wait_state() {
	q postgres "SELECT state || '|' || coalesce(wait_event, '') || '|' || (backend_xmin IS NULL)
	              FROM pg_stat_activity
	             WHERE datname = '$db' AND query LIKE 'CALL %okno_wait(%' AND state = 'active'"
}
in_okno_wait() { [ "$(wait_state)" = "active|Extension|true" ]; }

start_relay relay --dbname "$via" --wait=server --poll 30 --verbose
relay=$RELAY_PID
wait_until 10 in_okno_wait
check "through pgbouncer the relay waits in CALL okno_wait (wait_event Extension, no backend_xmin)" \
	"active|Extension|true" "$(wait_state)"
check "... in server mode, with no fallback to LISTEN" "1|0" \
	"$(grep -c '^okno-relay: waiting between batches: server$' "$work/relay.err")|$(grep -c 'no okno_wait' "$work/relay.err")"

started=$SECONDS
for i in $(seq 1 20); do
	book "$db" "$i" 1	# on the server directly, a transaction each
	sleep 0.05
done
wait_until 20 at_least 20 "$work/relay.out"
took=$((SECONDS - started))
check "20 creates made on the server arrive through pgbouncer" 20 "$(lines "$work/relay.out")"
if [ "$took" -lt 20 ]; then
	ok "... woken by their commits, not by --poll 30 ($took s)"
else
	not_ok "... woken by their commits, not by --poll 30" "$took s"
fi
check "... each exactly once" 20 "$(sort -u "$work/relay.out" | wc -l | tr -d ' ')"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["event_id"])
' "$work/relay.out" | sort >"$work/ids"
check "... and they are the outbox's 20 events" \
	"$(q "$db" "SELECT id FROM outbox ORDER BY id")" "$(cat "$work/ids")"
check "all 20 are delivered in the table" "20/0" \
	"$(q "$db" "SELECT count(*) FILTER (WHERE delivered_at IS NOT NULL) || '/' || count(*) FILTER (WHERE delivered_at IS NULL) FROM outbox")"

wait_until 10 in_okno_wait
started=$(date +%s%N)
stop_relay "$relay" 10
ms=$((($(date +%s%N) - started) / 1000000))
check "SIGTERM during the wait (cancelled through pgbouncer): exit status 0" 0 "$STOP_RC"
if [ "$ms" -lt 3000 ]; then
	ok "... at once: $ms ms"
else
	not_ok "... at once" "$ms ms"
fi
no_wait() { [ -z "$(wait_state)" ]; }
wait_until 5 no_wait
check "... and the server's okno_wait has ended" "" "$(wait_state)"
check "the relay logged no error" "" \
	"$(grep -vE '^okno-relay: (connected to|waiting between batches|delivered [0-9]+|stopped by signal)' "$work/relay.err")"
