#!/usr/bin/env bash
# load: a mixed load of two pgbench clients for 60 seconds against okno,
# then a verifier.  The weighted scripts (test/stress/*.pgbench) send new
# keys on a small grid of rooms and hours (so slots collide), new keys for
# one contested slot, replays of stored requests in another form, stored
# keys with other data, the same new key from both clients at once under
# READ COMMITTED and REPEATABLE READ, cancels and reads (by the owner and by
# another actor), relay batches (okno_drain(10) in a transaction, some with
# a failure recorded or an event released), requeues of parked events and a
# rare purge with short ages.  The wrappers in test/stress/load.sql catch
# okno's documented SQLSTATEs and count outcomes; anything undocumented
# aborts the client and is reported here.
#
# Checks: pgbench exited 0 and no client aborted; no outcome is unexplained;
# every booking was created by exactly one successful create; every booking
# has exactly one booking_created event and every cancelled booking one
# booking_cancelled event (counting events purged after delivery, from the
# drain log); every event was handed out exactly as often as the failures
# and releases recorded for it allow; after the load, with the parked
# events requeued, a drain delivers every remaining event; okno_verify() is
# empty; the server was not restarted.  Prints throughput (per script, from
# pgbench's report) and the outcome counts.
#
# Runs against the cluster in PGHOST/PGPORT/PGUSER (as under tools/run) and
# PGBIN; creates database okno_stress_load and drops it at the end.
#   OKNO_LOAD_SECONDS  duration (default 60)
#   OKNO_STRESS_SEED   pgbench --random-seed (default: random, printed)
set -u
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "$0")" && pwd)
db=okno_stress_load
secs=${OKNO_LOAD_SECONDS:-60}
seed=${OKNO_STRESS_SEED:-$((RANDOM * 32768 + RANDOM))}
work=$(mktemp -d)

child=
cleanup() {
	# the long-running client, if a signal came while it ran
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	"$PGBIN/dropdb" --if-exists --force "$db" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

q() {	# q SQL: the result, unaligned
	"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"
}
check() {	# check DESCRIPTION WANT GOT
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1"
		echo "#   want: $2"
		echo "#   got:  $3"
	fi
}

case $seed in
'' | *[!0-9]*) echo "not ok - OKNO_STRESS_SEED must be a non-negative integer for pgbench, not '$seed'"; exit 1 ;;
esac
echo "# load: 2 clients, $secs s, pgbench --random-seed=$seed (OKNO_STRESS_SEED=$seed to repeat the choices)"

"$PGBIN/dropdb" --if-exists --force "$db" >/dev/null 2>&1
if ! "$PGBIN/createdb" "$db" 2>"$work/err"; then
	echo "not ok - create database $db: $(cat "$work/err")"
	exit 1
fi
if ! "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$here/load.sql" >"$work/setup.log" 2>&1; then
	echo "not ok - load test/stress/load.sql"
	sed 's/^/#   /' "$work/setup.log" | head -n 20
	exit 1
fi
started=$(q "SELECT pg_postmaster_start_time()")

# short retry delays, so failed events come back during the run, and 3
# attempts, so some are parked and requeued
scripts=(new@30 contested@5 replay@15 reuse@8 race_rc@4 race_rr@4 cancel@8 get@6 drain@15 requeue@2 purge@1)
args=()
for s in "${scripts[@]}"; do
	args+=(-f "$here/${s%@*}.pgbench@${s#*@}")
done
PGOPTIONS="-c okno.retry_base=20ms -c okno.retry_cap=200ms -c okno.max_attempts=3" \
	timeout --signal=INT --kill-after=30 $((secs + 120)) \
	"$PGBIN/pgbench" -n -c 2 -j 2 -T "$secs" --random-seed="$seed" "${args[@]}" "$db" \
	>"$work/pgbench.out" 2>"$work/pgbench.err" &
child=$!
wait "$child"
rc=$?
child=
check "pgbench exited 0" 0 "$rc"
aborted=$(grep -c 'aborted' "$work/pgbench.err")
check "no pgbench client aborted" 0 "$aborted"
if [ "$rc" -ne 0 ] || [ "$aborted" -ne 0 ]; then
	echo "#   pgbench's errors:"
	grep -E 'ERROR|aborted|FATAL|DETAIL|CONTEXT' "$work/pgbench.err" | sort | uniq -c | sort -rn | head -n 20 | sed 's/^/#     /'
fi

echo "# throughput (pgbench)"
grep -E '^(number of transactions actually processed|number of failed transactions|latency average|tps = )' "$work/pgbench.out" | sed 's/^/#   /'
# "SQL script 1: /path/new.pgbench" then " - 12345 transactions (40.1% of total, tps = 205.7)"
awk '/^SQL script [0-9]+:/ { n = $NF; sub(/.*\//, "", n); sub(/\.pgbench$/, "", n) }
     / - [0-9]+ transactions \(/ && n != "" { t = $2; tps = $NF; sub(/\)$/, "", tps);
        printf "#   %-10s %8d transactions  %8.1f tps\n", n, t, tps; n = "" }' "$work/pgbench.out"
check "every script ran" "${#scripts[@]}" \
	"$(awk '/ - [0-9]+ transactions \(/ && $2 > 0 { k++ } END { print k + 0 }' "$work/pgbench.out")"

echo "# outcomes (script, function, outcome, count)"
q "SELECT format('#   %-10s %-20s %-28s %7s', script, fn, outcome, count(*)) FROM lt.outcomes
    GROUP BY script, fn, outcome ORDER BY script, fn, count(*) DESC"
echo "# $(q "SELECT format('%s events handed out by %s drains, %s failures recorded, %s releases, %s keys and events purged by %s purges',
	(SELECT count(*) FROM lt.deliveries), (SELECT count(*) FROM lt.outcomes WHERE fn = 'okno_drain'),
	(SELECT count(*) FROM lt.failures), (SELECT count(*) FROM lt.releases),
	(SELECT coalesce(sum(n), 0) FROM lt.outcomes WHERE fn = 'okno_purge'), (SELECT count(*) FROM lt.outcomes WHERE fn = 'okno_purge'))")"

check "no unexplained outcome" "" \
	"$(q "SELECT string_agg(format('%s x %s %s', n, script, outcome), '; ')
	        FROM (SELECT script, outcome, count(*) AS n FROM lt.outcomes WHERE outcome LIKE 'UNEXPLAINED%'
	               GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 10) AS u")"
check "every booking was made by exactly one successful create" \
	"$(q "SELECT count(*) FROM bookings")" \
	"$(q "SELECT count(*) FROM lt.outcomes WHERE fn = 'okno_create_booking' AND outcome IN ('created', 'created after purge')")"
# every event ever written: still in the outbox, or delivered and purged (then in the drain log)
events="(SELECT id, kind, (payload ->> 'booking_id')::bigint AS booking_id FROM outbox
         UNION SELECT event_id, kind, booking_id FROM lt.deliveries)"
check "every booking has exactly one booking_created event (purged ones counted from the drain log)" \
	"$(q "SELECT count(*) FROM bookings")/0" \
	"$(q "SELECT format('%s/%s', count(*), count(*) FILTER (WHERE n <> 1))
	        FROM (SELECT booking_id, count(*) AS n FROM $events AS e WHERE kind = 'booking_created' GROUP BY 1) AS x")"
check "every cancelled booking has exactly one booking_cancelled event" \
	"$(q "SELECT count(*) FROM bookings WHERE status = 'cancelled'")/0" \
	"$(q "SELECT format('%s/%s', count(*), count(*) FILTER (WHERE n <> 1))
	        FROM (SELECT booking_id, count(*) AS n FROM $events AS e WHERE kind = 'booking_cancelled' GROUP BY 1) AS x")"
check "every event was handed out once, plus once per recorded failure and release (none twice at once, none lost)" 0 \
	"$(q "WITH h AS (SELECT event_id, count(*) AS n FROM lt.deliveries GROUP BY 1),
	           f AS (SELECT event_id, count(*) AS n FROM lt.failures GROUP BY 1),
	           r AS (SELECT event_id, count(*) AS n FROM lt.releases GROUP BY 1)
	      SELECT count(*)
	        FROM (SELECT id FROM $events AS x) AS e
	        LEFT JOIN outbox AS o ON o.id = e.id
	        LEFT JOIN h ON h.event_id = e.id LEFT JOIN f ON f.event_id = e.id LEFT JOIN r ON r.event_id = e.id
	       WHERE coalesce(h.n, 0) <> coalesce(f.n, 0) + coalesce(r.n, 0)
	                                 + CASE WHEN o.id IS NULL OR o.delivered_at IS NOT NULL THEN 1 ELSE 0 END")"

# After the load: unpark what is parked, wait out the retry delays, drain
# everything; then no event may be left undelivered.
q "SELECT count(okno_requeue(id)) FROM outbox WHERE parked_at IS NOT NULL AND delivered_at IS NULL" >/dev/null
sleep 1
for _ in 1 2 3 4 5; do
	q "SELECT lt.drain(10000, false, false)" >/dev/null
done
check "after the load a drain delivers every remaining event" 0 \
	"$(q "SELECT count(*) FROM outbox WHERE delivered_at IS NULL")"
check "okno_verify() finds nothing" "" \
	"$(q "SELECT string_agg(problem || ': ' || detail, '; ') FROM (SELECT * FROM okno_verify() LIMIT 20) AS v")"
check "the server was not restarted" "$started" "$(q "SELECT pg_postmaster_start_time()" 2>&1)"
echo "# left behind: $(q "SELECT format('%s bookings (%s cancelled), %s keys, %s events',
	(SELECT count(*) FROM bookings), (SELECT count(*) FROM bookings WHERE status = 'cancelled'),
	(SELECT count(*) FROM idempotency), (SELECT count(*) FROM outbox))")"

"$PGBIN/dropdb" --force "$db"
check "the test database is dropped" 0 "$?"
