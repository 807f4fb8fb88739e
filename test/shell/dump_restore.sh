#!/usr/bin/env bash
# dump_restore: okno's rows survive pg_dump / pg_restore into a fresh
# database, and the restored database goes on as before: replays return the
# same cards, new bookings and actors get ids past the restored ones, and
# the drain hands out exactly the events that were still pending.
#
# Runs against the throwaway cluster of tools/run (PGHOST, PGPORT, PGUSER);
# prints one "ok - ..." or "not ok - ..." line per check.
set -u
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
src=okno_dump_src
dst=okno_dump_dst
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

q() {	# q DB SQL: one value
	"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"
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

"$PGBIN/dropdb" --if-exists "$src" 2>/dev/null
"$PGBIN/dropdb" --if-exists "$dst" 2>/dev/null
"$PGBIN/createdb" "$src"

payload() { echo "{\"resource_id\":$1,\"starts_at\":\"2026-12-0$2T10:00:00+03:00\",\"ends_at\":\"2026-12-0$2T11:00:00+03:00\"}"; }

"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$src" >/dev/null 2>&1 <<SQL
CREATE EXTENSION okno CASCADE;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room'), ('hall');
SELECT okno_create_booking(1, 'k1', '$(payload 1 1)');
SELECT okno_create_booking(1, 'k2', '$(payload 1 2)');
SELECT okno_create_booking(2, 'k1', '$(payload 2 1)');
SELECT * FROM okno_drain_once();
SQL

check "the source database has 3 bookings, 3 keys and 3 events, 1 delivered" "3/3/3/1" \
	"$(q "$src" "SELECT format('%s/%s/%s/%s', (SELECT count(*) FROM bookings), (SELECT count(*) FROM idempotency), (SELECT count(*) FROM outbox), (SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL))")"

snapshot="SELECT (SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, resource_id, actor_id, starts_at, ends_at, status), ';' ORDER BY id) FROM bookings)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s', actor_id, request_key, fingerprint, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at IS NULL), ';' ORDER BY id) FROM outbox)
  || ' | ' || (SELECT string_agg(format('%s/%s', id, name), ';' ORDER BY id) FROM actors)"

"$PGBIN/pg_dump" -Fc -d "$src" -f "$work/okno.dump"
check "pg_dump exits 0" 0 $?
"$PGBIN/createdb" "$dst"
"$PGBIN/pg_restore" -d "$dst" "$work/okno.dump" 2>"$work/restore.err"
check "pg_restore exits 0" 0 $?
check "pg_restore prints nothing" "" "$(cat "$work/restore.err")"

check "bookings, keys, events and actors are restored as they were" \
	"$(q "$src" "$snapshot")" "$(q "$dst" "$snapshot")"
check "the restored extension is the installed version of okno" \
	"$(q "$src" "SELECT extversion FROM pg_extension WHERE extname = 'okno'")" \
	"$(q "$dst" "SELECT extversion FROM pg_extension WHERE extname = 'okno'")"

check "a replay in the restored database returns the original card" \
	"$(q "$src" "SELECT okno_create_booking(1, 'k1', '$(payload 1 1)')")" \
	"$(q "$dst" "SELECT okno_create_booking(1, 'k1', '$(payload 1 1)')")"
check "other data under a restored key is key_reused" "OKB04" \
	"$("$PGBIN/psql" -X -q -At -d "$dst" -c "SELECT okno_create_booking(1, 'k1', '$(payload 2 5)')" 2>&1 >/dev/null | grep -c 'already used' | sed 's/^1$/OKB04/')"
check "a new booking gets the next id, not a restored one" "4" \
	"$(q "$dst" "SELECT okno_create_booking(2, 'k3', '$(payload 1 3)') ->> 'id'")"
check "a restored booking still blocks its slot" "1" \
	"$("$PGBIN/psql" -X -q -At -d "$dst" -c "SELECT okno_create_booking(2, 'k9', '$(payload 1 2)')" 2>&1 >/dev/null | grep -c 'already booked')"
check "a new actor gets the next id" "3" \
	"$(q "$dst" "INSERT INTO actors (name) VALUES ('clara') RETURNING id")"
check "the drain hands out the events still pending at the dump, then the new one" \
	'{"booking_id": 2};{"booking_id": 3};{"booking_id": 4}' \
	"$(for i in 1 2 3 4; do q "$dst" "SELECT payload FROM okno_drain_once()"; done | paste -sd ';')"

"$PGBIN/dropdb" "$src"
"$PGBIN/dropdb" "$dst"
