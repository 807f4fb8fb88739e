#!/usr/bin/env bash
# dump_restore: a plain pg_dump -Fc of a database with okno, restored with
# pg_restore by the database owner (not a superuser) into an empty
# database: no error, and everything comes back.  The application's tables
# are its own, with a column, a trigger, an index and a grant of the
# application's on each of the five; pg_dump dumps them as the tables they
# are and okno's own tables as extension data.  The restored database goes
# on as before: replays return the same cards, new bookings and actors get
# ids past the restored ones, the drain hands out exactly the events that
# were due (not the parked or the delayed ones), each subscriber goes on
# from where it was (its parked events parked, the events it had not copied
# yet delivered once), and okno_verify() stays empty.
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

owner=okno_dump_owner
reader=okno_dump_reader
cleanup() {
	"$PGBIN/dropdb" --if-exists "$src" 2>/dev/null
	"$PGBIN/dropdb" --if-exists "$dst" 2>/dev/null
	"$PGBIN/psql" -X -q -c "DROP ROLE IF EXISTS $reader" -c "DROP ROLE IF EXISTS $owner" 2>/dev/null
}
trap 'cleanup; rm -rf "$work"' EXIT
cleanup
"$PGBIN/psql" -X -q -c "CREATE ROLE $owner LOGIN NOSUPERUSER" -c "CREATE ROLE $reader" >/dev/null
"$PGBIN/createdb" -O "$owner" "$src"

payload() { echo "{\"resource_id\":$1,\"starts_at\":\"2026-12-0$2T10:00:00+03:00\",\"ends_at\":\"2026-12-0$2T11:00:00+03:00\"}"; }

# as the database owner: okno, the tables, and the application's own on
# each of the five (a column with a default, a trigger that writes it, an
# index on it, a grant to another role)
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -U "$owner" -d "$src" >/dev/null 2>&1 <<SQL
CREATE EXTENSION okno CASCADE;
DO \$\$ BEGIN PERFORM okno_create_tables(); END \$\$;
CREATE FUNCTION app_stamp() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
    NEW.app_note := NEW.app_note || ' stamped';
    RETURN NEW;
END \$\$;
DO \$\$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['actors', 'resources', 'bookings', 'idempotency', 'outbox'] LOOP
        EXECUTE format('ALTER TABLE %I ADD COLUMN app_note text DEFAULT %L', t, 'by the application');
        EXECUTE format('CREATE TRIGGER app_stamp BEFORE INSERT ON %I FOR EACH ROW EXECUTE FUNCTION app_stamp()', t);
        EXECUTE format('CREATE INDEX %I ON %I (app_note)', t || '_app_note', t);
        EXECUTE format('GRANT SELECT ON %I TO $reader', t);
    END LOOP;
END
\$\$;
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room'), ('hall');
SELECT okno_subscribe('journal'), okno_subscribe('notify');
SELECT okno_create_booking(1, 'k1', '$(payload 1 1)');
SELECT okno_create_booking(1, 'k2', '$(payload 1 2)');
SELECT okno_create_booking(2, 'k1', '$(payload 2 1)');
SELECT okno_create_booking(2, 'k3', '$(payload 2 3)');
SELECT * FROM okno_drain_once();
-- journal copies the four booking_created events and parks booking 3's;
-- notify copies nothing
SELECT count(*) FROM okno_drain(10, 'journal');
SET okno.max_attempts = 1;
SELECT attempts FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'journal refused', 'journal');
RESET okno.max_attempts;
-- booking 3's event parked, booking 4's delayed by an hour
SET okno.max_attempts = 1;
SELECT attempts FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'gave up');
SET okno.max_attempts = 10;
SET okno.retry_base = '2h';
SELECT attempts FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 4}'), 'try later');
-- booking 3's cancellation, held back behind its parked booking_created;
-- booking 1's cancellation parked and discarded
SELECT okno_cancel_booking(2, 3);
SELECT okno_cancel_booking(1, 1);
SET okno.max_attempts = 1;
SELECT attempts FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}' AND kind = 'booking_cancelled'), 'refused');
SELECT okno_discard((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}' AND kind = 'booking_cancelled'));
-- an operation's key (0.7.0), its handler counting its runs, and the
-- tombstone of an expired booking key
CREATE TABLE app_runs (n serial PRIMARY KEY);
CREATE FUNCTION app_handler(r jsonb) RETURNS jsonb LANGUAGE sql AS \$\$
  INSERT INTO app_runs DEFAULT VALUES RETURNING jsonb_build_object('run', n, 'request', r)
\$\$;
SELECT okno_idempotent('app.op', 'tenant', 'op-1', '{"b": 1.50, "a": [true]}', 'app_handler(jsonb)');
INSERT INTO okno_key_tombstone VALUES (sha256(convert_to(':gone:1', 'UTF8')), now());
-- a purge that deletes nothing but records its horizon
SELECT * FROM okno_purge('3650 days', '3650 days');
SQL

check "the source database has 4 bookings, 4 keys and 6 events: 1 delivered, 1 discarded, 1 parked, 1 delayed, 1 due, 1 held back" "4/4/6/2/1/1/1/1/1" \
	"$(q "$src" "SELECT format('%s/%s/%s/%s/%s/%s/%s/%s/%s', (SELECT count(*) FROM bookings), (SELECT count(*) FROM idempotency), (SELECT count(*) FROM outbox), (SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL), (SELECT count(*) FROM okno_discarded), parked, delayed, due_now, held_back) FROM okno_outbox_status")"

snapshot="SELECT (SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, resource_id, actor_id, starts_at, ends_at, status), ';' ORDER BY id) FROM bookings)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s', actor_id, request_key, fingerprint, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, last_error, available_at, parked_at), ';' ORDER BY id) FROM outbox)
  || ' | ' || (SELECT string_agg(format('%s/%s', keys_purged_before, events_purged_before), ';') FROM okno_purge_horizon)
  || ' | ' || (SELECT string_agg(format('%s/%s', id, name), ';' ORDER BY id) FROM actors)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s/%s/%s', event_id, subscriber, kind, payload, attempts, last_error, parked_at, discarded_at, discarded_by), ';') FROM okno_discarded)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s/%s/%s', name, subscribed_at, since, copied_snapshot, copied_system, copied_at), ';' ORDER BY name) FROM okno_subscriber)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s/%s/%s', subscriber, event_id, order_key, first, delivered_at, attempts, last_error, available_at, parked_at), ';' ORDER BY subscriber, event_id) FROM okno_delivery)
  || ' | ' || (SELECT string_agg(format('%s/%s', id, created_xid), ';' ORDER BY id) FROM outbox)
  || ' | ' || (SELECT string_agg(format('%s/%s/%s/%s/%s/%s', operation, scope, request_key, fingerprint, response, created_at), ';' ORDER BY operation, scope, request_key) FROM okno_key)
  || ' | ' || (SELECT string_agg(format('%s/%s', key_hash, expired_at), ';' ORDER BY key_hash) FROM okno_key_tombstone)
  || ' | ' || (SELECT string_agg(t::text, ';' ORDER BY t::text) FROM (
       SELECT 'actors ' || app_note FROM actors UNION ALL SELECT 'resources ' || app_note FROM resources
       UNION ALL SELECT 'bookings ' || app_note FROM bookings UNION ALL SELECT 'idempotency ' || app_note FROM idempotency
       UNION ALL SELECT 'outbox ' || app_note FROM outbox) AS t(t))"
# the application's tables as objects: owner, membership, columns with
# defaults, triggers, indexes, grants
schema="SELECT string_agg(l, ';' ORDER BY l) FROM (
  SELECT format('%s owner %s member %s', c.relname, pg_get_userbyid(c.relowner),
         EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')) AS l
    FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S') AND c.relname !~ '^okno_'
  UNION ALL SELECT format('%s.%s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname !~ '^okno_' AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT format('trigger %s %s %s', tgrelid::regclass, tgname, tgenabled) FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT format('index %s', pg_get_indexdef(indexrelid)) FROM pg_index
   WHERE indrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relname !~ '^okno_')
  UNION ALL SELECT format('acl %s %s', c.relname, c.relacl) FROM pg_class c
   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S') AND c.relname !~ '^okno_') AS s"
# the rows of the application's five tables, every column
rows="SELECT md5(concat_ws('|', (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM actors t),
  (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM resources t), (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM bookings t),
  (SELECT string_agg(t::text, ',' ORDER BY t.actor_id, t.request_key) FROM idempotency t), (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM outbox t)))"

check "the application's trigger ran as the rows were written, okno's included" "5" \
	"$(q "$src" "SELECT count(DISTINCT t) FROM (SELECT 'actors' FROM actors WHERE app_note LIKE '% stamped' UNION ALL SELECT 'resources' FROM resources WHERE app_note LIKE '% stamped' UNION ALL SELECT 'bookings' FROM bookings WHERE app_note LIKE '% stamped' UNION ALL SELECT 'idempotency' FROM idempotency WHERE app_note LIKE '% stamped' UNION ALL SELECT 'outbox' FROM outbox WHERE app_note LIKE '% stamped') AS s(t)")"

# a plain dump, and a restore as the database owner into an empty database
"$PGBIN/pg_dump" -Fc -d "$src" -f "$work/okno.dump"
check "pg_dump exits 0" 0 $?
"$PGBIN/createdb" -O "$owner" "$dst"
"$PGBIN/pg_restore" -U "$owner" -d "$dst" "$work/okno.dump" 2>"$work/restore.err"
check "pg_restore, as the database owner, exits 0" 0 $?
check "pg_restore prints nothing" "" "$(cat "$work/restore.err")"
check "the application's tables come back as they were: the owner's, no extension members, every column, default, trigger, index and grant" \
	"$(q "$src" "$schema")" "$(q "$dst" "$schema")"
check "the restored okno is the owner's" "$owner" "$(q "$dst" "SELECT pg_get_userbyid(extowner) FROM pg_extension WHERE extname = 'okno'")"

check "bookings, keys, events (with their attempts, errors, delays and parking), actors, the purge horizon, the discard record, the subscribers with their delivery states, operations' keys and tombstones are restored as they were" \
	"$(q "$src" "$snapshot")" "$(q "$dst" "$snapshot")"
check "the restored extension is the installed version of okno" \
	"$(q "$src" "SELECT extversion FROM pg_extension WHERE extname = 'okno'")" \
	"$(q "$dst" "SELECT extversion FROM pg_extension WHERE extname = 'okno'")"

check "a replay in the restored database returns the original card" \
	"$(q "$src" "SELECT okno_create_booking(1, 'k1', '$(payload 1 1)')")" \
	"$(q "$dst" "SELECT okno_create_booking(1, 'k1', '$(payload 1 1)')")"
check "other data under a restored key is key_reused" "OKB04" \
	"$("$PGBIN/psql" -X -q -At -d "$dst" -c "SELECT okno_create_booking(1, 'k1', '$(payload 2 5)')" 2>&1 >/dev/null | grep -c 'already used' | sed 's/^1$/OKB04/')"
check "a new booking gets the next id, not a restored one" "5" \
	"$(q "$dst" "SELECT okno_create_booking(2, 'k4', '$(payload 1 3)') ->> 'id'")"
check "a restored booking still blocks its slot" "1" \
	"$("$PGBIN/psql" -X -q -At -d "$dst" -c "SELECT okno_create_booking(2, 'k9', '$(payload 1 2)')" 2>&1 >/dev/null | grep -c 'already booked')"
check "a new actor gets the next id" "3" \
	"$(q "$dst" "INSERT INTO actors (name) VALUES ('clara') RETURNING id")"
check "okno_verify() is empty in the restored database" "0" "$(q "$dst" "SELECT count(*) FROM okno_verify()")"
check "the operation's key replays its response in the restored database, the handler not run" \
	"$(q "$src" "SELECT okno_idempotent('app.op', 'tenant', 'op-1', '{\"a\": [true], \"b\": 1.5}', 'app_handler(jsonb)')") 1" \
	"$(q "$dst" "SELECT okno_idempotent('app.op', 'tenant', 'op-1', '{\"a\": [true], \"b\": 1.5}', 'app_handler(jsonb)')::text || ' ' || (SELECT count(*) FROM app_runs)")"
check "the restored tombstone answers the expired key (key_expired)" "1" \
	"$("$PGBIN/psql" -X -q -At -d "$dst" -c "SELECT okno_create_booking(1, 'gone', '$(payload 1 7)')" 2>&1 >/dev/null | grep -c 'has expired')"
check "the drain hands out the due event, then the new one; not the parked, the delayed or the held-back one" \
	'{"booking_id": 2};{"booking_id": 5}' \
	"$(for i in 1 2 3 4; do q "$dst" "SELECT payload FROM okno_drain_once()"; done | paste -sd ';')"
check "the parked event is still parked, and okno_requeue makes it due" '{"booking_id": 3}' \
	"$(q "$dst" "SELECT okno_requeue(id) FROM outbox WHERE parked_at IS NOT NULL" >/dev/null; q "$dst" "SELECT payload FROM okno_drain_once()")"
check "then booking 3's cancellation, held back until now" 'booking_cancelled {"booking_id": 3}' \
	"$(q "$dst" "SELECT kind || ' ' || payload FROM okno_drain_once()")"
check "okno_verify() is still empty" "0" "$(q "$dst" "SELECT count(*) FROM okno_verify()")"

# the subscribers (restored into the same cluster: their snapshots hold)
check "journal gets the cancellation it had not copied and the new booking; not its parked event or the cancellation held back behind it" \
	'booking_cancelled {"booking_id": 1};booking_created {"booking_id": 5}' \
	"$(q "$dst" "SELECT string_agg(kind || ' ' || payload, ';' ORDER BY event_id) FROM okno_drain(100, 'journal')")"
check "journal then has nothing more, and its parked event is still parked" "0/1" \
	"$(q "$dst" "SELECT (SELECT count(*) FROM okno_drain(100, 'journal')) || '/' || parked FROM okno_subscribers WHERE subscriber = 'journal'")"
check "notify, which had copied nothing, gets every event since it subscribed, each booking's in order" \
	'booking_created {"booking_id": 1};booking_created {"booking_id": 2};booking_created {"booking_id": 3};booking_created {"booking_id": 4};booking_created {"booking_id": 5}|booking_cancelled {"booking_id": 1};booking_cancelled {"booking_id": 3}|' \
	"$(for i in 1 2 3; do q "$dst" "SELECT string_agg(kind || ' ' || payload, ';' ORDER BY kind DESC, payload::text) FROM okno_drain(100, 'notify')"; done | paste -sd '|')"
check "okno_verify() is empty after the subscribers' drains" "0" "$(q "$dst" "SELECT count(*) FROM okno_verify()")"

# DROP EXTENSION leaves the restored tables as they are
before="$(q "$dst" "$schema") $(q "$dst" "$rows")"
q "$dst" "DROP EXTENSION okno" >/dev/null
check "DROP EXTENSION okno in the restored database leaves the application's tables and rows" \
	"$before" "$(q "$dst" "$schema") $(q "$dst" "$rows")"
