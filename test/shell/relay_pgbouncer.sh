#!/usr/bin/env bash
# relay_pgbouncer: okno-relay through PgBouncer in transaction pooling mode
# (Debian's pgbouncer, on a private Unix socket, auth trust), where LISTEN
# cannot work: with --wait=server it waits in CALL okno_wait, one autocommit
# statement, and 20 creates made directly on the server, each in a
# transaction of its own, arrive within seconds although --poll is 30, each
# exactly once.  SIGTERM during the wait is forwarded as a cancel by
# PgBouncer, and the relay exits 0 at once.  Then two relays (the default
# subscriber and journal) wait through the pool while four clients make 200
# creates through it, calling okno unqualified: the relays leave nothing in
# the server sessions they share with the clients (the relay's session
# search_path once made most of those creates fail with 42883), every
# create succeeds and replays, and each relay delivers each event exactly
# once.  Skipped when pgbouncer is not installed and cannot be (not root).
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
# (it refuses to run as root: as the postgres user, like the server).  Its
# reset settings are Debian's defaults (server_reset_query DISCARD ALL is
# not run in transaction mode, server_reset_query_always off), and the
# pool is small: three server connections, two of them lent to the two
# relays' waits below, so that every client's statement runs on a server
# connection a relay has used.
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
default_pool_size = 3
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
wait_until 60 test -S "$pgb/.s.PGSQL.$bport"
if [ ! -S "$pgb/.s.PGSQL.$bport" ]; then
	not_ok "pgbouncer starts" "$(cat "$work/pgbouncer.start" "$pgb/pgbouncer.log" 2>/dev/null | tail -n 5)"
	exit 1
fi
ok "pgbouncer $("$PGBOUNCER" --version | sed -n '1s/^PgBouncer //p') listens on its own socket, pool_mode transaction"
stop_pgbouncer() {
	local p
	p=$(cat "$pgb/pgbouncer.pid" 2>/dev/null)
	[ -n "$p" ] && kill -INT "$p" 2>/dev/null
	wait_until 60 exited "$p" 2>/dev/null
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
wait_until 60 in_okno_wait
check "through pgbouncer the relay waits in CALL okno_wait (wait_event Extension, no backend_xmin)" \
	"active|Extension|true" "$(wait_state)"
check "... in server mode, with no fallback to LISTEN" "1|0" \
	"$(grep -c '^okno-relay: waiting between batches: server$' "$work/relay.err")|$(grep -c 'no okno_wait' "$work/relay.err")"

started=$SECONDS
for i in $(seq 1 20); do
	book "$db" "$i" 1	# on the server directly, a transaction each
	sleep 0.05
done
wait_until 60 at_least 20 "$work/relay.out"
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

wait_until 60 in_okno_wait
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
wait_until 60 no_wait
check "... and the server's okno_wait has ended" "" "$(wait_state)"
check "the relay logged no error" "" \
	"$(grep -vE '^okno-relay: (connected to|waiting between batches|delivered [0-9]+|stopped by signal)' "$work/relay.err")"

# --- other clients of the pool ------------------------------------------------
# Two relays (the default subscriber, and journal, added with okno_subscribe)
# wait through the pool while four clients make 200 creates through it,
# calling okno unqualified, as an application does (the database's own
# search_path, "$user", public).  Whatever a relay leaves in a server
# session (a session setting such as search_path, a lock, a prepared
# statement) reaches the client the pool lends that connection to next:
# every create must succeed, every replay of its key give the same booking,
# and each relay deliver each of the 200 events exactly once.
q "$db" "SELECT okno_subscribe('journal')" >/dev/null
last=$(q "$db" "SELECT id FROM outbox ORDER BY id DESC LIMIT 1")
start_relay pool_default --dbname "$via" --poll 30
relay_default=$RELAY_PID
start_relay pool_journal --dbname "$via" --subscriber journal --poll 30
relay_journal=$RELAY_PID
two_waits() { [ "$(wait_state | grep -c '^active|Extension|true$')" -eq 2 ]; }
wait_until 60 two_waits
check "both relays wait in okno_wait through the pool" 2 "$(wait_state | grep -c '^active|Extension|true$')"

# client N's statements: creates of bookings 1000+50N+1 .. 1000+50N+50,
# keys p<i>, one hour each from 2026-12-01 (none overlaps another)
for c in 0 1 2 3; do
	python3 - "$c" >"$work/client$c.sql" <<'PY'
import datetime, sys
c = int(sys.argv[1])
t0 = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
for i in range(1000 + 50 * c + 1, 1000 + 50 * c + 51):
    s = t0 + datetime.timedelta(hours=i)
    e = s + datetime.timedelta(hours=1)
    f = "%Y-%m-%dT%H:%M:%SZ"
    print("SELECT 'p%d|' || okno_create_booking(1, 'p%d', '{\"resource_id\": 1, \"starts_at\": \"%s\", \"ends_at\": \"%s\"}')::text;"
          % (i, i, s.strftime(f), e.strftime(f)))
PY
done
# clients PASS: the four run at once, each statement a transaction of its own
clients() {
	local c pids=()
	for c in 0 1 2 3; do
		timeout 120 "$PGBIN/psql" -X -q -At -d "$via" -f "$work/client$c.sql" \
			>"$work/client$c.$1.out" 2>"$work/client$c.$1.err" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$work"/client?."$1".out | sort >"$work/$1.out"
	cat "$work"/client?."$1".err >"$work/$1.err"
}
clients first
check "200 creates through the pool, okno unqualified, beside both relays: all succeed" "200|0" \
	"$(lines "$work/first.out")|$(grep -c 'ERROR' "$work/first.err")"
if grep -q ERROR "$work/first.err"; then
	echo "# $(grep -m 1 ERROR "$work/first.err")"
fi
clients replay
check "... and a replay of each key through the pool gives the same booking" "" \
	"$(diff "$work/first.out" "$work/replay.out" | head -n 3; grep -m 1 ERROR "$work/replay.err")"
check "the database has the 200 bookings" 200 "$(q "$db" "SELECT count(*) FROM idempotency WHERE request_key LIKE 'p%'")"

# each relay: the 200 events written after the subscription, each once
ids_of() {	# ids_of FILE: the event ids of a relay's JSON lines, sorted
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["event_id"])
' "$1" | sort
}
want=$(q "$db" "SELECT id FROM outbox WHERE id > '$last' ORDER BY id")
check "... and 200 events in the outbox" 200 "$(echo "$want" | grep -c .)"
for r in default journal; do
	wait_until 60 at_least 200 "$work/pool_$r.out"
	check "the $r relay delivered each of the 200 events exactly once" "$want" "$(ids_of "$work/pool_$r.out")"
done
stop_relay "$relay_default" 10
check "SIGTERM: the default relay exits 0" 0 "$STOP_RC"
stop_relay "$relay_journal" 10
check "SIGTERM: the journal relay exits 0" 0 "$STOP_RC"
check "neither relay logged an error" "" \
	"$(cat "$work/pool_default.err" "$work/pool_journal.err" | grep -vE '^okno-relay: (stopped by signal)')"
