--
-- upgrade: okno 0.1.0 with data, ALTER EXTENSION okno UPDATE through every
-- version, and the result is the same schema as a fresh install of the
-- current version, with every row kept and okno_verify() empty
--
SELECT current_user AS superuser_name, current_database() AS test_db \gset
CREATE DATABASE regress_okno_upgrade;
CREATE DATABASE regress_okno_fresh;
CREATE DATABASE regress_okno_direct;
CREATE DATABASE regress_okno_v020;
CREATE DATABASE regress_okno_v030;

-- a description of everything okno owns, to compare two installs
\set ECHO none
\set describe 'SELECT string_agg(line, E''\\n'' ORDER BY line) FROM ( SELECT format(''column %s.%s %s %s %s %s'', c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS line FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE c.relnamespace = ''public''::regnamespace AND c.relkind IN (''r'', ''v'') UNION ALL SELECT format(''constraint %s %s %s'', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace = ''public''::regnamespace UNION ALL SELECT format(''index %s'', pg_get_indexdef(indexrelid)) FROM pg_index WHERE indrelid IN (SELECT oid FROM pg_class WHERE relnamespace = ''public''::regnamespace) UNION ALL SELECT format(''function %s(%s) %s %s %s %s %s %s %s'', p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.prosrc, p.prorows) FROM pg_proc p WHERE p.pronamespace = ''public''::regnamespace AND p.proname LIKE ''okno%%'' UNION ALL SELECT format(''view %s %s'', c.relname, pg_get_viewdef(c.oid)) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind = ''v'' UNION ALL SELECT format(''acl %s %s'', c.relname, c.relacl) FROM pg_class c WHERE c.relnamespace = ''public''::regnamespace AND c.relkind IN (''r'', ''v'', ''S'') UNION ALL SELECT format(''comment %s %s'', pg_describe_object(d.classoid, d.objoid, d.objsubid), d.description) FROM pg_description d JOIN pg_depend x ON x.classid = d.classoid AND x.objid = d.objoid AND x.deptype = ''e'' AND x.refobjid = (SELECT oid FROM pg_extension WHERE extname = ''okno'') UNION ALL SELECT format(''member %s'', pg_describe_object(classid, objid, objsubid)) FROM pg_depend WHERE deptype = ''e'' AND refobjid = (SELECT oid FROM pg_extension WHERE extname = ''okno'') UNION ALL SELECT format(''config %s'', extconfig::regclass[]) FROM pg_extension WHERE extname = ''okno'' ) s'
\set ECHO all

\c regress_okno_fresh
SET client_min_messages = warning;
CREATE EXTENSION okno CASCADE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
:describe \gset fresh_

-- and a fresh install of 0.2.0, to compare with 0.1.0 updated to 0.2.0
\c regress_okno_v020
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.2.0' CASCADE;
:describe \gset fresh020_

\c regress_okno_upgrade
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.1.0' CASCADE;
SELECT extversion FROM pg_extension WHERE extname = 'okno';
INSERT INTO actors (name) VALUES ('ann'), ('boris');
INSERT INTO resources (name) VALUES ('room');
-- 0.1.0's functions work with the new library before the update
SELECT okno_create_booking(1, 'u-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 4) AS i;
SELECT payload FROM okno_drain_once();
UPDATE bookings SET status = 'cancelled' WHERE id = 4;
SELECT (SELECT string_agg(format('%s/%s/%s/%s', id, resource_id, actor_id, status), ';' ORDER BY id) FROM bookings)
    || ' ' || (SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
    || ' ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at), ';' ORDER BY id) FROM outbox) AS rows_before \gset

ALTER EXTENSION okno UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'okno';
:describe \gset upgraded020_
SELECT :'upgraded020_string_agg' = :'fresh020_string_agg' AS same_as_fresh_020_install;

-- every row kept; the new columns at their defaults
SELECT (SELECT string_agg(format('%s/%s/%s/%s', id, resource_id, actor_id, status), ';' ORDER BY id) FROM bookings)
    || ' ' || (SELECT string_agg(format('%s/%s/%s', actor_id, request_key, response_body), ';' ORDER BY actor_id, request_key) FROM idempotency)
    || ' ' || (SELECT string_agg(format('%s/%s/%s/%s', id, kind, payload, delivered_at), ';' ORDER BY id) FROM outbox) = :'rows_before' AS rows_kept;
SELECT count(*) AS events, sum(attempts) AS attempts, count(last_error) AS errors, count(available_at) AS delayed, count(parked_at) AS parked FROM outbox;

-- 0.2.0 goes on from where 0.1.0 was, and adds its own kinds of data:
-- failures, a parked event, a cancellation
SELECT okno_create_booking(1, 'u-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS replayed_id;
SET okno.max_attempts = 2;
BEGIN;
SELECT payload, attempts FROM okno_drain(10);
SELECT attempts, parked_at IS NULL AS not_parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'first failure');
COMMIT;
SELECT attempts, parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}'), 'second failure');
SELECT okno_cancel_booking(1, 2) ->> 'status' AS cancelled;
SELECT kind, payload FROM okno_drain_once();
SELECT okno_create_booking(2, 'u-5', '{"resource_id":1,"starts_at":"2026-12-09T10:00:00Z","ends_at":"2026-12-09T11:00:00Z"}') ->> 'id' AS new_id;
SELECT pending, parked FROM okno_outbox_status;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset

-- on to the current version
ALTER EXTENSION okno UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset upgraded_
SELECT :'upgraded_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
-- (what differs, if anything)
SELECT 'only after the update: ' || l AS difference FROM regexp_split_to_table(:'upgraded_string_agg', E'\\n') AS l
EXCEPT SELECT 'only after the update: ' || regexp_split_to_table(:'fresh_string_agg', E'\\n')
UNION ALL
(SELECT 'only in a fresh install: ' || l FROM regexp_split_to_table(:'fresh_string_agg', E'\\n') AS l
 EXCEPT SELECT 'only in a fresh install: ' || regexp_split_to_table(:'upgraded_string_agg', E'\\n'))
ORDER BY 1;
SELECT length(:'fresh_string_agg') > 5000 AS description_is_substantial;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT * FROM okno_verify();
SELECT okno_requeue((SELECT id FROM outbox WHERE payload = '{"booking_id": 3}')) AS requeued;
SELECT payload FROM okno_drain(10);
SELECT keys_deleted, events_deleted FROM okno_purge('0 seconds', '0 seconds');
SELECT * FROM okno_verify();

-- an update straight from 0.1.0 to the current version, in one step
\c regress_okno_direct
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.1.0' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'd-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS id;
ALTER EXTENSION okno UPDATE;
:describe \gset direct_
SELECT :'direct_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT okno_create_booking(1, 'd-1', '{"resource_id":1,"starts_at":"2026-12-01T10:00:00Z","ends_at":"2026-12-01T11:00:00Z"}') ->> 'id' AS replayed_id;
SELECT * FROM okno_verify();

-- 0.3.0 with data, to 0.4.0 (the drain hint) and on: same as a fresh
-- install, and the first drain after the update writes the hint
\c regress_okno_v030
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION '0.3.0' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'v3-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 3) AS i;
-- the new library with 0.3.0's objects: no hint to read or write
SELECT payload FROM okno_drain(1);
ALTER EXTENSION okno UPDATE TO '0.4.0';
SELECT pg_sequence_last_value('okno_drain_hint') IS NULL AS no_hint_yet;
-- and on to the current version (0.4.1: the owner's privileges)
ALTER EXTENSION okno UPDATE;
:describe \gset v030_
SELECT :'v030_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
\c regress_okno_v030
SELECT payload FROM okno_drain(1);
SELECT pg_sequence_last_value('okno_drain_hint') IS NOT NULL AS hint_written;
SELECT payload FROM okno_drain(10);
SELECT * FROM okno_verify();

-- from 0.2.0, 0.4.0 and 0.4.1 too, with what 0.5.0 orders: a booking whose
-- booking_created is parked and whose cancellation is pending.  After the
-- update the cancellation is held back; requeueing releases both in order.
\c :test_db :superuser_name
CREATE DATABASE regress_okno_from_v020;
CREATE DATABASE regress_okno_from_v040;
CREATE DATABASE regress_okno_from_v041;
\c regress_okno_from_v020
\set from_version 0.2.0
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
\c regress_okno_from_v040
\set from_version 0.4.0
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
\c regress_okno_from_v041
\set from_version 0.4.1
SET client_min_messages = warning;
CREATE EXTENSION okno VERSION :'from_version' CASCADE;
-- a relay granted by column, as 0.4's docs/PRIVILEGES.md has it
CREATE ROLE regress_okno_v041_relay;
GRANT EXECUTE ON FUNCTION okno_record_failure(uuid, text), okno_drain(integer) TO regress_okno_v041_relay;
GRANT SELECT (id, kind, payload, created_at, delivered_at, attempts, last_error, available_at, parked_at),
      UPDATE (delivered_at, attempts, last_error, available_at, parked_at)
   ON outbox TO regress_okno_v041_relay;
INSERT INTO actors (name) VALUES ('ann');
INSERT INTO resources (name) VALUES ('room');
SELECT okno_create_booking(1, 'f-' || i, format('{"resource_id":1,"starts_at":"2026-12-0%sT10:00:00Z","ends_at":"2026-12-0%sT11:00:00Z"}', i, i)::jsonb) ->> 'id' AS id
  FROM generate_series(1, 2) AS i;
SET okno.max_attempts = 1;
BEGIN;
SELECT count(*) AS drained FROM okno_drain(10);
SELECT parked_at IS NOT NULL AS parked FROM okno_record_failure((SELECT id FROM outbox WHERE payload = '{"booking_id": 1}'), 'recipient down');
COMMIT;
RESET okno.max_attempts;
SELECT okno_cancel_booking(1, 1) ->> 'status' AS cancelled;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) AS events_before FROM outbox \gset
ALTER EXTENSION okno UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'okno') AS current_version FROM pg_extension WHERE extname = 'okno';
:describe \gset from_
SELECT :'from_string_agg' = :'fresh_string_agg' AS same_as_fresh_install;
SELECT string_agg(format('%s/%s/%s/%s/%s/%s', id, kind, payload, delivered_at, attempts, parked_at), ';' ORDER BY id) = :'events_before' AS events_kept FROM outbox;
SELECT pending, parked, held_back FROM okno_outbox_status;
SELECT kind, payload FROM okno_drain(10);
SELECT okno_requeue_parked() AS requeued;
SELECT kind, payload FROM okno_drain(10);
SELECT kind, payload FROM okno_drain(10);
SELECT * FROM okno_verify();
-- subscribers after the update: the events from before it (no created_xid)
-- are none of theirs, the new ones are
SELECT count(*) AS events_without_transaction FROM outbox WHERE created_xid IS NULL;
SELECT okno_subscribe('journal') AS subscribed;
SELECT okno_create_booking(1, 'f-3', '{"resource_id":1,"starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}') ->> 'id' AS id;
-- the relay granted by column records failures as before (okno_record_failure
-- returns the row, created_xid included)
BEGIN;
SET LOCAL ROLE regress_okno_v041_relay;
SELECT attempts FROM okno_record_failure((SELECT event_id FROM okno_drain(1)), 'down');
ROLLBACK;
SELECT kind, payload FROM okno_drain(10, 'journal');
SELECT okno_purge('0 seconds', '0 seconds');
SELECT kind, payload FROM okno_drain(10);
SELECT okno_purge('0 seconds', '0 seconds');
SELECT * FROM okno_verify();

\c :test_db :superuser_name
DROP DATABASE regress_okno_from_v020;
DROP DATABASE regress_okno_from_v040;
DROP DATABASE regress_okno_from_v041;
DROP ROLE regress_okno_v041_relay;
DROP DATABASE regress_okno_upgrade;
DROP DATABASE regress_okno_fresh;
DROP DATABASE regress_okno_direct;
DROP DATABASE regress_okno_v020;
DROP DATABASE regress_okno_v030;
