#!/usr/bin/env bash
# metrics_query: the query of docs/metrics/postgres_exporter.yaml runs
# against okno's okno_outbox_status and gives the numbers the view has, as
# float-able values with no NULLs (postgres_exporter cannot read NULL or an
# interval).
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_metrics_query
new_db "$db"

# the query: the lines indented under "query: |", unindented
query=$(sed -n '/^  query: |$/,/^  [^ ]/p' docs/metrics/postgres_exporter.yaml |
	sed -n 's/^    //p')
check_true "the queries file has a query" test -n "$query"

got=$(q "$db" "$query")
check "on an empty outbox: every gauge 0, none NULL" "0|0|0|0|0|0|0|0" "$got"

book "$db" 1 3
q "$db" "UPDATE outbox SET parked_at = now(), attempts = 10, last_error = 'x' WHERE id = (SELECT id FROM outbox ORDER BY id LIMIT 1)" >/dev/null
q "$db" "UPDATE outbox SET available_at = now() + interval '1 hour', attempts = 1, last_error = 'x' WHERE id = (SELECT id FROM outbox ORDER BY id DESC LIMIT 1)" >/dev/null
got=$(q "$db" "$query")
check "pending, due now, delayed, parked as the view counts them" "2|1|1|1" "$(echo "$got" | cut -d'|' -f1-4)"
check_true "the ages are seconds, not intervals" \
	python3 -c "import sys; v = '$got'.split('|'); [float(x) for x in v]; sys.exit(0 if float(v[5]) >= 0 and float(v[6]) >= 0 else 1)"
# the parked event is booking 1's booking_created: its cancellation waits
q "$db" "SELECT okno_cancel_booking(1, 1)" >/dev/null
got=$(q "$db" "$query")
check "a cancellation behind its parked booking_created is held back" "3|1|1|1|1" \
	"$(echo "$got" | cut -d'|' -f1-4,8)"
