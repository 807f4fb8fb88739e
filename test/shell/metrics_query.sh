#!/usr/bin/env bash
# metrics_query: the query of docs/metrics/postgres_exporter.yaml runs
# against okno's okno_outbox_status and gives the numbers the view has, as
# float-able values with no NULLs (postgres_exporter cannot read NULL or an
# interval); a role with only the file's grants runs both queries.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
cd "$(dirname "$0")/../.." || exit 1
. relay/testlib.sh

db=okno_metrics_query
new_db "$db"

# a query of the file: the lines indented under "query: |" of the block
# named $1, unindented
query_of() {
	awk -v key="$1:" '
		/^[^ #]/ { inblock = ($1 == key); inquery = 0; next }
		inblock && /^  query: \|$/ { inquery = 1; next }
		inblock && inquery && /^  [^ ]/ { inquery = 0 }
		inblock && inquery && sub(/^    /, "") { print }
	' docs/metrics/postgres_exporter.yaml
}
query=$(query_of okno_outbox)
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

# okno_subscribers (0.5.0): one row per subscriber, labelled by its name,
# the default one first
squery=$(query_of okno_subscriber)
check_true "the queries file has a query for the subscribers" test -n "$squery"
q "$db" "SELECT okno_subscribe('journal')" >/dev/null
book "$db" 10 2
got=$(q "$db" "$squery")
check "the default subscriber and journal, by name; journal's two events not copied yet" \
	"default|5|3|1|1|1|0
journal|2|2|0|0|0|2" "$(echo "$got" | cut -d'|' -f1-7)"
q "$db" "SELECT count(*) FROM okno_drain(1, 'journal')" >/dev/null
got=$(q "$db" "$squery")
check "after a drain of one: journal has one pending, copied" "journal|1|1|0|0|0|0" \
	"$(echo "$got" | sed -n 2p | cut -d'|' -f1-7)"
check_true "every value a number but the name, none NULL" \
	python3 -c "import sys; rows = [r.split('|') for r in '''$got'''.splitlines()]; [float(x) for r in rows for x in r[1:]]; sys.exit(0 if all(len(r) == 8 and r[7] != '' for r in rows) else 1)"

# the exporter's role, with exactly the grants the file's comment gives
# (run by this cluster's superuser), reads both; without the outbox's
# columns it may not (0.6.0: the views read the tables as their reader)
grants=$(sed -n 's/^#   \(GRANT .*\)$/\1/p; s/^#      \(ON .*\)$/\1/p' docs/metrics/postgres_exporter.yaml |
	sed 's/postgres_exporter/okno_metrics_exporter/' | tr '\n' ' ' | sed 's/; GRANT/;\nGRANT/g; s/ ON public.outbox/ ON public.outbox/')
"$PGBIN/psql" -X -q -c "DROP ROLE IF EXISTS okno_metrics_exporter" -c "CREATE ROLE okno_metrics_exporter" >/dev/null 2>&1
q "$db" "$grants" >/dev/null 2>"$work/grants.err"
check "the file's grants apply" "" "$(cat "$work/grants.err")"
as_exporter() { q "$db" "SET ROLE okno_metrics_exporter; $1" 2>&1; }
# (the ages aside: they grow between the two reads)
check "with them, the exporter's role reads the outbox's counts" "$(q "$db" "$query" | cut -d'|' -f1-5,8)" \
	"$(as_exporter "$query" | cut -d'|' -f1-5,8)"
check "... and every subscriber's" "$(q "$db" "$squery" | cut -d'|' -f1-7)" "$(as_exporter "$squery" | cut -d'|' -f1-7)"
q "$db" "REVOKE SELECT ON public.outbox FROM okno_metrics_exporter" >/dev/null
check "without SELECT on the outbox's columns it may not" "1" "$(as_exporter "$query" | grep -c 'permission denied for table outbox')"
q "$db" "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM okno_metrics_exporter; REVOKE USAGE ON SCHEMA public FROM okno_metrics_exporter" >/dev/null
"$PGBIN/psql" -X -q -c "DROP ROLE okno_metrics_exporter" >/dev/null 2>&1
