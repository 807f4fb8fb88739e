#!/usr/bin/env bash
# bad_input: at least 100,000 random, mutated and valid calls through every
# okno function, each in its own subtransaction, made by a PL/pgSQL
# generator inside the database (test/stress/bad_input.sql), committed every
# few hundred calls.  Checks that
#   - the server never restarted and the calling session never lost its
#     connection,
#   - every call ended in success or a documented SQLSTATE (OKB01-OKB08,
#     22023, 22004, 40001, 25006), and every outcome the input decides
#     (bad key, payload built valid or invalid, replay, unknown event, ...)
#     is the one docs/REFERENCE.md promises; anything else is printed with its
#     input,
#   - okno_verify() is empty at the end, and every stored last_error is at
#     most 2000 bytes of valid text.
# Prints the seed, the tally (calls per function, outcomes per SQLSTATE)
# and the time taken.
#
# Runs against the cluster in PGHOST/PGPORT/PGUSER (as under tools/run) and
# PGBIN; creates database okno_stress_bad and drops it at the end.
#   OKNO_STRESS_SEED   seed, a non-negative integer (default: random, printed;
#                      the same variable load.sh reads)
#   OKNO_STRESS_CALLS  number of calls (default 100000)
#   OKNO_STRESS_TIMEOUT  seconds before the generator is stopped (default 900)
set -u
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "$0")" && pwd)
db=okno_stress_bad
calls=${OKNO_STRESS_CALLS:-100000}
limit=${OKNO_STRESS_TIMEOUT:-900}
seed=${OKNO_STRESS_SEED:-$((RANDOM * 32768 + RANDOM))}
case $seed in
'' | *[!0-9]*) echo "not ok - OKNO_STRESS_SEED must be a non-negative integer, not '$seed'"; exit 1 ;;
esac
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

q() {	# q SQL: one value from the test database
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

echo "# bad_input: $calls calls, seed $seed (OKNO_STRESS_SEED=$seed to repeat)"

"$PGBIN/dropdb" --if-exists --force "$db" >/dev/null 2>&1
if ! "$PGBIN/createdb" "$db" 2>"$work/err"; then
	echo "not ok - create database $db: $(cat "$work/err")"
	exit 1
fi
if ! "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$here/bad_input.sql" >"$work/setup.log" 2>&1; then
	echo "not ok - load test/stress/bad_input.sql"
	sed 's/^/#   /' "$work/setup.log" | head -n 20
	exit 1
fi

started=$(q "SELECT pg_postmaster_start_time()")

# The generator runs in one session, which prints its backend pid before
# and after: a crash of any backend would end it (and restart the server).
# It runs in the background so that a signal to this script stops it at once.
t0=$(date +%s)
timeout --signal=TERM --kill-after=10 "$limit" \
	"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" \
	-c "SET okno.retry_base = '1d'" \
	-c "SELECT 'pid ' || pg_backend_pid()" \
	-c "CALL stress.run($calls, ($seed % 2147483647) / 2147483647.0)" \
	-c "SELECT 'pid ' || pg_backend_pid()" \
	-c "SELECT 'read_only ' || current_setting('transaction_read_only')" \
	>"$work/run.out" 2>"$work/run.err" &
child=$!
wait "$child"
rc=$?
child=
t1=$(date +%s)
check "the generator session ran to the end (psql exit status)" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$work/run.err" | head -n 20
pids=$(grep -c '^pid ' "$work/run.out")
first=$(grep '^pid ' "$work/run.out" | head -n 1)
last=$(grep '^pid ' "$work/run.out" | tail -n 1)
check "the generator session kept its connection (same backend before and after)" "2 $first" "$pids $last"
check "the generator left the session read-write" "read_only off" "$(grep '^read_only ' "$work/run.out")"
check "the server was not restarted" "$started" "$(q "SELECT pg_postmaster_start_time()" 2>&1)"

made=$(q "SELECT count(*) FROM stress.calls")
notjson=$(q "SELECT n FROM stress.counters WHERE name = 'not_json'")
echo "# $made calls made in $((t1 - t0)) s ($notjson generated inputs were not JSON and were not sent)"
check "at least $calls calls reached okno" 1 "$(q "SELECT ($made >= $calls)::int")"

echo "# calls per function"
q "SELECT format('#   %-22s %7s', fn, count(*)) FROM stress.calls GROUP BY fn ORDER BY fn"
echo "# outcomes per SQLSTATE (ok_created/ok_replayed: okno_create_booking; ok_true/ok_false: release and requeue)"
q "SELECT format('#   %-12s %7s   %s', outcome, sum(n),
               string_agg(format('%s %s', fn, n), ', ' ORDER BY fn))
     FROM (SELECT outcome, fn, count(*) AS n FROM stress.calls GROUP BY 1, 2) AS x
    GROUP BY outcome ORDER BY outcome"

echo "# what the input decided (valid: exact canonical text or a documented success/conflict required;"
echo "#   invalid: OKB02 required; bad key: OKB01; replay: the stored response; reuse: OKB04; read-only: 25006)"
q "SELECT format('#   %-22s %s', fn, string_agg(format('%s %s', kind, n), ', ' ORDER BY kind))
     FROM (SELECT fn, kind, count(*) AS n FROM stress.calls WHERE kind IS NOT NULL GROUP BY 1, 2) AS x
    GROUP BY fn ORDER BY fn"

bad=$(q "SELECT count(*) FROM stress.unexpected")
check "every call ended in success or a documented SQLSTATE" 0 \
	"$(q "SELECT count(*) FROM stress.calls WHERE outcome NOT LIKE 'ok%' AND NOT stress.documented(outcome)")"
check "every outcome the input decides is the one the README promises" 0 "$bad"
if [ "$bad" -gt 0 ]; then
	echo "#   unexpected outcomes by kind:"
	q "SELECT format('#     %s x %s: %s %s', count(*), fn, outcome, problem)
	     FROM stress.unexpected GROUP BY fn, outcome, problem ORDER BY count(*) DESC LIMIT 30"
	echo "#   the first of each kind, with its input:"
	q "SELECT format(E'#     [%s] %s -> %s: %s\n#         %s\n#         input: %s', seq, fn, outcome, problem,
	                 coalesce(message, ''), coalesce(input, ''))
	     FROM (SELECT DISTINCT ON (fn, outcome, problem) * FROM stress.unexpected
	            ORDER BY fn, outcome, problem, seq) AS u ORDER BY seq LIMIT 30"
fi

check "okno_verify() finds nothing" "" \
	"$(q "SELECT string_agg(problem || ': ' || detail, '; ') FROM (SELECT * FROM okno_verify() LIMIT 20) AS v")"
check "every last_error is at most 2000 bytes" 0 \
	"$(q "SELECT count(*) FROM outbox WHERE octet_length(last_error) > 2000")"
check "every last_error is valid UTF-8" 0 \
	"$(q "SELECT count(*) FROM outbox WHERE last_error IS NOT NULL AND NOT pg_catalog.convert_to(last_error, 'UTF8') IS NOT NULL")"
echo "# left behind: $(q "SELECT format('%s bookings (%s cancelled), %s keys, %s events (%s delivered, %s parked, %s failed at least once)',
	(SELECT count(*) FROM bookings), (SELECT count(*) FROM bookings WHERE status = 'cancelled'),
	(SELECT count(*) FROM idempotency), (SELECT count(*) FROM outbox),
	(SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL), (SELECT count(*) FROM outbox WHERE parked_at IS NOT NULL),
	(SELECT count(*) FROM outbox WHERE attempts > 0))")"

"$PGBIN/dropdb" --force "$db"
check "the test database is dropped" 0 "$?"
